package history_test

import (
	"fmt"
	"os"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

func Example() {
	start := time.Date(2026, 1, 5, 2, 0, 0, 0, time.UTC)
	task := uuid.MustParse("a0000000-0000-4000-8000-000000000001")
	run := events.RunID(task, 1)
	evs := []struct {
		at time.Duration
		ev events.Event
	}{
		{0, events.TaskCreated{TaskID: task, Name: "A", Owner: "demo/1", Kind: "noop",
			Schedule:  events.Schedule{Interval: events.Duration(time.Minute)},
			Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Second),
			NextRun: start.Add(30 * time.Second)}},
		{30 * time.Second, events.RunEnqueued{RunID: run, Run: 1, Due: start.Add(30 * time.Second), NextRun: start.Add(90 * time.Second)}},
		{35 * time.Second, events.RunStarted{RunID: run, Run: 1, Deadline: start.Add(65 * time.Second)}},
		{45 * time.Second, events.RunCompleted{RunID: run, Run: 1}},
	}
	var recs []events.Recorded
	for i, e := range evs {
		p, _ := events.Propose(e.ev, uuid.Nil, start.Add(e.at))
		recs = append(recs, events.Recorded{
			Metadata: events.Metadata{Stream: events.TaskStream(task), Version: uint64(i), At: p.At},
			Type:     p.Type, Schema: p.Schema, Data: p.Data,
		})
	}
	rows, err := history.Rows(recs)
	if err != nil {
		fmt.Println(err)
		return
	}
	history.WriteTable(os.Stdout, rows, history.Relative{Start: start})
	// Output:
	// | MM:SS | Event | nextRun | lastRun |
	// |---|---|---|---|
	// | 00:00 | Initial state | 00:30 | - |
	// | 00:30 | Cron enqueues A1 | 01:30 | - |
	// | 00:35 | A1 begins execution | 01:30 | 00:35 |
	// | 00:45 | A1 ends execution | 01:30 | 00:35 |
}
