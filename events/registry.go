package events

import (
	"encoding/json"
	"errors"
)

// Default is the registry of every event type the scheduler writes: the one
// place that maps stable type names to Go types and schema versions.
//
// To change an event's body, bump its schema version here and add an
// Upgrader from the previous version; stored events of older versions are
// upgraded when read. Golden streams under testdata/ must keep decoding.
var Default = func() *Registry {
	r := NewRegistry()
	// Still schema 1: the schedule kinds cron and at, the window (start_at,
	// end_at, max_runs, jitter), next_slot and rescheduled are optional
	// fields, and a body written before them is an interval task with no
	// window, as it was.
	r.Register(TaskCreated{}, 1, nil)
	r.Register(TaskUpdated{}, 1, nil)
	// Still schema 1: reason and failures (a task that paused itself, DESIGN
	// §8.4) are optional, and a body without them is a user's pause.
	r.Register(TaskPaused{}, 1, nil)
	r.Register(TaskResumed{}, 1, nil)
	r.Register(TaskDeleted{}, 1, nil)
	// Schema 2: slot (required), spacing, next_slot and next_spacing. A
	// schema 1 run was an interval task's without jitter: its slot is its
	// due time.
	r.Register(RunEnqueued{}, 2, map[int]Upgrader{1: runEnqueuedV1})
	r.Register(RunStarted{}, 1, nil)
	r.Register(RunCompleted{}, 1, nil)
	r.Register(RunFailed{}, 1, nil)
	r.Register(RunDropped{}, 1, nil)
	r.Register(RunForcedEnd{}, 1, nil)
	r.Register(CheckpointSaved{}, 1, nil)
	r.Register(TaskFinished{}, 1, nil)
	// Run policies (R14): a slot skipped under missed_run_policy skip.
	r.Register(SlotsMissed{}, 1, nil)
	// History retention (DESIGN §8.3): the state at a cut.
	r.Register(TaskCompacted{}, 1, nil)
	// Backfill (DESIGN §8.4): past slots asked for.
	r.Register(BackfillRequested{}, 1, nil)
	return r
}()

// runEnqueuedV1 adds slot = due to a schema 1 RunEnqueued.
func runEnqueuedV1(b []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("body is not an object")
	}
	if due, ok := m["due"]; ok {
		if _, has := m["slot"]; !has {
			m["slot"] = due
		}
	}
	return json.Marshal(m)
}
