package schedulertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/scheduler/schedulertest"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
)

// A run waiting in the queue when its task is paused is dropped with that
// reason when a worker asks (R7); Runs shows it with its start left zero.
func TestRunsShowADrop(t *testing.T) {
	h := schedulertest.New(t, schedulertest.WithHandler("k", schedulertest.Script()),
		schedulertest.WithConfig(scheduler.Config{Tick: 10 * time.Second,
			PickupDelay: func(worker.QueuedRun) time.Duration { return 15 * time.Second }}))
	task := h.Create(scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "k", Interval: time.Minute})
	h.Advance(time.Minute) // enqueued at 01:00, taken at 01:15
	if _, err := h.Scheduler().PauseTask(context.Background(), task.ID); err != nil {
		t.Fatal(err)
	}
	if r := h.RequireRun(task.ID, 1); r.Outcome != "" {
		t.Fatalf("run 1 before its pick-up: outcome %q, want open", r.Outcome)
	}
	h.Advance(30 * time.Second)
	r := h.RequireRun(task.ID, 1)
	want := schedulertest.Run{Number: 1, RunID: r.RunID, Attempt: 1, Slot: t0(time.Minute), EnqueuedAt: t0(time.Minute),
		Outcome: worker.OutcomeDropped, Reason: events.DropPaused, EndedAt: t0(75 * time.Second)}
	if r != want {
		t.Fatalf("run 1:\n got %+v\nwant %+v", r, want)
	}
}

func t0(d time.Duration) time.Time { return schedulertest.DefaultStart.Add(d) }

// Advance returns only once a handler that does not wait on the clock has
// returned and its outcome is recorded, however long it takes in real time.
func TestAdvanceWaitsForHandlers(t *testing.T) {
	release := make(chan struct{})
	slow := worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		<-release
		return json.RawMessage(`{"done":true}`), nil
	})
	h := schedulertest.New(t, schedulertest.WithHandler("k", slow))
	task := h.Create(scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "k", Interval: time.Minute})
	time.AfterFunc(50*time.Millisecond, func() { close(release) }) // the handler's work, in real time
	h.Advance(time.Minute)
	if r := h.RequireRun(task.ID, 1); r.Outcome != worker.OutcomeCompleted || !r.EndedAt.Equal(t0(time.Minute)) {
		t.Fatalf("run 1 after Advance: %+v, want completed at 01:00", r)
	}
	if got := string(h.Task(task.ID).Checkpoint); got != `{"done":true}` {
		t.Fatalf("checkpoint %s", got)
	}
}

// fatalT records a Fatalf and stops the test function's goroutine there as
// testing does (here: by a panic the caller recovers).
type fatalT struct {
	*testing.T
	msg string
}

type fatal struct{}

func (f *fatalT) Fatalf(format string, a ...any) {
	f.msg = fmt.Sprintf(format, a...)
	panic(fatal{})
}

func failing(f func()) (failed bool) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(fatal); !ok {
				panic(p)
			}
			failed = true
		}
	}()
	f()
	return false
}

// RequireRun and Create fail the test, naming what is missing or wrong.
func TestRequireFails(t *testing.T) {
	ft := &fatalT{T: t}
	h := schedulertest.New(ft, schedulertest.WithHandler("k", schedulertest.Script()))
	task := h.Create(scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "k", Interval: time.Minute})
	h.Advance(2 * time.Minute)
	if failing(func() { h.RequireRun(task.ID, 2) }) {
		t.Fatalf("RequireRun(2) failed with two runs: %s", ft.msg)
	}
	if !failing(func() { h.RequireRun(task.ID, 3) }) || !strings.Contains(ft.msg, "has no run 3 (it has 2 runs)") {
		t.Fatalf("RequireRun(3) with two runs: failed with %q", ft.msg)
	}
	if !failing(func() { h.Create(scheduler.TaskSpec{Owner: "o", Name: "m", Kind: "nope", Interval: time.Minute}) }) ||
		!strings.Contains(ft.msg, `no handler registered for kind "nope"`) {
		t.Fatalf("Create of an unknown kind: failed with %q", ft.msg)
	}
}

// The harness's scheduler is stopped and its store closed at cleanup.
func TestStoppedAtCleanup(t *testing.T) {
	var h *schedulertest.Harness
	t.Run("inner", func(t *testing.T) {
		h = schedulertest.New(t, schedulertest.WithHandler("k", schedulertest.Script()))
		h.Create(scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "k", Interval: time.Minute})
	})
	if _, err := h.Store().ReadAll(context.Background(), events.Start, 0); !errors.Is(err, events.ErrClosed) {
		t.Fatalf("the store after the test: %v, want %v", err, events.ErrClosed)
	}
	if _, _, err := h.Scheduler().CreateTask(context.Background(), scheduler.TaskSpec{Owner: "o", Name: "m", Kind: "k", Interval: time.Minute}); err == nil {
		t.Fatal("the scheduler still creates tasks after its test ended")
	}
}

// A backfill's runs go through the real scheduler: each past slot becomes
// a run with trigger backfill and that slot, enqueued one at a time under
// max_waiting 1 as the run before it starts, and each runs its handler to
// completion, one after the other (a worker finds its run's start in a decision that also
// enqueues the next backfill run). nextRun and lastRun do not move.
func TestBackfillRunsThroughTheScheduler(t *testing.T) {
	h := schedulertest.New(t, schedulertest.WithHandler("k", schedulertest.Script()),
		schedulertest.WithConfig(scheduler.Config{Tick: 10 * time.Second}))
	// buffer_one: a backfill run taken while the one before it still runs
	// waits for it (under skip it would be dropped, as the handler's real
	// time decides).
	task := h.Create(scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "k", Interval: time.Hour, FirstRun: t0(time.Hour), MaxWaiting: 1,
		Overlap: events.OverlapBufferOne})
	h.Advance(10 * time.Minute)
	slots := h.Backfill(task.ID, t0(-3*time.Hour), t0(0))
	want := []time.Time{t0(-3 * time.Hour), t0(-2 * time.Hour), t0(-time.Hour)}
	if fmt.Sprint(slots) != fmt.Sprint(want) {
		t.Fatalf("slots %v, want %v", slots, want)
	}
	h.Advance(time.Second)
	runs := h.Runs(task.ID)
	if len(runs) != 3 {
		t.Fatalf("runs %+v", runs)
	}
	for i, r := range runs {
		if r.Trigger != events.TriggerBackfill || !r.Slot.Equal(want[i]) || r.Outcome != worker.OutcomeCompleted {
			t.Errorf("run %d: %+v, want a completed backfill run of slot %s", i+1, r, want[i])
		}
	}
	if got := h.Task(task.ID); !got.NextRun.Equal(t0(time.Hour)) || !got.LastRun.IsZero() {
		t.Fatalf("next run %s, last run %s: a backfill moved them", got.NextRun, got.LastRun)
	}
}
