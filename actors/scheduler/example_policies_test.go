package scheduler_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/google/uuid"
)

// Run policies: a handler that fails twice is retried with a doubling
// backoff (R13); an error marked worker.Permanent is not retried; Trigger
// runs the task now, outside its schedule (R15), and a paused task refuses
// it.
func Example_policies() {
	store, _ := embedded.OpenMemory()
	defer store.Close()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(start)
	ctx := context.Background()

	s, _ := scheduler.New(scheduler.Config{Store: store, Clock: clk, Tick: time.Second})
	calls := 0
	s.Register("sync", worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		calls++
		fmt.Printf("%s: run %d, attempt %d, trigger %q\n", clk.Now().Sub(start), r.Number, r.Attempt, r.Trigger)
		switch calls {
		case 1, 2:
			return nil, errors.New("upstream answered 503")
		case 4:
			return nil, worker.Permanent(errors.New("upstream says the account is gone"))
		}
		return nil, nil
	}))
	s.Start(ctx)

	task, _, err := s.CreateTask(ctx, scheduler.TaskSpec{
		Name: "sync", Owner: "team/ops", Kind: "sync", Interval: time.Hour,
		Retry:    &scheduler.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second, MaxBackoff: time.Minute, Multiplier: 2},
		FirstRun: start.Add(10 * time.Second),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	clk.RunUntil(start.Add(time.Minute)) // the first slot: two failures, two retries

	runID, _ := s.Trigger(ctx, task.ID) // a run now; this one fails for good
	clk.RunUntil(start.Add(2 * time.Minute))
	fmt.Println("triggered a run:", runID != uuid.Nil)

	s.PauseTask(ctx, task.ID)
	if _, err := s.Trigger(ctx, task.ID); errors.Is(err, scheduler.ErrCannotTrigger) {
		fmt.Println("refused:", err)
	}
	task, _ = s.Task(ctx, task.ID)
	fmt.Println("runs:", task.Runs, "last run at", task.LastRun.Sub(start))
	s.Stop(ctx)
	// Output:
	// 10s: run 1, attempt 1, trigger ""
	// 11s: run 2, attempt 2, trigger ""
	// 13s: run 3, attempt 3, trigger ""
	// 1m0s: run 4, attempt 1, trigger "manual"
	// triggered a run: true
	// refused: rules: the task cannot be triggered: the task is paused
	// runs: 4 last run at 10s
}
