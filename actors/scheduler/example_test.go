package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events/embedded"
)

// Embedding the scheduler: a store, a handler per kind, tasks, Start, Stop.
// A real service uses embedded.Open(dir, …) and leaves Clock nil (the wall
// clock); this example runs on a virtual clock so its output is exact.
func Example() {
	store, _ := embedded.OpenMemory() // a service: embedded.Open("./cronactor-data", embedded.Options{})
	defer store.Close()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(start)

	s, _ := scheduler.New(scheduler.Config{Store: store, Clock: clk, Tick: 30 * time.Second})
	s.Register("poll-mailbox", worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		from := string(r.Checkpoint)
		if from == "" {
			from = "the start"
		}
		fmt.Printf("run %d at %s, resuming from %s\n", r.Number, clk.Now().Sub(start), from)
		return json.RawMessage(fmt.Sprintf(`{"uid":%d}`, 100*r.Number)), nil
	}))
	s.Start(context.Background())

	task, created, _ := s.CreateTask(context.Background(), scheduler.TaskSpec{
		Name: "inbox", Owner: "channel/pop3/42", Kind: "poll-mailbox", Interval: time.Minute,
	})
	fmt.Println("created:", created, "next run after", task.NextRun.Sub(start))

	clk.RunUntil(start.Add(3 * time.Minute)) // a service just lets time pass

	task, _ = s.Task(context.Background(), task.ID)
	fmt.Println("runs:", task.Runs, "last run at", task.LastRun.Sub(start), "checkpoint", string(task.Checkpoint))
	s.Stop(context.Background())
	// Output:
	// created: true next run after 1m0s
	// run 1 at 1m0s, resuming from the start
	// run 2 at 2m0s, resuming from {"uid":100}
	// run 3 at 3m0s, resuming from {"uid":200}
	// runs: 3 last run at 3m0s checkpoint {"uid":300}
}
