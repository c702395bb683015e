package scheduler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/events/embedded"
)

// boundedWave starts a scheduler on a virtual clock with one worker in the
// default queue, a 30 s tick, a "work" kind that takes 5 s, a "long" kind
// that takes 10 minutes, and at most maxActive task actors per queue
// besides pinned ones; queues are further queues and their limits.
func boundedWave(t *testing.T, maxActive int, queues map[string]int) (*clock.Virtual, *embedded.Store, *scheduler.Scheduler) {
	t.Helper()
	clk, st := clock.NewVirtual(t0), memStore(t)
	return clk, st, boundedWaveOn(t, st, clk, maxActive, queues)
}

// boundedWaveOn is boundedWave's scheduler on st and clk.
func boundedWaveOn(t *testing.T, st *embedded.Store, clk *clock.Virtual, maxActive int, queues map[string]int) *scheduler.Scheduler {
	t.Helper()
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: 30 * time.Second, Workers: 1, Queues: queues, MaxActiveTasks: maxActive})
	if err != nil {
		t.Fatal(err)
	}
	s.Register("work", sleeper(clk, 5*time.Second))
	s.Register("long", sleeper(clk, 10*time.Minute))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopNow(s) })
	return s
}

// hourly creates n hourly "work" tasks named prefix0… first due at first.
func hourly(t *testing.T, s *scheduler.Scheduler, prefix string, n int, first time.Time) []scheduler.Task {
	t.Helper()
	return hourlyIn(t, s, "", "work", prefix, n, first)
}

// hourlyIn creates n hourly tasks of kind in queue named prefix0… first due
// at first.
func hourlyIn(t *testing.T, s *scheduler.Scheduler, queue, kind, prefix string, n int, first time.Time) []scheduler.Task {
	t.Helper()
	var tasks []scheduler.Task
	for i := range n {
		task, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: fmt.Sprintf("%s%d", prefix, i), Owner: "o",
			Kind: kind, Queue: queue, Interval: time.Hour, FirstRun: first})
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, task)
	}
	return tasks
}

// peakActors runs clk second by second from from to to and returns the
// most task actors that lived at once.
func peakActors(clk *clock.Virtual, s *scheduler.Scheduler, from, to time.Time) int {
	peak := 0
	for at := from; !at.After(to); at = at.Add(time.Second) {
		clk.RunUntil(at)
		peak = max(peak, s.Stats().Actors)
	}
	return peak
}

