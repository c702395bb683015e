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

// A cron task: weekdays at 09:00 and Saturdays at 12:00 in Berlin, at most
// four runs. Upcoming lists its slots in its zone; after the fourth run the
// task is finished.
func Example_cron() {
	store, _ := embedded.OpenMemory()
	defer store.Close()
	start := time.Date(2026, 3, 26, 0, 0, 0, 0, time.UTC) // a Thursday; Berlin moves to summer time on Sunday the 29th
	clk := clock.NewVirtual(start)

	s, _ := scheduler.New(scheduler.Config{Store: store, Clock: clk, Tick: time.Minute})
	s.Register("report", worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		fmt.Printf("run %d at %s\n", r.Number, clk.Now().Format(time.RFC3339))
		return nil, nil
	}))
	s.Start(context.Background())

	task, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{
		Name: "daily-report", Owner: "team/finance", Kind: "report",
		Cron: []string{"0 9 * * MON-FRI", "0 12 * * SAT"}, Timezone: "Europe/Berlin", MaxRuns: 4,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	slots, _ := s.Upcoming(context.Background(), task.ID, 10)
	for _, t := range slots {
		fmt.Println("upcoming", t.Format(time.RFC3339))
	}

	clk.RunUntil(start.Add(7 * 24 * time.Hour))

	task, _ = s.Task(context.Background(), task.ID)
	fmt.Println("status:", task.Status, "runs:", task.Runs)
	s.Stop(context.Background())
	// Output:
	// upcoming 2026-03-26T09:00:00+01:00
	// upcoming 2026-03-27T09:00:00+01:00
	// upcoming 2026-03-28T12:00:00+01:00
	// upcoming 2026-03-30T09:00:00+02:00
	// run 1 at 2026-03-26T08:00:00Z
	// run 2 at 2026-03-27T08:00:00Z
	// run 3 at 2026-03-28T11:00:00Z
	// run 4 at 2026-03-30T07:00:00Z
	// status: finished runs: 4
}
