package schedulertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/scheduler/schedulertest"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
)

// exampleT stands in for the *testing.T a test passes to New.
type exampleT struct{ cleanups []func() }

func (*exampleT) Helper()                        {}
func (*exampleT) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
func (t *exampleT) Cleanup(f func())             { t.cleanups = append(t.cleanups, f) }

// done runs the cleanups, as the testing package does when a test ends.
func (t *exampleT) done() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}

// A test of an embedding service: register the handler, create the task,
// move virtual time a few minutes, and look at the runs.
func Example() {
	t := &exampleT{} // in a test: the *testing.T
	defer t.done()

	poll := worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		return json.RawMessage(fmt.Sprintf(`{"uid":%d}`, 100*r.Number)), nil
	})
	h := schedulertest.New(t, schedulertest.WithHandler("poll-mailbox", poll))
	task := h.Create(scheduler.TaskSpec{Owner: "channel/pop3/42", Name: "inbox", Kind: "poll-mailbox", Interval: time.Minute})

	h.Advance(3 * time.Minute)

	for _, r := range h.Runs(task.ID) {
		fmt.Println(r.Number, r.Slot.Format("15:04:05"), r.StartedAt.Format("15:04:05"), r.Outcome)
	}
	fmt.Println("checkpoint:", string(h.Task(task.ID).Checkpoint))
	// Output:
	// 1 00:01:00 00:01:00 completed
	// 2 00:02:00 00:02:00 completed
	// 3 00:03:00 00:03:00 completed
	// checkpoint: {"uid":300}
}

// WithStart puts the clock where the test needs it, here on a Friday for a
// weekday task; WithConfig sets the rest of the scheduler's configuration
// (a minute's tick is plenty for a cron task and moves a week fast).
func ExampleWithStart() {
	t := &exampleT{}
	defer t.done()
	friday := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	h := schedulertest.New(t, schedulertest.WithStart(friday),
		schedulertest.WithConfig(scheduler.Config{Tick: time.Minute}),
		schedulertest.WithHandler("report", schedulertest.Script()))
	task := h.Create(scheduler.TaskSpec{Owner: "team/finance", Name: "daily", Kind: "report", Cron: []string{"0 9 * * MON-FRI"}})

	h.Advance(4 * 24 * time.Hour) // Friday to Tuesday

	for _, r := range h.Runs(task.ID) {
		fmt.Println(r.Number, r.Slot.Format("Mon 15:04"), r.Outcome)
	}
	fmt.Println("now:", h.Now().Format("Mon 15:04"))
	// Output:
	// 1 Fri 09:00 completed
	// 2 Mon 09:00 completed
	// now: Tue 00:00
}

// Script returns scripted results in turn: here a failure, then success,
// which a task with retries shows as a retry of the first slot.
func ExampleScript() {
	t := &exampleT{}
	defer t.done()
	send := schedulertest.Script(
		schedulertest.Result{Err: errors.New("smtp: 451 try again")},
		schedulertest.Result{Checkpoint: json.RawMessage(`{"sent":1}`)},
	)
	h := schedulertest.New(t, schedulertest.WithHandler("send", send))
	task := h.Create(scheduler.TaskSpec{Owner: "shop/7", Name: "newsletter", Kind: "send", Interval: time.Hour,
		Retry: &scheduler.RetryPolicy{MaxAttempts: 3, InitialBackoff: 10 * time.Second, MaxBackoff: time.Minute, Multiplier: 2}})

	h.Advance(61 * time.Minute)

	for _, r := range h.Runs(task.ID) {
		fmt.Printf("run %d attempt %d slot %s started %s %s\n", r.Number, r.Attempt, r.Slot.Format("15:04:05"),
			r.StartedAt.Format("15:04:05"), strings.TrimSpace(r.Outcome+" "+r.Reason))
	}
	fmt.Println("handled:", len(send.Runs()))
	// Output:
	// run 1 attempt 1 slot 01:00:00 started 01:00:00 failed smtp: 451 try again
	// run 2 attempt 2 slot 01:00:00 started 01:00:10 completed
	// handled: 2
}

// RequireRun is one run, failing the test when there is none; Events are
// the task's decisions as recorded. A handler that outlives its timebox is
// forced to end at the deadline.
func ExampleHarness_RequireRun() {
	t := &exampleT{}
	defer t.done()
	var h *schedulertest.Harness
	slow := worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		return nil, clock.Sleep(ctx, h.Clock(), time.Hour) // ends with its context, at the deadline
	})
	h = schedulertest.New(t, schedulertest.WithHandler("slow", slow))
	task := h.Create(scheduler.TaskSpec{Owner: "o", Name: "slow", Kind: "slow", Interval: time.Minute, Timebox: 20 * time.Second})

	h.Advance(90 * time.Second)

	r := h.RequireRun(task.ID, 1)
	fmt.Println(r.Outcome, r.Reason, r.EndedAt.Sub(r.StartedAt))
	for _, e := range h.Events(task.ID) {
		fmt.Println(e.EventType())
	}
	// Output:
	// forced_end timebox_exceeded 20s
	// TaskCreated
	// RunEnqueued
	// RunStarted
	// RunForcedEnd
}

// Events gives the decisions themselves, with every field they record.
func ExampleHarness_Events() {
	t := &exampleT{}
	defer t.done()
	h := schedulertest.New(t, schedulertest.WithHandler("noop", schedulertest.Script()))
	task := h.Create(scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "noop", Interval: time.Minute})
	h.Scheduler().PauseTask(context.Background(), task.ID)
	h.Advance(2 * time.Minute)
	for _, e := range h.Events(task.ID) {
		switch e := e.(type) {
		case events.TaskCreated:
			fmt.Println("created, due", e.NextRun.Format("15:04"))
		default:
			fmt.Println(e.EventType())
		}
	}
	fmt.Println("runs:", len(h.Runs(task.ID)))
	// Output:
	// created, due 00:01
	// TaskPaused
	// runs: 0
}

// WithStore starts a scheduler on what another one recorded: here a task
// created by the old version of a service, whose handler a new version
// replaced.
func ExampleWithStore() {
	t := &exampleT{}
	defer t.done()
	store, _ := embedded.OpenMemory()
	defer store.Close()

	old := schedulertest.New(t, schedulertest.WithStore(store), schedulertest.WithHandler("k", schedulertest.Script()))
	task := old.Create(scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "k", Interval: time.Minute})
	old.Advance(time.Minute)
	t.done() // the old version stops
	t.cleanups = nil

	upgraded := schedulertest.Script(schedulertest.Result{Checkpoint: json.RawMessage(`{"v":2}`)})
	h := schedulertest.New(t, schedulertest.WithStore(store), schedulertest.WithStart(old.Now()),
		schedulertest.WithHandler("k", upgraded))
	h.Advance(time.Minute)
	for _, r := range h.Runs(task.ID) {
		fmt.Println(r.Number, r.StartedAt.Format("15:04"), r.Outcome)
	}
	fmt.Println(string(h.Task(task.ID).Checkpoint))
	// Output:
	// 1 00:01 completed
	// 2 00:02 completed
	// {"v":2}
}
