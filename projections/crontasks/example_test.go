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

// A live view follows the log; after an append, WaitFor lets the writer
// read its own write.
func ExampleView_WaitFor() {
	store, _ := embedded.OpenMemory()
	defer store.Close()
	view, _ := crontasks.Open(crontasks.Config{Store: store}) // in memory; set Dir to persist
	defer view.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go view.Run(ctx)

	id := uuid.MustParse("5d3c8a52-0b7e-4f7e-9a1c-2f64d1e0b001")
	at := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	created, _ := events.Propose(events.TaskCreated{TaskID: id, Name: "fetch-mail", Owner: "channel/pop3/42", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(30 * time.Second), NextRun: at.Add(30 * time.Second)}, uuid.Nil, at)
	res, _ := store.Append(ctx, events.TaskStream(id), events.NoStream, created)

	if err := view.WaitFor(ctx, res.Position); err != nil {
		fmt.Println(err)
		return
	}
	task, _ := view.Get(ctx, id)
	fmt.Println(task.Name, task.Status, task.NextRun.Format(time.RFC3339), task.RunCount)
	// Output: fetch-mail active 2026-11-22T02:00:30Z 0
}

// Queries page with a cursor; an owner's tasks come by name.
func ExampleView_Query() {
	store, _ := embedded.OpenMemory()
	defer store.Close()
	ctx := context.Background()
	at := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	for i, name := range []string{"c", "a", "b"} {
		id := uuid.NewSHA1(uuid.NameSpaceOID, []byte(name))
		p, _ := events.Propose(events.TaskCreated{TaskID: id, Name: name, Owner: "channel/pop3/42", Kind: "noop",
			Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Timebox: events.Duration(30 * time.Second),
			NextRun: at.Add(time.Duration(i) * time.Minute)}, uuid.Nil, at)
		store.Append(ctx, events.TaskStream(id), events.NoStream, p)
	}
	view, _ := crontasks.Open(crontasks.Config{Store: store})
	defer view.Close()
	view.CatchUp(ctx, nil)

	q := crontasks.Query{Owner: "channel/pop3/42", Limit: 2}
	for {
		page, err := view.Query(ctx, q)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, t := range page.Tasks {
			fmt.Print(t.Name, " ")
		}
		fmt.Println("| more:", page.Next != "")
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	due, _ := view.DueBefore(ctx, at.Add(90*time.Second), 10, "")
	fmt.Println("due by 02:01:30:", len(due.Tasks))
	// Output:
	// a b | more: true
	// c | more: false
	// due by 02:01:30: 2
}

// The view as of a past position is folded apart from the live one.
func ExampleAsOf() {
	store, _ := embedded.OpenMemory()
	defer store.Close()
	ctx := context.Background()
	id := uuid.MustParse("5d3c8a52-0b7e-4f7e-9a1c-2f64d1e0b002")
	at := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	created, _ := events.Propose(events.TaskCreated{TaskID: id, Name: "report", Owner: "team/7", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Hour)}, Timebox: events.Duration(time.Minute), NextRun: at}, uuid.Nil, at)
	paused, _ := events.Propose(events.TaskPaused{}, uuid.Nil, at.Add(time.Minute))
	store.Append(ctx, events.TaskStream(id), events.NoStream, created, paused)

	point, _ := crontasks.ParsePoint("2026-11-22T02:00:30Z")
	past, err := crontasks.AsOf(ctx, crontasks.Config{Store: store}, point)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer past.Close()
	then, _ := past.Get(ctx, id)
	fmt.Println("at 02:00:30:", then.Status)
	// Output: at 02:00:30: active
}
