package events

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Duration is a time.Duration that travels in JSON as a Go duration string
// ("90s", "1m0s").
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON renders the duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON parses a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"90s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Schedule says when a task falls due. Exactly one kind is set; today that
// is always Interval. New kinds (cron expressions, one-time, date lists) are
// added as new optional fields.
type Schedule struct {
	Interval Duration `json:"interval"`
}

// Reasons a run is dropped (RunDropped.Reason).
const (
	// DropTooSoon: R3, the run asked to start before lastRun + interval - tolerance.
	DropTooSoon = "too_soon"
	// DropPaused: R7, the task was paused when the run asked to start.
	DropPaused = "paused"
	// DropDeleted: R7, the task was deleted when the run asked to start.
	DropDeleted = "deleted"
)

// Reasons a run is forced to end (RunForcedEnd.Reason).
const (
	// ForcedTimebox: R4, the run was still going at its deadline.
	ForcedTimebox = "timebox_exceeded"
	// ForcedProcessLost: R9, the process running it died; found on recovery
	// after the deadline had passed.
	ForcedProcessLost = "process_lost"
)

// TaskCreated starts a task stream.
type TaskCreated struct {
	TaskID    uuid.UUID       `json:"task_id"`
	Name      string          `json:"name"`
	Owner     string          `json:"owner"`
	Kind      string          `json:"kind"`
	Payload   json.RawMessage `json:"payload,omitempty"`
	Schedule  Schedule        `json:"schedule"`
	Tolerance Duration        `json:"tolerance"`
	Timebox   Duration        `json:"timebox"`
	Priority  int             `json:"priority"`
	// NextRun is the first time the task is due.
	NextRun time.Time `json:"next_run"`
}

// TaskUpdated replaces the task's spec; every field is the value after the
// update.
type TaskUpdated struct {
	Payload   json.RawMessage `json:"payload,omitempty"`
	Schedule  Schedule        `json:"schedule"`
	Tolerance Duration        `json:"tolerance"`
	Timebox   Duration        `json:"timebox"`
	Priority  int             `json:"priority"`
	NextRun   time.Time       `json:"next_run"`
}

// TaskPaused stops a task from enqueueing runs (R7).
type TaskPaused struct{}

// TaskResumed lets a paused task enqueue runs again from NextRun.
type TaskResumed struct {
	NextRun time.Time `json:"next_run"`
}

// TaskDeleted ends a task (R6, R7). Reason says why in words, e.g. "owner
// channel/pop3/42 deleted".
type TaskDeleted struct {
	Reason string `json:"reason,omitempty"`
}

// RunEnqueued: a tick found the task due and put a run in the queue (R1, R2).
type RunEnqueued struct {
	RunID uuid.UUID `json:"run_id"`
	Run   int       `json:"run"`
	// Due is the nextRun that fell due.
	Due time.Time `json:"due"`
	// NextRun is the task's nextRun after this enqueue (tick time + interval).
	NextRun time.Time `json:"next_run"`
	// Missed counts whole intervals skipped between Due and the tick (R8).
	Missed   int `json:"missed"`
	Priority int `json:"priority"`
}

// RunStarted: a worker was granted permission (R3); the event's time is the
// task's new lastRun.
type RunStarted struct {
	RunID    uuid.UUID `json:"run_id"`
	Run      int       `json:"run"`
	Deadline time.Time `json:"deadline"`
}

// RunCompleted: the handler returned without error.
type RunCompleted struct {
	RunID      uuid.UUID       `json:"run_id"`
	Run        int             `json:"run"`
	Checkpoint json.RawMessage `json:"checkpoint,omitempty"`
}

// RunFailed: the handler returned an error or panicked.
type RunFailed struct {
	RunID      uuid.UUID       `json:"run_id"`
	Run        int             `json:"run"`
	Error      string          `json:"error"`
	Checkpoint json.RawMessage `json:"checkpoint,omitempty"`
}