// TestMaxActiveTasksHoldsAWaveBack: ten tasks fall due at one tick, but
// the scheduler may keep only three task actors. No more than three live
// at any time; the others wait in the index and are woken as actors
// leave, and each still decides at the instant of the tick it fell due at
// (R1: next run = that tick + the interval), however late it is woken and
// its decision recorded.
func TestMaxActiveTasksHoldsAWaveBack(t *testing.T) {
	clk, st, s := boundedWave(t, 3, nil)
	tasks := hourly(t, s, "t", 10, t0.Add(30*time.Second))
	peak := peakActors(clk, s, t0.Add(time.Second), t0.Add(2*time.Minute))
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
	clk, st, s := boundedWave(t, 2, nil)
	ctx := context.Background()
	tasks := hourly(t, s, "t", 7, t0.Add(30*time.Second))
	pinned := tasks[:2]
	for _, task := range pinned {
		for range 2 { // pinned once, counted once
			if _, err := s.TaskPID(ctx, task.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if peak := peakActors(clk, s, t0.Add(time.Second), t0.Add(2*time.Minute)); peak != 4 {
		t.Errorf("at most %d task actors lived at once, want 4 (two pinned, and the bound of two besides)", peak)
	}
	for _, task := range tasks {
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
	hourly(t, s, "u", 5, t0.Add(4*time.Minute))
	if peak := peakActors(clk, s, t0.Add(3*time.Minute+time.Second), t0.Add(6*time.Minute)); peak != 3 {
		t.Errorf("second wave: at most %d task actors lived at once, want 3 (one pinned, and the bound of two besides)", peak)
	}
}

// TestSlowQueueHoldsBackOnlyItsOwnTasks: queue "slow" runs one run at a
// time, ten minutes each. Three of its tasks and four of the default
// queue's fall due at one tick, with room for two task actors per queue.
// The slow queue's backlog keeps its two places for ten minutes, and
// holds back its third task; the default queue's tasks all run within the
// minute meanwhile. Every task, however late it is woken, decides at the
// instant of the tick it fell due at (R1).
func TestSlowQueueHoldsBackOnlyItsOwnTasks(t *testing.T) {
	clk, st, s := boundedWave(t, 2, map[string]int{"slow": 1})
	due := t0.Add(30 * time.Second)
	slow := hourlyIn(t, s, "slow", "long", "s", 3, due)
	fast := hourly(t, s, "f", 4, due)
	if peak := peakActors(clk, s, t0.Add(time.Second), t0.Add(2*time.Minute)); peak != 4 {
		t.Errorf("at most %d task actors lived at once, want 4 (two per queue)", peak)
	}
	for _, task := range fast {
		if got := trail(t, st, task.ID); !strings.Contains(got, "RunCompleted 1") {
			t.Errorf("%s, default queue, after two minutes:\n%swant its run completed (the slow queue's backlog must not hold it back)", task.Name, got)
		}
	}
	started := 0
	for _, task := range slow {
		if strings.Contains(trail(t, st, task.ID), "RunEnqueued 1") {
			started++
		}
	}
	if started != 2 {
		t.Errorf("%d slow tasks woken after two minutes, want 2 (the bound; the third held back)", started)
	}
	clk.RunUntil(t0.Add(35 * time.Minute))
	for _, task := range append(slow, fast...) {
		got := trail(t, st, task.ID)
		if want := " RunEnqueued 1 next=60:30 missed=0"; !strings.Contains(got, want) || !strings.Contains(got, "RunCompleted 1") {
			t.Errorf("%s:\n%swant its run enqueued for the 00:30 tick (%q), then completed", task.Name, got, want)
		}
	}
}

// TestAPinThatMakesRoomResumesTheWave: with room for two task actors, a
// wave of ten-minute tasks holds the rest back; pinning one of the two
// live actors (TaskPID) frees its place at once, and a held-back task is
// woken then, not at the next tick or when a run ends ten minutes later.
func TestAPinThatMakesRoomResumesTheWave(t *testing.T) {
	clk, st, s := boundedWave(t, 2, nil)
	tasks := hourlyIn(t, s, "", "long", "t", 4, t0.Add(30*time.Second))
	clk.RunUntil(t0.Add(40 * time.Second))
	if got := s.Stats().Actors; got != 2 {
		t.Fatalf("%d task actors after the tick, want 2 (the bound)", got)
	}
	var live *scheduler.Task // one whose actor lives: its run is enqueued
	for i := range tasks {
		if strings.Contains(trail(t, st, tasks[i].ID), "RunEnqueued 1") {
			live = &tasks[i]
			break
		}
	}
	if live == nil {
		t.Fatal("no task has a run after the tick")
	}
	if _, err := s.TaskPID(context.Background(), live.ID); err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(50 * time.Second)) // before the next tick
	if got := s.Stats().Actors; got != 3 {
		t.Errorf("%d task actors ten seconds after the pin, want 3 (the pinned one, and the bound of two besides)", got)
	}
}

// TestRecoveredRunsTakeTheirPlaces: with room for two task actors, two of
// three ten-minute tasks due at one tick are woken (one running, one
// waiting) and the third held back when the process dies. After the
// restart the two open runs have their actors again, and they take the
// two places: the third task stays held back at the first tick, as it
// was, instead of making three actors.
func TestRecoveredRunsTakeTheirPlaces(t *testing.T) {
	clk, st, s := boundedWave(t, 2, nil)
	hourlyIn(t, s, "", "long", "t", 3, t0.Add(30*time.Second))
	clk.RunUntil(t0.Add(40 * time.Second))
	if got := s.Stats().Actors; got != 2 {
		t.Fatalf("%d task actors after the tick, want 2 (the bound)", got)
	}
	stopNow(s) // the process "dies": the handler is abandoned, the runs stay open
	clk2 := clock.NewVirtual(clk.Now())
	s2 := boundedWaveOn(t, st, clk2, 2, nil)
	if got := s2.Stats().Actors; got != 2 {
		t.Fatalf("%d task actors after the restart, want 2 (the open runs')", got)
	}
	clk2.RunUntil(t0.Add(80 * time.Second)) // the first tick, at 01:10
	if got := s2.Stats().Actors; got != 2 {
		t.Errorf("%d task actors after the restart's first tick, want 2 (the bound, taken by the open runs)", got)
	}
}
