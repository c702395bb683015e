package history_test

import (
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// TestUpdateWithoutNextRunKeepsIt: an update or resume that leaves next_run
// unset keeps the task's nextRun in the audit trail.
func TestUpdateWithoutNextRunKeepsIt(t *testing.T) {
	id := uuid.MustParse("c0000000-0000-4000-8000-0000000000ce")
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	md := events.Metadata{Stream: events.TaskStream(id), At: start}
	var tr history.Tracker
	if _, err := tr.ApplyEvent(md, events.TaskCreated{TaskID: id, Name: "n", Owner: "o", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Timebox: events.Duration(time.Second), NextRun: start.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []events.Event{
		events.TaskUpdated{Schedule: events.Schedule{Interval: events.Duration(2 * time.Minute)}, Timebox: events.Duration(time.Second)},
		events.TaskPaused{}, events.TaskResumed{},
	} {
		md.Version++
		row, err := tr.ApplyEvent(md, ev)
		if err != nil {
			t.Fatal(err)
		}
		if row.NextRun == nil || !row.NextRun.Equal(start.Add(time.Minute)) {
			t.Fatalf("after %s nextRun = %v", ev.EventType(), row.NextRun)
		}
	}
}

// TestDropWithoutNumbersDerivesThem: a too_soon drop that carries only its
// words still shows the right numbers, derived from lastRun and the spec.
func TestDropWithoutNumbersDerivesThem(t *testing.T) {
	id := uuid.MustParse("c0000000-0000-4000-8000-0000000000cf")
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	md := func(v uint64, s int) events.Metadata {
		return events.Metadata{Stream: events.TaskStream(id), Version: v, At: start.Add(time.Duration(s) * time.Second)}
	}
	var tr history.Tracker
	r1, r2 := events.RunID(id, 1), events.RunID(id, 2)
	steps := []struct {
		md events.Metadata
		ev events.Event
	}{
		{md(0, 0), events.TaskCreated{TaskID: id, Name: "A", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
			Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Second), NextRun: start.Add(30 * time.Second)}},
		{md(1, 30), events.RunEnqueued{RunID: r1, Run: 1, Due: start.Add(30 * time.Second), NextRun: start.Add(90 * time.Second)}},
		{md(2, 35), events.RunStarted{RunID: r1, Run: 1, Deadline: start.Add(65 * time.Second)}},
		{md(3, 60), events.RunEnqueued{RunID: r2, Run: 2, Due: start.Add(60 * time.Second), NextRun: start.Add(120 * time.Second)}},
		{md(4, 63), events.RunDropped{RunID: r2, Run: 2, Reason: events.DropTooSoon, Detail: "started 28s after the last start; needs 55s"}},
	}
	var row history.Row
	for _, s := range steps {
		var err error
		if row, err = tr.ApplyEvent(s.md, s.ev); err != nil {
			t.Fatal(err)
		}
	}
	if row.SinceLastStart != 28*time.Second || row.Needed != 55*time.Second {
		t.Errorf("drop numbers: since %s needed %s, want 28s and 55s", row.SinceLastStart, row.Needed)
	}
	if got, want := row.Text(history.Relative(start)), "A2 is dropped (28 s after 00:35 < 60 - 5)"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}
