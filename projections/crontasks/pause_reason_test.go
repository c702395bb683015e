package crontasks_test

import (
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// The row shows the overlap policy in force, pause_after_failures, the
// slots failed in a row and why the task paused itself (DESIGN §8.4):
// pause_reason "failures" while paused so, null after the resume and for
// a user's pause.
func TestRowPauseReason(t *testing.T) {
	id := uuid.MustParse("0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa")
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var row *crontasks.Task
	v := uint64(0)
	fold := func(e events.Event) {
		t.Helper()
		v++
		at = at.Add(time.Second)
		var err error
		if row, err = crontasks.Evolve(row, events.Metadata{Stream: events.TaskStream(id), Version: v, At: at}, e); err != nil {
			t.Fatal(err)
		}
	}
	fold(events.TaskCreated{TaskID: id, Name: "n", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
		Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Second), NextRun: at.Add(time.Minute),
		Policy: events.Policy{Overlap: events.OverlapBufferOne, PauseAfterFailures: 2}})
	if row.Overlap != "buffer_one" || row.PauseAfterFailures == nil || *row.PauseAfterFailures != 2 || row.PauseReason != nil {
		t.Fatalf("created: overlap %q, pause_after_failures %v, pause_reason %v", row.Overlap, row.PauseAfterFailures, row.PauseReason)
	}
	for n := 1; n <= 2; n++ {
		rid := events.RunID(id, n)
		fold(events.RunEnqueued{RunID: rid, Run: n, Due: at, Slot: at, NextRun: at.Add(time.Minute)})
		fold(events.RunStarted{RunID: rid, Run: n, Deadline: at.Add(30 * time.Second)})
		fold(events.RunFailed{RunID: rid, Run: n, Error: "boom"})
	}
	if row.ConsecutiveFailures != 2 || row.PauseReason != nil {
		t.Fatalf("two failed slots: consecutive_failures %d, pause_reason %v", row.ConsecutiveFailures, row.PauseReason)
	}
	fold(events.TaskPaused{Reason: events.PauseFailures, Failures: 2})
	if row.Status != crontasks.StatusPaused || row.PauseReason == nil || *row.PauseReason != "failures" {
		t.Fatalf("paused by failures: status %q, pause_reason %v", row.Status, row.PauseReason)
	}
	fold(events.TaskResumed{NextRun: at})
	if row.PauseReason != nil || row.ConsecutiveFailures != 0 {
		t.Fatalf("resumed: pause_reason %v, consecutive_failures %d", row.PauseReason, row.ConsecutiveFailures)
	}
	fold(events.TaskPaused{})
	if row.Status != crontasks.StatusPaused || row.PauseReason != nil {
		t.Fatalf("a user's pause: status %q, pause_reason %v", row.Status, row.PauseReason)
	}
}
