package scheduler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
)

// TestMaxActiveTasksHoldsAWaveBack: ten tasks fall due at one tick, but
// the scheduler may keep only three task actors. No more than three live
// at any time; the others wait in the index and are woken as actors
// leave, and each still decides at the instant of the tick it fell due at
// (R1: next run = that tick + the interval), however late it is woken and
// its decision recorded.
func TestMaxActiveTasksHoldsAWaveBack(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: 30 * time.Second, Workers: 1, MaxActiveTasks: 3})
	if err != nil {
		t.Fatal(err)
	}
	s.Register("work", sleeper(clk, 5*time.Second))
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stopNow(s)
	var tasks []scheduler.Task
	for i := range 10 {
		task, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: fmt.Sprintf("t%d", i), Owner: "o", Kind: "work",
			Interval: time.Hour, FirstRun: t0.Add(30 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, task)
	}
	peak := 0
	for at := t0.Add(time.Second); !at.After(t0.Add(2 * time.Minute)); at = at.Add(time.Second) {
		clk.RunUntil(at)
		peak = max(peak, s.Stats().Actors)
	}
	if peak != 3 {
		t.Errorf("at most %d task actors lived at once, want 3 (the bound, reached)", peak)
	}
	for _, task := range tasks {
		got := trail(t, st, task.ID)
		want := " RunEnqueued 1 next=60:30 missed=0" // recorded when woken
		if !strings.Contains(got, want) || !strings.Contains(got, "RunCompleted 1") {
			t.Errorf("%s:\n%swant its run enqueued for the 00:30 tick (%q), then completed", task.Name, got, want)
		}
	}
}

// TestPinnedActorsDoNotHoldAWaveBack: an embedder pins as many tasks as
// the bound allows actors (TaskPID); a wave of other tasks still runs,
// within the bound, and so do the pinned tasks' own runs. A deleted
// pinned task no longer counts as pinned.
func TestPinnedActorsDoNotHoldAWaveBack(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: 30 * time.Second, Workers: 1, MaxActiveTasks: 2})
	if err != nil {
		t.Fatal(err)
	}
	s.Register("work", sleeper(clk, 5*time.Second))
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stopNow(s)
	var pinned, wave []scheduler.Task
	for i := range 7 {
		task, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: fmt.Sprintf("t%d", i), Owner: "o", Kind: "work",
			Interval: time.Hour, FirstRun: t0.Add(30 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if i < 2 {
			if _, err := s.TaskPID(ctx, task.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := s.TaskPID(ctx, task.ID); err != nil { // pinned once, counted once
				t.Fatal(err)
			}
			pinned = append(pinned, task)
		} else {
			wave = append(wave, task)
		}
	}
	peak := 0
	for at := t0.Add(time.Second); !at.After(t0.Add(2 * time.Minute)); at = at.Add(time.Second) {
		clk.RunUntil(at)
		peak = max(peak, s.Stats().Actors)
	}
	if peak != 4 {
		t.Errorf("at most %d task actors lived at once, want 4 (two pinned, and the bound of two besides)", peak)
	}
	for _, task := range append(pinned, wave...) {
		if got := trail(t, st, task.ID); !strings.Contains(got, "RunCompleted 1") {
			t.Errorf("%s:\n%swant its first run completed", task.Name, got)
		}
	}
	if _, err := s.DeleteTask(ctx, pinned[0].ID); err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(3 * time.Minute))
	if got := s.Stats().Actors; got != 1 {
		t.Errorf("%d task actors after the wave and one pinned task deleted, want the other pinned one", got)
	}
	// A second wave: one pinned actor now, and the bound of two besides.
	for i := range 5 {
		if _, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: fmt.Sprintf("u%d", i), Owner: "o", Kind: "work",
			Interval: time.Hour, FirstRun: t0.Add(4 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	peak = 0
	for at := t0.Add(3*time.Minute + time.Second); !at.After(t0.Add(6 * time.Minute)); at = at.Add(time.Second) {
		clk.RunUntil(at)
		peak = max(peak, s.Stats().Actors)
	}
	if peak != 3 {
		t.Errorf("second wave: at most %d task actors lived at once, want 3 (one pinned, and the bound of two besides)", peak)
	}
}
