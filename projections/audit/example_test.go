package audit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/audit"
	"github.com/google/uuid"
)

// A Reader with Marks reads a page deep in a stream exactly: its rows show
// the spec an update set 3,000 events before them.
func ExampleReader_ReadPage() {
	st, _ := embedded.OpenMemory()
	defer st.Close()
	id := uuid.MustParse("0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f0")
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	var ps []events.Proposed
	add := func(e events.Event) {
		p, _ := events.Propose(e, uuid.Nil, at)
		ps = append(ps, p)
	}
	add(events.TaskCreated{TaskID: id, Name: "A", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
		Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Second), NextRun: at.Add(time.Minute)})
	add(events.TaskUpdated{Schedule: events.Schedule{Interval: events.Duration(2 * time.Minute)}, Tolerance: events.Duration(10 * time.Second),
		Timebox: events.Duration(30 * time.Second), NextRun: at.Add(2 * time.Minute)})
	for n := 1; n <= 1000; n++ {
		at = at.Add(2 * time.Minute)
		rid := events.RunID(id, n)
		add(events.RunEnqueued{RunID: rid, Run: n, Due: at, NextRun: at.Add(2 * time.Minute), Slot: at})
		add(events.RunStarted{RunID: rid, Run: n, Deadline: at.Add(30 * time.Second)})
		add(events.RunCompleted{RunID: rid, Run: n})
	}
	if _, err := st.Append(context.Background(), events.TaskStream(id), events.NoStream, ps...); err != nil {
		fmt.Println(err)
		return
	}
	rd := &audit.Reader{Store: st, Marks: audit.NewMarks(0, 0)}
	p, err := rd.ReadPage(context.Background(), id, audit.Range{Limit: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range p.Rows {
		fmt.Printf("%d %s: interval %s, tolerance %s\n", r.Version, r.Event, r.Interval, r.Tolerance)
	}
	fmt.Println("exact:", p.Exact, "older:", p.Older(), "marks:", rd.Marks.Len() > 0)
	// Output:
	// 3000 RunStarted: interval 2m0s, tolerance 10s
	// 3001 RunCompleted: interval 2m0s, tolerance 10s
	// exact: true older: true marks: true
}
