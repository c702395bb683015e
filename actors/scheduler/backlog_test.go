package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/events"
)

// TestBacklogBound: one worker held by a long run, and two due tasks on a
// 30 s tick. The queue never holds more than the tasks' bounds together
// (3 + 1, R18) however long the worker is held; once it is free, each task's
// next run is enqueued for its kept nextRun with the missed intervals and
// the reason backlog.
func TestBacklogBound(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: 30 * time.Second, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.Register("block", sleeper(clk, 10*time.Minute))
	s.Register("noop", sleeper(clk, 0))
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stopNow(s)
	if _, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: "blocker", Owner: "o", Kind: "block", Interval: time.Hour,
		Timebox: 20 * time.Minute, Priority: 9, FirstRun: t0.Add(30 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	a, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: "A", Owner: "o", Kind: "noop", Interval: 30 * time.Second,
		FirstRun: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: "B", Owner: "o", Kind: "noop", Interval: time.Minute,
		MaxWaiting: 1, FirstRun: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if a.MaxWaiting != events.DefaultMaxWaiting || b.MaxWaiting != 1 {
		t.Fatalf("bounds %d and %d, want 3 and 1", a.MaxWaiting, b.MaxWaiting)
	}
	// The blocker runs 00:30–10:30 on the only worker.
	peak := int64(0)
	for at := t0.Add(time.Minute); !at.After(t0.Add(10 * time.Minute)); at = at.Add(30 * time.Second) {
		clk.RunUntil(at)
		peak = max(peak, s.Stats().Queued)
		for _, id := range []struct {
			name  string
			task  scheduler.Task
			bound int
		}{{"A", a, 3}, {"B", b, 1}} {
			got, err := s.Task(ctx, id.task.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Waiting > id.bound {
				t.Fatalf("%s: %s has %d runs waiting, bound %d", mmss(at), id.name, got.Waiting, id.bound)
			}
		}
	}
	if peak != 4 {
		t.Fatalf("queue peaked at %d runs, want 3 + 1", peak)
	}
	clk.RunUntil(t0.Add(12 * time.Minute))
	ta, tb := trail(t, st, a.ID), trail(t, st, b.ID)
	// A: enqueued 01:00, 01:30, 02:00; held with nextRun 02:30 until the
	// worker frees at 10:30 and takes them (A1 starts, A2 and A3 are too
	// soon); the tick at 10:30 enqueues A4 for 02:30: 16 intervals missed.
	if !strings.Contains(ta, "02:00 RunEnqueued 3 next=02:30 missed=0\n10:30 RunStarted 1") ||
		!strings.Contains(ta, "10:30 RunEnqueued 4 next=11:00 missed=16") {
		t.Fatalf("A's trail:\n%s", ta)
	}
	if !strings.Contains(tb, "01:00 RunEnqueued 1 next=02:00 missed=0\n10:30 RunStarted 1") ||
		!strings.Contains(tb, "10:30 RunEnqueued 2 next=11:30 missed=8") {
		t.Fatalf("B's trail:\n%s", tb)
	}
	for name, id := range map[string]scheduler.Task{"A": a, "B": b} {
		recs, err := st.ReadStream(ctx, "task-"+id.ID.String(), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		reasons := map[int]string{}
		for _, r := range recs {
			if e, err := events.Decode(r); err == nil {
				if enq, ok := e.(events.RunEnqueued); ok {
					reasons[enq.Run] = enq.Reason
				}
			}
		}
		late := map[string]int{"A": 4, "B": 2}[name]
		for n, why := range reasons {
			if want := map[bool]string{true: events.EnqueueBacklog}[n == late]; why != want {
				t.Errorf("%s run %d enqueued with reason %q, want %q", name, n, why, want)
			}
		}
	}
}