// RunDropped: a run asked to start and was refused (R3, R7).
type RunDropped struct {
	RunID  uuid.UUID `json:"run_id"`
	Run    int       `json:"run"`
	Reason string    `json:"reason"`
	// Detail is the reason in words with its numbers.
	Detail string `json:"detail"`
	// LastRun, SinceLastStart and Needed are the numbers of a too_soon drop.
	LastRun        *time.Time `json:"last_run,omitempty"`
	SinceLastStart Duration   `json:"since_last_start,omitempty"`
	Needed         Duration   `json:"needed,omitempty"`
}

// RunForcedEnd: a started run did not end by its deadline (R4, R9). It does
// not move lastRun.
type RunForcedEnd struct {
	RunID    uuid.UUID `json:"run_id"`
	Run      int       `json:"run"`
	Deadline time.Time `json:"deadline"`
	Reason   string    `json:"reason"`
	Detail   string    `json:"detail"`
	// Checkpoint is the last one the run saved, handed to the next run (R5).
	Checkpoint json.RawMessage `json:"checkpoint,omitempty"`
}

// CheckpointSaved: a running run saved progress (R5).
type CheckpointSaved struct {
	RunID      uuid.UUID       `json:"run_id"`
	Run        int             `json:"run"`
	Checkpoint json.RawMessage `json:"checkpoint"`
}

func (TaskCreated) EventType() string     { return "TaskCreated" }
func (TaskUpdated) EventType() string     { return "TaskUpdated" }
func (TaskPaused) EventType() string      { return "TaskPaused" }
func (TaskResumed) EventType() string     { return "TaskResumed" }
func (TaskDeleted) EventType() string     { return "TaskDeleted" }
func (RunEnqueued) EventType() string     { return "RunEnqueued" }
func (RunStarted) EventType() string      { return "RunStarted" }
func (RunCompleted) EventType() string    { return "RunCompleted" }
func (RunFailed) EventType() string       { return "RunFailed" }
func (RunDropped) EventType() string      { return "RunDropped" }
func (RunForcedEnd) EventType() string    { return "RunForcedEnd" }
func (CheckpointSaved) EventType() string { return "CheckpointSaved" }

func (e TaskCreated) check() error {
	for _, f := range []struct {
		name    string
		missing bool
	}{
		{"task_id", e.TaskID == uuid.Nil},
		{"name", e.Name == ""},
		{"owner", e.Owner == ""},
		{"kind", e.Kind == ""},
		{"schedule.interval", e.Schedule.Interval <= 0},
		{"timebox", e.Timebox <= 0},
		{"next_run", e.NextRun.IsZero()},
	} {
		if err := required(f.name, f.missing); err != nil {
			return err
		}
	}
	return nil
}

func (e TaskUpdated) check() error {
	if err := required("schedule.interval", e.Schedule.Interval <= 0); err != nil {
		return err
	}
	return required("timebox", e.Timebox <= 0)
}

func checkRun(id uuid.UUID, run int) error {
	if err := required("run_id", id == uuid.Nil); err != nil {
		return err
	}
	return required("run", run < 1)
}

func (e RunEnqueued) check() error  { return checkRun(e.RunID, e.Run) }
func (e RunStarted) check() error   { return checkRun(e.RunID, e.Run) }
func (e RunCompleted) check() error { return checkRun(e.RunID, e.Run) }
func (e RunFailed) check() error    { return checkRun(e.RunID, e.Run) }
func (e CheckpointSaved) check() error {
	if err := checkRun(e.RunID, e.Run); err != nil {
		return err
	}
	return required("checkpoint", len(e.Checkpoint) == 0 || string(e.Checkpoint) == "null")
}
func (e RunDropped) check() error {
	if err := checkRun(e.RunID, e.Run); err != nil {
		return err
	}
	return required("reason", e.Reason == "")
}
func (e RunForcedEnd) check() error {
	if err := checkRun(e.RunID, e.Run); err != nil {
		return err
	}
	return required("reason", e.Reason == "")
}

// runIDNamespace scopes derived run IDs.
var runIDNamespace = uuid.MustParse("0b5a3c8e-7f0e-4d8b-b1d4-2e61b7f1c9a0")

// RunID derives the ID of run number n of a task, so that a retried enqueue
// names the same run.
func RunID(task uuid.UUID, n int) uuid.UUID {
	return uuid.NewSHA1(runIDNamespace, fmt.Appendf(nil, "%s/%d", task, n))
}
