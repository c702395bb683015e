package history_test

import (
	"fmt"
	"os"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// record builds the recorded form of an event the way a store returns it.
func record(task uuid.UUID, version uint64, at time.Time, e events.Event) events.Recorded {
	p, err := events.Propose(e, uuid.Nil, at)
	if err != nil {
		panic(err)
	}
	pos := events.Position{Commit: version + 1, Prepare: version + 1}
	return events.Recorded{
		Metadata: events.Metadata{ID: p.ID, Stream: events.TaskStream(task), Version: version, Position: pos, At: p.At},
		Type:     p.Type, Schema: p.Schema, Data: p.Data,
	}
}

// A task's events become the table of its audit trail; a tick that enqueued
// nothing is added by the caller with Tracker.Tick.
func ExampleWriteTable() {
	start := time.Date(2026, 1, 5, 2, 0, 0, 0, time.UTC)
	sec := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	id := uuid.MustParse("7c1e0d5e-3b7a-4a59-9f4e-0a8a3f6f2b11")
	recs := []events.Recorded{
		record(id, 0, sec(0), events.TaskCreated{TaskID: id, Name: "A", Owner: "demo/1", Kind: "noop",
			Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
			Timebox: events.Duration(30 * time.Second), NextRun: sec(30)}),
		record(id, 1, sec(30), events.RunEnqueued{RunID: events.RunID(id, 1), Run: 1, Due: sec(30), NextRun: sec(90)}),
		record(id, 2, sec(35), events.RunStarted{RunID: events.RunID(id, 1), Run: 1, Deadline: sec(65)}),
		record(id, 3, sec(45), events.RunCompleted{RunID: events.RunID(id, 1), Run: 1}),
		record(id, 4, sec(90), events.RunEnqueued{RunID: events.RunID(id, 2), Run: 2, Due: sec(90), NextRun: sec(150)}),
		record(id, 5, sec(92), events.RunStarted{RunID: events.RunID(id, 2), Run: 2, Deadline: sec(122)}),
	}
	var tr history.Tracker
	var rows []history.Row
	for _, r := range recs {
		if r.Version == 4 {
			tick, _ := tr.Tick(id, sec(60))
			rows = append(rows, tick)
		}
		row, err := tr.Apply(r)
		if err != nil {
			fmt.Println(err)
			return
		}
		rows = append(rows, row)
	}
	history.WriteTable(os.Stdout, rows, history.Relative(start))
	// Output:
	// | MM:SS | Event | nextRun | lastRun |
	// |---|---|---|---|
	// | 00:00 | Initial state | 00:30 | - |
	// | 00:30 | Cron enqueues A1 | 01:30 | - |
	// | 00:35 | A1 begins execution | 01:30 | 00:35 |
	// | 00:45 | A1 ends execution | 01:30 | 00:35 |
	// | 01:00 | Cron executes | 01:30 | 00:35 |
	// | 01:30 | Cron enqueues A2 | 02:30 | 00:35 |
	// | 01:32 | A2 begins execution (57 s after 00:35 >= 60 - 5) | 02:30 | 01:32 |
}

// The same rows as JSON lines, the form of `cronactor simulate --format json`.
func ExampleWriteLines() {
	start := time.Date(2026, 1, 5, 2, 0, 0, 0, time.UTC)
	id := uuid.MustParse("7c1e0d5e-3b7a-4a59-9f4e-0a8a3f6f2b11")
	recs := []events.Recorded{
		record(id, 0, start, events.TaskCreated{TaskID: id, Name: "A", Owner: "demo/1", Kind: "noop",
			Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
			Timebox: events.Duration(30 * time.Second), NextRun: start.Add(30 * time.Second)}),
		record(id, 1, start.Add(30*time.Second), events.RunEnqueued{RunID: events.RunID(id, 1), Run: 1,
			Due: start.Add(30 * time.Second), NextRun: start.Add(90 * time.Second)}),
	}
	rows, err := history.Rows(recs)
	if err != nil {
		fmt.Println(err)
		return
	}
	history.WriteLines(os.Stdout, rows, history.Relative(start), history.LineFields{})
	// Output:
	// {"at":"00:00","task":"A","event":"TaskCreated","next_run":"00:30","last_run":null}
	// {"at":"00:30","task":"A","event":"RunEnqueued","run":1,"next_run":"01:30","last_run":null}
}

// Why was a run dropped at 01:50? Explain lists the decisions around that
// time with the rule behind each.
func ExampleExplain() {
	start := time.Date(2026, 1, 5, 2, 0, 0, 0, time.UTC)
	sec := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	id := uuid.MustParse("7c1e0d5e-3b7a-4a59-9f4e-0a8a3f6f2b11")
	recs := []events.Recorded{
		record(id, 0, sec(0), events.TaskCreated{TaskID: id, Name: "A", Owner: "demo/1", Kind: "noop",
			Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
			Timebox: events.Duration(30 * time.Second), NextRun: sec(30)}),
		record(id, 1, sec(30), events.RunEnqueued{RunID: events.RunID(id, 1), Run: 1, Due: sec(30), NextRun: sec(90)}),
		record(id, 2, sec(90), events.RunEnqueued{RunID: events.RunID(id, 2), Run: 2, Due: sec(90), NextRun: sec(150)}),
		record(id, 3, sec(92), events.RunStarted{RunID: events.RunID(id, 1), Run: 1, Deadline: sec(122)}),
		record(id, 4, sec(110), events.RunDropped{RunID: events.RunID(id, 2), Run: 2, Reason: events.DropTooSoon,
			Detail: "started 18s after the last start; needs 55s"}),
		record(id, 5, sec(115), events.RunCompleted{RunID: events.RunID(id, 1), Run: 1}),
	}
	ex, err := history.Explain(recs, sec(110), 30*time.Second)
	if err != nil {
		fmt.Println(err)
		return
	}
	tf := history.Relative(start)
	for _, d := range ex.Decisions {
		fmt.Printf("%s: %s\n", tf.Format(d.Row.At), d.Text(tf))
	}
	// Output:
	// 01:30: A2 was enqueued (R1): the task was due; next due at 02:30
	// 01:32: A1 started (R3): no run had started before; deadline 02:02
	// 01:50: A2 was dropped (R3): started 18 s after the last start; needs ≥ 55 s
	// 01:55: A1 completed
}
