package crontasks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Task statuses.
const (
	StatusActive  = "active"
	StatusPaused  = "paused"
	StatusDeleted = "deleted"
)

// Run outcomes (Outcome.Outcome).
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
	OutcomeDropped   = "dropped"
	OutcomeForcedEnd = "forced_end"
)

// Task is one row of the cron_tasks view, as the HTTP API returns it.
// Durations travel as Go duration strings, times as RFC 3339 UTC.
type Task struct {
	ID        uuid.UUID       `json:"id"`
	Name      string          `json:"name"`
	Owner     string          `json:"owner"`
	Kind      string          `json:"kind"`
	Payload   json.RawMessage `json:"payload"`
	Interval  events.Duration `json:"interval"`
	Tolerance events.Duration `json:"tolerance"`
	Timebox   events.Duration `json:"timebox"`
	Priority  int             `json:"priority"`
	Status    string          `json:"status"`
	// NextRun is when the task next falls due; null once deleted.
	NextRun *time.Time `json:"next_run"`
	// LastRun is the start time of the latest run that started (R3).
	LastRun *time.Time `json:"last_run"`
	// RunCount counts runs enqueued; each ends in one of the outcome counts
	// (or is still queued or running).
	RunCount       int `json:"run_count"`
	StartedCount   int `json:"started_count"`
	CompletedCount int `json:"completed_count"`
	DroppedCount   int `json:"dropped_count"`
	ForcedCount    int `json:"forced_count"`
	FailedCount    int `json:"failed_count"`
	// MissedCount sums the whole intervals skipped while down (R8).
	MissedCount int `json:"missed_count"`
	// Checkpoint is the latest checkpoint a run saved (R5); null if none.
	Checkpoint json.RawMessage `json:"checkpoint"`
	// LastOutcome is how the latest run that ended ended; null before.
	LastOutcome *Outcome  `json:"last_outcome"`
	CreatedAt   time.Time `json:"created_at"`
	// UpdatedAt is the time of the latest event of the task.
	UpdatedAt time.Time `json:"updated_at"`
	// DeleteReason says why a deleted task was deleted.
	DeleteReason string `json:"delete_reason,omitempty"`
	// Version is the stream version of the latest event applied, Position
	// its global position (as events.Position.String renders it).
	Version  uint64 `json:"version"`
	Position string `json:"position"`
}

// Outcome is how one run ended.
type Outcome struct {
	Run     int       `json:"run"`
	RunID   uuid.UUID `json:"run_id"`
	Outcome string    `json:"outcome"`
	At      time.Time `json:"at"`
	Reason  string    `json:"reason,omitempty"`
	Detail  string    `json:"detail,omitempty"`
}

func tptr(t time.Time) *time.Time {
	u := t.UTC()
	return &u
}

func cloneRaw(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

// Evolve returns the row after applying ev (stored with md) to prev; prev
// is nil before the task's first event. It does not modify prev. Events of
// streams that are not task streams yield (nil, nil) when prev is nil.
func Evolve(prev *Task, md events.Metadata, ev events.Event) (*Task, error) {
	var t Task
	if prev != nil {
		t = *prev
	} else {
		id, err := events.TaskIDFromStream(md.Stream)
		if err != nil {
			return nil, nil
		}
		t = Task{ID: id, Status: StatusActive, CreatedAt: md.At.UTC()}
	}
	at := md.At.UTC()
	outcome := func(run int, id uuid.UUID, what, reason, detail string) {
		t.LastOutcome = &Outcome{Run: run, RunID: id, Outcome: what, At: at, Reason: reason, Detail: detail}
	}
	switch e := ev.(type) {
	case events.TaskCreated:
		t.ID, t.Name, t.Owner, t.Kind = e.TaskID, e.Name, e.Owner, e.Kind
		t.Payload = cloneRaw(e.Payload)
		t.Interval, t.Tolerance, t.Timebox, t.Priority = e.Schedule.Interval, e.Tolerance, e.Timebox, e.Priority
		t.Status, t.NextRun, t.CreatedAt = StatusActive, tptr(e.NextRun), at
	case events.TaskUpdated:
		t.Payload = cloneRaw(e.Payload)
		t.Interval, t.Tolerance, t.Timebox, t.Priority = e.Schedule.Interval, e.Tolerance, e.Timebox, e.Priority
		if !e.NextRun.IsZero() && t.Status != StatusDeleted {
			t.NextRun = tptr(e.NextRun)
		}
	case events.TaskPaused:
		if t.Status != StatusDeleted {
			t.Status = StatusPaused
		}
	case events.TaskResumed:
		if t.Status != StatusDeleted {
			t.Status = StatusActive
			if !e.NextRun.IsZero() {
				t.NextRun = tptr(e.NextRun)
			}
		}
	case events.TaskDeleted:
		t.Status, t.NextRun, t.DeleteReason = StatusDeleted, nil, e.Reason
	case events.RunEnqueued:
		t.RunCount++
		t.MissedCount += e.Missed
		if t.Status != StatusDeleted {
			t.NextRun = tptr(e.NextRun)
		}
	case events.RunStarted:
		t.StartedCount++
		t.LastRun = tptr(at)
	case events.RunCompleted:
		t.CompletedCount++
		if len(e.Checkpoint) > 0 {
			t.Checkpoint = cloneRaw(e.Checkpoint)
		}
		outcome(e.Run, e.RunID, OutcomeCompleted, "", "")
	case events.RunFailed:
		t.FailedCount++
		if len(e.Checkpoint) > 0 {
			t.Checkpoint = cloneRaw(e.Checkpoint)
		}
		outcome(e.Run, e.RunID, OutcomeFailed, "", e.Error)
	case events.RunDropped:
		t.DroppedCount++
		outcome(e.Run, e.RunID, OutcomeDropped, e.Reason, e.Detail)
	case events.RunForcedEnd:
		t.ForcedCount++
		if len(e.Checkpoint) > 0 {
			t.Checkpoint = cloneRaw(e.Checkpoint)
		}
		outcome(e.Run, e.RunID, OutcomeForcedEnd, e.Reason, e.Detail)
	case events.CheckpointSaved:
		t.Checkpoint = cloneRaw(e.Checkpoint)
	default:
		return nil, fmt.Errorf("crontasks: event %s of %s: %w", ev.EventType(), md.Stream, events.ErrUnknownType)
	}
	t.UpdatedAt = at
	t.Version = md.Version
	t.Position = md.Position.String()
	return &t, nil
}

// Fold folds recorded events, in log order, into rows by task ID: the
// reference the persisted view must equal. Events of other streams are
// ignored.
func Fold(recs []events.Recorded) (map[uuid.UUID]*Task, error) {
	rows := map[uuid.UUID]*Task{}
	for _, rec := range recs {
		if err := foldInto(rows, rec); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func foldInto(rows map[uuid.UUID]*Task, rec events.Recorded) error {
	id, err := events.TaskIDFromStream(rec.Stream)
	if err != nil {
		return nil
	}
	ev, err := events.Decode(rec)
	if err != nil {
		return fmt.Errorf("crontasks: event at %s of %s: %w", rec.Position, rec.Stream, err)
	}
	next, err := Evolve(rows[id], rec.Metadata, ev)
	if err != nil {
		return err
	}
	rows[id] = next
	return nil
}
