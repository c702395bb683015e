package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events/embedded"
)

// TestCleanStopLeavesASnapshotAtTheHead: busy tasks — runs running (cut
// off by the stop, as a drain timeout cuts them), runs waiting in the
// queue, tasks resting — are stopped cleanly three times; each time the
// snapshot the stop left must be usable whole: the next recovery reads no
// stream whole and gives every task the state the full fold gives. The
// tasks with an open run had an actor when the stop began: their actors
// hand their state over as they stop, before the last sweep.
func TestCleanStopLeavesASnapshotAtTheHead(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(t0)
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cfg := Config{Store: st, Tick: time.Second, Workers: 3}
	start := func() *Scheduler {
		c := cfg
		c.Clock = clk
		s, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Register("quick", worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) {
			return nil, nil
		})); err != nil {
			t.Fatal(err)
		}
		if err := s.Register("slow", worker.HandlerFunc(func(ctx context.Context, _ *worker.Run) (json.RawMessage, error) {
			return nil, clock.Sleep(ctx, clk, 40*time.Second)
		})); err != nil {
			t.Fatal(err)
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := start()
	for i := range 30 {
		kind, every := "quick", time.Second
		if i%3 == 0 { // these hold the workers: quick runs wait behind them
			kind, every = "slow", time.Minute
		}
		if _, _, err := s.CreateTask(ctx, TaskSpec{Name: fmt.Sprintf("t%02d", i), Owner: "o", Kind: kind, Interval: every,
			Timebox: every, FirstRun: t0.Add(time.Duration(1+i%5) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 3 {
		clk.RunUntil(clk.Now().Add(17 * time.Second))
		clk.Quiesce()
		s.mu.Lock()
		live := len(s.snap.live)
		s.mu.Unlock()
		if live == 0 {
			t.Fatalf("round %d: no task had an actor at the stop: the test stops nothing busy", round)
		}
		stopNowInternal(s)
		at := fmt.Sprintf("after clean stop %d (%d tasks with an actor)", round+1, live)
		fresh, err := New(Config{Store: st, Clock: clock.NewVirtual(time.Time{})})
		if err != nil {
			t.Fatal(err)
		}
		fresh.snap = newSnapshots(fresh.cfg)
		r, err := fresh.recoverFromSnapshot(ctx)
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		if r.readWhole != 0 {
			t.Errorf("%s: the recovery read %d streams whole, want 0", at, r.readWhole)
		}
		compareRecoveries(t, cfg, at)
		clk = clock.NewVirtual(clk.Now())
		s = start()
	}
	stopNowInternal(s)
}
