package taskstate_test

import (
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/taskstate"
	"github.com/google/uuid"
)

// A stream written before schedules (schema 1 bodies) replays to the state
// it always had: an interval task whose slots are its nextRuns, with every
// open run's slot its due time, and none of the cron fields set.
func TestSchemaOneStreamReplays(t *testing.T) {
	id := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	run := events.RunID(id, 1).String()
	bodies := []struct {
		typ, body string
		at        time.Duration
	}{
		{"TaskCreated", `{"task_id":"` + id.String() + `","name":"poll","owner":"o","kind":"noop","schedule":{"interval":"1m0s"},"tolerance":"5s","timebox":"30s","priority":0,"next_run":"2026-11-22T00:00:30Z"}`, 0},
		{"RunEnqueued", `{"run_id":"` + run + `","run":1,"due":"2026-11-22T00:00:30Z","next_run":"2026-11-22T00:01:30Z","missed":0,"priority":0}`, 30 * time.Second},
		{"TaskPaused", `{}`, 40 * time.Second},
		{"TaskResumed", `{"next_run":"2026-11-22T00:05:00Z"}`, 5 * time.Minute},
	}
	var recs []events.Recorded
	for i, b := range bodies {
		recs = append(recs, events.Recorded{Metadata: events.Metadata{Stream: events.TaskStream(id), Version: uint64(i), At: t0.Add(b.at)},
			Type: b.typ, Schema: 1, Data: []byte(b.body)})
	}
	s, err := taskstate.Replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	next := t0.Add(5 * time.Minute)
	if s.Status != taskstate.StatusActive || !s.NextRun.Equal(next) || !s.NextSlot.Equal(next) || s.NextSpacing != 0 ||
		s.Scheduled != 1 || s.Runs != 1 || !s.Spec.Schedule.IsInterval() || s.Interval() != time.Minute {
		t.Fatalf("state %+v", s)
	}
	if r := s.Open[0]; !r.Slot.Equal(r.Due) || r.Spacing != 0 || s.Spacing(r) != time.Minute {
		t.Fatalf("open run %+v", r)
	}
}
