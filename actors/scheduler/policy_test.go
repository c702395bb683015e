package scheduler_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/scheduler/schedulertest"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
)

// TestTriggerRunsNow (R15): Trigger enqueues a run at once and returns its
// ID; the run starts without moving nextRun or lastRun. A paused task
// refuses it with the reason; an unknown task is not found.
func TestTriggerRunsNow(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s.Register("noop", sleeper(clk, time.Second))
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stopNow(s)
	task, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: "A", Owner: "o", Kind: "noop", Interval: time.Hour,
		FirstRun: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if task.Queue != events.DefaultQueue || task.MissedRunPolicy != events.MissedRunOnce || task.Retry != nil {
		t.Fatalf("policy in force: queue %q, missed_run_policy %q, retry %+v", task.Queue, task.MissedRunPolicy, task.Retry)
	}
	clk.RunUntil(t0.Add(10 * time.Second))
	run, err := s.Trigger(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run != events.RunID(task.ID, 1) {
		t.Fatalf("run ID %s, want run 1's", run)
	}
	clk.RunUntil(t0.Add(time.Minute))
	got, err := s.Task(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.NextRun.Equal(t0.Add(time.Hour)) || !got.LastRun.IsZero() || got.Runs != 1 {
		t.Fatalf("after the trigger: nextRun %s, lastRun %s, runs %d", got.NextRun, got.LastRun, got.Runs)
	}
	if tr := trail(t, st, task.ID); !strings.Contains(tr, "00:10 RunEnqueued 1 next=60:00 missed=0\n00:10 RunStarted 1\n") {
		t.Fatalf("trail:\n%s", tr)
	}
	if _, err := s.PauseTask(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Trigger(ctx, task.ID); !errors.Is(err, scheduler.ErrCannotTrigger) || !strings.Contains(err.Error(), "the task is paused") {
		t.Fatalf("trigger of a paused task: %v", err)
	}
	if _, err := s.Trigger(ctx, events.RunID(task.ID, 99)); !errors.Is(err, scheduler.ErrTaskNotFound) {
		t.Fatalf("trigger of an unknown task: %v", err)
	}
}

// TestFailingTaskIsRetried (R13): a handler failing twice and then
// succeeding is retried with its backoffs on the ticks that follow them;
// the retries move neither nextRun nor lastRun.
func TestFailingTaskIsRetried(t *testing.T) {
	flaky := schedulertest.Script(schedulertest.Result{Err: errors.New("503")}, schedulertest.Result{Err: errors.New("503")},
		schedulertest.Result{})
	h := schedulertest.New(t, schedulertest.WithStart(t0), schedulertest.WithHandler("flaky", flaky))
	task := h.Create(scheduler.TaskSpec{Name: "A", Owner: "o", Kind: "flaky", Interval: time.Hour,
		FirstRun: t0.Add(10 * time.Second), Retry: &scheduler.RetryPolicy{MaxAttempts: 3, InitialBackoff: 2 * time.Second,
			MaxBackoff: time.Minute, Multiplier: 3}})
	h.Advance(time.Minute)
	want := "00:10 RunEnqueued 1 next=60:10 missed=0\n00:10 RunStarted 1\n00:10 RunFailed 1 503\n" +
		"00:12 RunEnqueued 2 next=60:10 missed=0\n00:12 RunStarted 2\n00:12 RunFailed 2 503\n" +
		"00:18 RunEnqueued 3 next=60:10 missed=0\n00:18 RunStarted 3\n00:18 RunCompleted 3 \n"
	if tr := trail(t, h.Store(), task.ID); !strings.HasSuffix(tr, want) {
		t.Fatalf("trail:\n%s\nwant it to end with:\n%s", tr, want)
	}
	got := h.Task(task.ID)
	if !got.LastRun.Equal(t0.Add(10*time.Second)) || !got.NextRun.Equal(t0.Add(time.Hour+10*time.Second)) {
		t.Fatalf("lastRun %s nextRun %s", mmss(got.LastRun), mmss(got.NextRun))
	}
}

// TestPendingRetrySurvivesARestart (R13, R9): a one-time task whose run
// fails is finished, with its retry pending; the process stops before the
// retry falls due. The next process folds the retry from the log, keeps the
// finished task in the due-time index for it, and makes it on the first
// tick after it falls due.
func TestPendingRetrySurvivesARestart(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	fails := worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) { return nil, errors.New("503") })
	e := newEnv(t, st, clk, nil, map[string]worker.Handler{"flaky": fails})
	task, _, err := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "once", Owner: "o", Kind: "flaky", At: []time.Time{t0.Add(30 * time.Second)},
		Retry: &scheduler.RetryPolicy{MaxAttempts: 2, InitialBackoff: 15 * time.Second, MaxBackoff: 15 * time.Second, Multiplier: 1}})
	if err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(40 * time.Second))
	stopNow(e.s)
	if tr := trail(t, st, task.ID); !strings.HasSuffix(tr, "00:30 RunFailed 1 503\n") || !strings.Contains(tr, "TaskFinished") {
		t.Fatalf("before the restart:\n%s", tr)
	}

	clk2 := clock.NewVirtual(clk.Now())
	succeeds := worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) { return nil, nil })
	e2 := newEnv(t, st, clk2, nil, map[string]worker.Handler{"flaky": succeeds})
	defer stopNow(e2.s)
	clk2.RunUntil(t0.Add(2 * time.Minute))
	// Ticks of the new process: 01:10, 01:40, …; the retry fell due at 00:45.
	if tr := trail(t, st, task.ID); !strings.Contains(tr, "00:30 RunFailed 1 503\n01:10 RunEnqueued 2 ") ||
		!strings.HasSuffix(tr, "01:10 RunStarted 2\n01:10 RunCompleted 2 \n") {
		t.Fatalf("after the restart:\n%s", tr)
	}
}
