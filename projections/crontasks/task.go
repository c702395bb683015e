package crontasks

import (
	"encoding/json"
	"errors"
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

// Outcomes of a run (Outcome.Outcome).
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
	OutcomeForcedEnd = "forced_end"
	OutcomeDropped   = "dropped"
)

// ErrOrphanEvent: a task stream has an event before its TaskCreated.
var ErrOrphanEvent = errors.New("crontasks: event of a task that was never created")

// Task is one row of the cron_tasks view, as the HTTP API returns it.
// Times are UTC; durations are Go duration strings in JSON.
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
	// Status is active, paused or deleted.
	Status string `json:"status"`
	// NextRun is when the task is next due; LastRun the start of the latest
	// run that started (nil before the first).
	NextRun *time.Time `json:"next_run"`
	LastRun *time.Time `json:"last_run"`
	// RunCount counts runs enqueued; each ends in exactly one of completed,
	// dropped, forced or failed, and PendingCount are those not ended yet
	// (queued or running).
	RunCount       int64 `json:"run_count"`
	StartedCount   int64 `json:"started_count"`
	CompletedCount int64 `json:"completed_count"`
	DroppedCount   int64 `json:"dropped_count"`
	ForcedCount    int64 `json:"forced_count"`
	FailedCount    int64 `json:"failed_count"`
	PendingCount   int64 `json:"pending_count"`
	// MissedCount sums the whole intervals skipped by enqueues after
	// downtime (R8).
	MissedCount int64 `json:"missed_count"`
	// Checkpoint is the latest one saved by a run, handed to the next (R5).
	Checkpoint json.RawMessage `json:"checkpoint"`
	// LastOutcome is how the latest run that ended, ended.
	LastOutcome *Outcome   `json:"last_outcome"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	DeletedAt   *time.Time `json:"deleted_at,omitempty"`
	// DeleteReason says why in words (e.g. the owner was deleted).
	DeleteReason string `json:"delete_reason,omitempty"`
	// Version is the stream version of the last event folded, Position its
	// global position (events.Position.String form).
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

func tp(t time.Time) *time.Time { t = t.UTC(); return &t }

func keepCheckpoint(t *Task, cp json.RawMessage) {
	if len(cp) > 0 && string(cp) != "null" {
		t.Checkpoint = append(json.RawMessage(nil), cp...)
	}
}

// Evolve folds one event of a task into its row and returns the new row.
// cur is nil before the task's TaskCreated. It is pure: the view, AsOf and
// tests all fold through it.
func Evolve(cur *Task, m events.Metadata, ev events.Event) (*Task, error) {
	at := m.At.UTC()
	var t Task
	if cur != nil {
		t = *cur
	} else if c, ok := ev.(events.TaskCreated); ok {
		t = Task{ID: c.TaskID, CreatedAt: at}
	} else {
		return nil, fmt.Errorf("%w: %s %s@%d", ErrOrphanEvent, ev.EventType(), m.Stream, m.Version)
	}
	end := func(run int, id uuid.UUID, outcome, reason, detail string) {
		t.LastOutcome = &Outcome{Run: run, RunID: id, Outcome: outcome, At: at, Reason: reason, Detail: detail}
	}
	switch e := ev.(type) {
	case events.TaskCreated:
		t.Name, t.Owner, t.Kind, t.Payload = e.Name, e.Owner, e.Kind, e.Payload
		t.Interval, t.Tolerance, t.Timebox, t.Priority = e.Schedule.Interval, e.Tolerance, e.Timebox, e.Priority
		t.Status = StatusActive
		if !e.NextRun.IsZero() {
			t.NextRun = tp(e.NextRun)
		}
	case events.TaskUpdated:
		t.Payload = e.Payload
		t.Interval, t.Tolerance, t.Timebox, t.Priority = e.Schedule.Interval, e.Tolerance, e.Timebox, e.Priority
		if !e.NextRun.IsZero() { // an update without one keeps the old nextRun
			t.NextRun = tp(e.NextRun)
		}
	case events.TaskPaused:
		t.Status = StatusPaused
	case events.TaskResumed:
		t.Status = StatusActive
		if !e.NextRun.IsZero() {
			t.NextRun = tp(e.NextRun)
		}
	case events.TaskDeleted:
		t.Status, t.DeletedAt, t.DeleteReason = StatusDeleted, tp(at), e.Reason
	case events.RunEnqueued:
		t.RunCount++
		t.MissedCount += int64(e.Missed)
		t.NextRun = tp(e.NextRun)
	case events.RunStarted:
		t.StartedCount++
		t.LastRun = tp(at)
	case events.RunCompleted:
		t.CompletedCount++
		keepCheckpoint(&t, e.Checkpoint)
		end(e.Run, e.RunID, OutcomeCompleted, "", "")
	case events.RunFailed:
		t.FailedCount++
		keepCheckpoint(&t, e.Checkpoint)
		end(e.Run, e.RunID, OutcomeFailed, "", e.Error)
	case events.RunDropped:
		t.DroppedCount++
		end(e.Run, e.RunID, OutcomeDropped, e.Reason, e.Detail)
	case events.RunForcedEnd:
		t.ForcedCount++
		keepCheckpoint(&t, e.Checkpoint)
		end(e.Run, e.RunID, OutcomeForcedEnd, e.Reason, e.Detail)
	case events.CheckpointSaved:
		keepCheckpoint(&t, e.Checkpoint)
	default:
		return nil, fmt.Errorf("crontasks: %s %s@%d: no rule to fold this event type", ev.EventType(), m.Stream, m.Version)
	}
	t.PendingCount = t.RunCount - t.CompletedCount - t.DroppedCount - t.ForcedCount - t.FailedCount
	t.UpdatedAt = at
	t.Version = m.Version
	t.Position = m.Position.String()
	return &t, nil
}

// UnmarshalJSON reads a row, turning a null payload or checkpoint back into
// nil, so a row read from the view equals the row that was folded.
func (t *Task) UnmarshalJSON(b []byte) error {
	type plain Task
	if err := json.Unmarshal(b, (*plain)(t)); err != nil {
		return err
	}
	if string(t.Payload) == "null" {
		t.Payload = nil
	}
	if string(t.Checkpoint) == "null" {
		t.Checkpoint = nil
	}
	return nil
}
