package crontasks_test

import (
	"context"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// exampleLog records two tasks of one owner; the first runs once.
func exampleLog(store events.Store) {
	start := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	add := func(id uuid.UUID, at time.Duration, ev events.Event) {
		p, _ := events.Propose(ev, uuid.Nil, start.Add(at))
		store.Append(context.Background(), events.TaskStream(id), events.AnyVersion, p)
	}
	a := uuid.MustParse("a0000000-0000-4000-8000-000000000001")
	b := uuid.MustParse("b0000000-0000-4000-8000-000000000002")
	for _, t := range []struct {
		id   uuid.UUID
		name string
	}{{a, "poll"}, {b, "cleanup"}} {
		add(t.id, 0, events.TaskCreated{TaskID: t.id, Name: t.name, Owner: "channel/pop3/42", Kind: "noop",
			Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
			Timebox: events.Duration(30 * time.Second), NextRun: start.Add(30 * time.Second)})
	}
	run := events.RunID(a, 1)
	add(a, 30*time.Second, events.RunEnqueued{RunID: run, Run: 1, Due: start.Add(30 * time.Second), NextRun: start.Add(90 * time.Second)})
	add(a, 35*time.Second, events.RunStarted{RunID: run, Run: 1, Deadline: start.Add(65 * time.Second)})
	add(a, 45*time.Second, events.RunCompleted{RunID: run, Run: 1})
}

// Fold the log into an in-memory view and ask it for one owner's tasks.
func Example() {
	store, _ := embedded.OpenMemory()
	defer store.Close()
	exampleLog(store)

	v, err := crontasks.Open(crontasks.Config{Store: store})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer v.Close()
	if err := v.CatchUp(context.Background(), nil); err != nil {
		fmt.Println(err)
		return
	}
	page, err := v.Query(context.Background(), crontasks.Query{Owner: "channel/pop3/42"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range page.Tasks {
		fmt.Printf("%s %s next=%s runs=%d completed=%d\n", t.Name, t.Status, t.NextRun.Format("15:04:05"), t.RunCount, t.CompletedCount)
	}
	// Output:
	// cleanup active next=02:00:30 runs=0 completed=0
	// poll active next=02:01:30 runs=1 completed=1
}

// The view as it was at global position 3: both tasks created, the first
// run enqueued but not yet started.
func ExampleAsOf() {
	store, _ := embedded.OpenMemory()
	defer store.Close()
	exampleLog(store)

	past, err := crontasks.AsOf(context.Background(), crontasks.Config{Store: store}, crontasks.Point{Position: events.Position{Commit: 3, Prepare: 3}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer past.Close()
	t, err := past.Get(context.Background(), uuid.MustParse("a0000000-0000-4000-8000-000000000001"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("as of %s: runs=%d pending=%d last_run=%v\n", past.Checkpoint(), t.RunCount, t.PendingCount, t.LastRun)
	// Output:
	// as of 3: runs=1 pending=1 last_run=<nil>
}
