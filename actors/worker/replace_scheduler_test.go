package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
)

// overlap cancel_other (DESIGN §8.4), with a real scheduler and two
// workers: a manual run asking while the slot's run waits on its context
// replaces it. The running handler's context is cancelled at that instant
// with a cause naming the reason replaced, the worker reports nothing more
// for it (no failure logged), and the new run's handler runs and completes.
func TestCancelOtherStopsTheRunningHandler(t *testing.T) {
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clk := clock.NewVirtual(t0)
	var logs syncBuffer
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: time.Second, Workers: 2,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		seen   []string
		causes []error
	)
	h := worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		mu.Lock()
		seen = append(seen, fmt.Sprintf("%s run %d starts", clk.Now().Sub(t0), r.Number))
		mu.Unlock()
		if r.Trigger == events.TriggerManual {
			return nil, clock.Sleep(ctx, clk, 2*time.Second)
		}
		_ = clock.Sleep(ctx, clk, 24*time.Hour) // waits for its context
		cause := context.Cause(ctx)
		mu.Lock()
		causes = append(causes, cause)
		seen = append(seen, fmt.Sprintf("%s run %d returns: %v", clk.Now().Sub(t0), r.Number, cause))
		mu.Unlock()
		return nil, cause
	})
	if err := s.Register("waits", h); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s.Stop(ctx)
	}()
	task, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: "replaced", Owner: "o", Kind: "waits",
		Interval: 10 * time.Minute, Timebox: 5 * time.Minute, FirstRun: t0.Add(time.Second), Overlap: events.OverlapCancelOther})
	if err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(5 * time.Second))
	if _, err := s.Trigger(context.Background(), task.ID); err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(time.Minute))

	mu.Lock()
	got := slices.Clone(seen)
	mu.Unlock()
	// Run 2's start and run 1's return happen at the same instant, on two
	// goroutines: in either order.
	slices.Sort(got)
	want := []string{
		"1s run 1 starts",
		"5s run 1 returns: worker: forced to end: replaced",
		"5s run 2 starts",
	}
	if !slices.Equal(got, want) {
		t.Errorf("handlers:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, c := range causes {
		var fe *worker.ForcedEndError
		if !errors.As(c, &fe) || fe.Reason != events.ForcedReplaced {
			t.Errorf("cause %v (%T): not a forced end for replaced", c, c)
		}
	}
	wantTrail := "0s TaskCreated\n1s RunEnqueued\n1s RunStarted\n5s RunEnqueued\n5s RunForcedEnd\n5s RunStarted\n7s RunCompleted\n"
	if got := trail(t, st, task.ID); got != wantTrail {
		t.Errorf("stream:\n%s\nwant\n%s", got, wantTrail)
	}
	if l := logs.String(); l != "" {
		t.Errorf("a replaced run was logged as failing, or its report as failed:\n%s", l)
	}
}
