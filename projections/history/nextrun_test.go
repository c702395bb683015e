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
