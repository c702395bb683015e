package scheduler_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
)

// TestStallIsOneRunWithTheMissedCount: a process frozen for 30 s (the
// virtual clock's Freeze: no timer fires meanwhile, then they fire late)
// records the stall as R8 records a downtime — on the first tick after it,
// decided at the instant it fires, one run carrying the intervals missed —
// not a run decided at a stale pre-stall instant followed by catch-ups
// dropped too_soon. The ticks after it go on a tick apart.
func TestStallIsOneRunWithTheMissedCount(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: time.Second, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register("quick", worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) {
		return nil, nil
	})); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer stopNow(s)
	task, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: "A", Owner: "o", Kind: "quick",
		Interval: 10 * time.Second, Tolerance: time.Second, FirstRun: t0.Add(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(21 * time.Second))
	if !clk.Freeze(30 * time.Second) { // 00:21 → 00:51
		t.Fatal(clk.Err())
	}
	clk.RunUntil(t0.Add(65 * time.Second))
	got := trail(t, st, task.ID)
	want := `00:00 TaskCreated
00:10 RunEnqueued 1 next=00:20 missed=0
00:10 RunStarted 1
00:10 RunCompleted 1 
00:20 RunEnqueued 2 next=00:30 missed=0
00:20 RunStarted 2
00:20 RunCompleted 2 
00:51 RunEnqueued 3 next=01:01 missed=2
00:51 RunStarted 3
00:51 RunCompleted 3 
01:01 RunEnqueued 4 next=01:11 missed=0
01:01 RunStarted 4
01:01 RunCompleted 4 
`
	if got != want {
		t.Fatalf("trail:\n%s\nwant:\n%s", got, want)
	}
}
