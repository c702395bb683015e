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

// outboxRow is what a service writes in its own transaction, beside its
// business row, for a relay to turn into a task (docs/embedding.md, "The
// outbox").
type outboxRow struct {
	Owner, Name string
	Payload     string
}

// The relay of the outbox pattern: a row handled twice — the relay crashed
// after CreateTask and before deleting the row — makes no second task,
// because a task's ID derives from its owner and name.
func Example_outbox() {
	store, _ := embedded.OpenMemory()
	defer store.Close()
	s, _ := scheduler.New(scheduler.Config{Store: store, Clock: clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})
	s.Register("invoice", worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) { return nil, nil }))
	s.Start(context.Background())
	defer s.Stop(context.Background())

	// Known in the service's transaction, before the task exists.
	id := scheduler.TaskID("customer/42", "monthly-invoice")

	row := outboxRow{Owner: "customer/42", Name: "monthly-invoice", Payload: `{"plan":"pro"}`}
	relay := func(r outboxRow) {
		task, created, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Owner: r.Owner, Name: r.Name, Kind: "invoice",
			Schedule: scheduler.Cron("0 6 1 * *"), Payload: json.RawMessage(r.Payload)})
		if err != nil {
			fmt.Println("keep the row, retry later:", err)
			return
		}
		fmt.Println("created:", created, "same ID:", task.ID == id, "version:", task.Version)
		// …then delete the row from the outbox.
	}
	relay(row)
	relay(row) // after a crash before the row was deleted
	tasks, _ := s.Tasks(context.Background())
	fmt.Println("tasks:", len(tasks))
	// Output:
	// created: true same ID: true version: 0
	// created: false same ID: true version: 0
	// tasks: 1
}
