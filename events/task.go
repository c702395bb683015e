package events

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
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

// UnmarshalJSON parses a duration string; JSON null leaves d as it is,
// as encoding/json does for the types it knows.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
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

// Schedule says when a task falls due, as the user wrote it. Exactly one
// kind is set: Interval (R1), Cron (one or more expressions read in
// Timezone, their slots united) or At (a list of instants). Timezone,
// DSTGap, DSTOverlap and Exclude qualify Cron (and Timezone names the zone
// slots are shown in). The compiled form lives in package actors/task/schedule; events
// keep the text, and the slots a decision found are recorded on the run
// events, so a replay never recomputes them from a newer tz database.
type Schedule struct {
	Interval   Duration    `json:"interval,omitempty"`
	Cron       []string    `json:"cron,omitempty"`
	At         []time.Time `json:"at,omitempty"`
	Timezone   string      `json:"timezone,omitempty"`
	DSTGap     string      `json:"dst_gap,omitempty"`
	DSTOverlap string      `json:"dst_overlap,omitempty"`
	// Exclude lists dates (2026-12-25) and cron expressions whose wall
	// times are no slots of Cron (DESIGN §8.4).
	Exclude []string `json:"exclude,omitempty"`
}

// IsInterval reports an interval schedule (R1–R9 exactly as written).
func (s Schedule) IsInterval() bool { return len(s.Cron) == 0 && len(s.At) == 0 }

// Kind names the schedule's kind: "interval", "cron" or "at".
func (s Schedule) Kind() string {
	switch {
	case len(s.Cron) > 0:
		return "cron"
	case len(s.At) > 0:
		return "at"
	}
	return "interval"
}

// Equal reports whether two schedules are written the same.
func (s Schedule) Equal(o Schedule) bool {
	if s.Interval != o.Interval || s.Timezone != o.Timezone || s.DSTGap != o.DSTGap || s.DSTOverlap != o.DSTOverlap ||
		len(s.Cron) != len(o.Cron) || len(s.At) != len(o.At) || !slices.Equal(s.Exclude, o.Exclude) {
		return false
	}
	for i := range s.Cron {
		if s.Cron[i] != o.Cron[i] {
			return false
		}
	}
	for i := range s.At {
		if !s.At[i].Equal(o.At[i]) {
			return false
		}
	}
	return true
}

// Window is what bounds a task's slots, for every schedule kind (R10, R17):
// no slot before StartAt or after EndAt, at most MaxRuns scheduled runs
// (0: no limit), and every slot moved later by a deterministic offset in
// [0, Jitter).
type Window struct {
	StartAt *time.Time `json:"start_at,omitempty"`
	EndAt   *time.Time `json:"end_at,omitempty"`
	MaxRuns int        `json:"max_runs,omitempty"`
	Jitter  Duration   `json:"jitter,omitempty"`
}

// Start is StartAt, or the zero time.
func (w Window) Start() time.Time { return deref(w.StartAt) }

// End is EndAt, or the zero time.
func (w Window) End() time.Time { return deref(w.EndAt) }

// Equal reports whether two windows say the same.
func (w Window) Equal(o Window) bool {
	return w.Start().Equal(o.Start()) && w.End().Equal(o.End()) && w.MaxRuns == o.MaxRuns && w.Jitter == o.Jitter
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// TimePtr is t, or nil for the zero time: how optional instants travel.
func TimePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// Policy is how a task's runs are run (R12–R16), for every schedule kind.
// Every field is optional; its zero value is the default, so events
// written before policies read as the defaults.
type Policy struct {
	// Queue names the queue the task's runs wait in ("" is DefaultQueue).
	Queue string `json:"queue,omitempty"`
	// Retry, when set with MaxAttempts > 1, retries failed runs (R13).
	Retry *Retry `json:"retry,omitempty"`
	// MissedRunPolicy is MissedRunOnce ("" means it) or MissedSkip (R14).
	MissedRunPolicy string `json:"missed_run_policy,omitempty"`
	// MissedAfter: a slot is missed when the tick that finds it is later
	// than slot + MissedAfter (0: one spacing) (R14).
	MissedAfter Duration `json:"missed_after,omitempty"`
	// StartDeadline, when set: a worker asking later than slot +
	// StartDeadline gets the run dropped with reason DropTooLate (R14).
	StartDeadline Duration `json:"start_deadline,omitempty"`
	// HeartbeatTimeout, when set: a running run that has not heartbeated
	// for this long is forced to end with ForcedHeartbeat (R16).
	HeartbeatTimeout Duration `json:"heartbeat_timeout,omitempty"`
	// Overlap is what R12 does when a run asks to start while another run
	// of the task is running (DESIGN §8.4): OverlapSkip ("" means it),
	// OverlapBufferOne, OverlapCancelOther or OverlapAllow.
	Overlap string `json:"overlap,omitempty"`
	// PauseAfterFailures, when set (≥ 1), pauses the task once the runs of
	// that many consecutive slots have failed, each after its retries
	// (DESIGN §8.4): TaskPaused with PauseFailures.
	PauseAfterFailures int `json:"pause_after_failures,omitempty"`
}

// Retry is R13's retry policy: attempt n+1 of a failed run falls due
// min(InitialBackoff × Multiplier^(n-1), MaxBackoff) after the failure.
type Retry struct {
	MaxAttempts    int      `json:"max_attempts"`
	InitialBackoff Duration `json:"initial_backoff"`
	MaxBackoff     Duration `json:"max_backoff"`
	Multiplier     float64  `json:"multiplier"`
}

// Equal reports whether two policies say the same.
func (p Policy) Equal(o Policy) bool {
	if (p.Retry == nil) != (o.Retry == nil) || (p.Retry != nil && *p.Retry != *o.Retry) {
		return false
	}
	return p.Queue == o.Queue && p.MissedRunPolicy == o.MissedRunPolicy && p.MissedAfter == o.MissedAfter &&
		p.StartDeadline == o.StartDeadline && p.HeartbeatTimeout == o.HeartbeatTimeout &&
		p.Overlap == o.Overlap && p.PauseAfterFailures == o.PauseAfterFailures
}

// QueueName is the queue the task's runs wait in.
func (p Policy) QueueName() string {
	if p.Queue == "" {
		return DefaultQueue
	}
	return p.Queue
}

// Policy words.
const (
	// DefaultQueue is the queue of a task that names none.
	DefaultQueue = "default"
	// MissedRunOnce: R8, a missed slot still gets one run (the default).
	MissedRunOnce = "run_once"
	// MissedSkip: R14, a missed slot runs nothing; nextRun moves on.
	MissedSkip = "skip"
	// TriggerManual marks a run enqueued by a manual trigger (R15).
	TriggerManual = "manual"
	// TriggerBackfill marks a run enqueued for a past slot by a backfill
	// (DESIGN §8.4); its Slot is that slot.
	TriggerBackfill = "backfill"
	// OverlapSkip: R12 as written, a run asking while another runs is
	// dropped (reason DropOverlap). The default.
	OverlapSkip = "skip"
	// OverlapBufferOne: the asking run waits until the running run has its
	// outcome, then starts; at most one run waits so, a further one is
	// dropped (DropOverlap).
	OverlapBufferOne = "buffer_one"
	// OverlapCancelOther: the running run is forced to end (ForcedReplaced)
	// and its handler's context cancelled; then the asking run starts.
	OverlapCancelOther = "cancel_other"
	// OverlapAllow: R12 off, runs of the task may run at once.
	OverlapAllow = "allow"
	// PauseFailures is TaskPaused.Reason when the task paused itself after
	// Policy.PauseAfterFailures consecutive failed slots.
	PauseFailures = "failures"
)

// Reasons a run is dropped (RunDropped.Reason).
const (
	// DropOverlap: R12, another run of the task was running when this one
	// asked to start.
	DropOverlap = "overlap"
	// DropTooLate: R14, the run asked to start later than its slot +
	// start_deadline.
	DropTooLate = "too_late"
	// DropTooSoon: R3, the run asked to start before lastRun + interval - tolerance.
	DropTooSoon = "too_soon"
	// DropPaused: R7, the task was paused when the run asked to start.
	DropPaused = "paused"
	// DropDeleted: R7, the task was deleted when the run asked to start.
	DropDeleted = "deleted"
)

// Task statuses as recorded words (the view's status column).
const (
	// StatusFinished: R10, the task has no slot left.
	StatusFinished = "finished"
)

// Reasons a run is enqueued (RunEnqueued.Reason); empty for the plain R1
// case.
const (
	// EnqueueBacklog: R18, the task was due while it already had max_waiting
	// runs waiting; this run was enqueued once room freed up, and its Missed
	// counts from the nextRun kept meanwhile.
	EnqueueBacklog = "backlog"
)

// DefaultMaxWaiting is the bound on a task's waiting runs when its events
// name none (R18): absent or 0 means this.
const DefaultMaxWaiting = 3

// Reasons a run is forced to end (RunForcedEnd.Reason).
const (
	// ForcedTimebox: R4, the run was still going at its deadline.
	ForcedTimebox = "timebox_exceeded"
	// ForcedProcessLost: R9, the process running it died; found on recovery
	// after the deadline had passed.
	ForcedProcessLost = "process_lost"
	// ForcedHeartbeat: R16, the run did not heartbeat within the task's
	// heartbeat_timeout.
	ForcedHeartbeat = "heartbeat_timeout"
	// ForcedReplaced: the task's overlap is OverlapCancelOther and another
	// run asked to start while this one was running; its handler's context
	// is cancelled and the other run starts.
	ForcedReplaced = "replaced"
)

// TaskCreated starts a task stream.
type TaskCreated struct {
	TaskID   uuid.UUID       `json:"task_id"`
	Name     string          `json:"name"`
	Owner    string          `json:"owner"`
	Kind     string          `json:"kind"`
	Payload  json.RawMessage `json:"payload,omitempty"`
	Schedule Schedule        `json:"schedule"`
	// Window bounds the slots (schema 2; absent in schema 1).
	Window
	Tolerance Duration `json:"tolerance"`
	Timebox   Duration `json:"timebox"`
	Priority  int      `json:"priority"`
	// NextRun is the first time the task is due.
	NextRun time.Time `json:"next_run"`
	// NextSlot is the slot NextRun stands for when jitter moved it (R17);
	// absent when they are the same.
	NextSlot *time.Time `json:"next_slot,omitempty"`
	// MaxWaiting bounds the task's waiting runs (R18); absent (0) means
	// DefaultMaxWaiting, as for every task created before the field.
	MaxWaiting int `json:"max_waiting,omitempty"`
	// Policy is how runs are run (R12–R16); absent fields are defaults.
	Policy
	// HistoryRetention is how long the task's events are kept (DESIGN
	// §8.3); absent (0) means the scheduler's default, which keeps
	// everything unless set.
	HistoryRetention Duration `json:"history_retention,omitempty"`
}

// TaskUpdated replaces the task's spec; every field is the value after the
// update.
type TaskUpdated struct {
	Payload  json.RawMessage `json:"payload,omitempty"`
	Schedule Schedule        `json:"schedule"`
	// Window bounds the slots (schema 2; absent in schema 1).
	Window
	Tolerance Duration  `json:"tolerance"`
	Timebox   Duration  `json:"timebox"`
	Priority  int       `json:"priority"`
	NextRun   time.Time `json:"next_run"`
	// NextSlot is the slot NextRun stands for when jitter moved it.
	NextSlot *time.Time `json:"next_slot,omitempty"`
	// Rescheduled: the schedule or its window changed, so NextRun was
	// recomputed from it and the spacing starts afresh (a finished task
	// with a slot left is active again).
	Rescheduled bool `json:"rescheduled,omitempty"`
	// MaxWaiting is the bound after the update (R18); absent (0) means
	// DefaultMaxWaiting.
	MaxWaiting int `json:"max_waiting,omitempty"`
	// Policy is the run policy after the update (R12–R16).
	Policy
	// HistoryRetention is the retention after the update (DESIGN §8.3);
	// absent (0) means the scheduler's default.
	HistoryRetention Duration `json:"history_retention,omitempty"`
}

// TaskPaused stops a task from enqueueing runs (R7). A pause asked for by
// a user has no Reason; a task that paused itself says why: PauseFailures,
// with Failures the count of consecutive failed slots that reached its
// pause_after_failures. Events written before the fields read as a user's
// pause.
type TaskPaused struct {
	Reason   string `json:"reason,omitempty"`
	Failures int    `json:"failures,omitempty"`
}

// TaskResumed lets a paused task enqueue runs again from NextRun.
type TaskResumed struct {
	NextRun time.Time `json:"next_run"`
	// NextSlot and NextSpacing, for a cron or at task whose slots passed
	// while it was paused: the latest of them (run once, at resume) and
	// its spacing, so the slots of the pause are not counted as missed.
	NextSlot    *time.Time `json:"next_slot,omitempty"`
	NextSpacing Duration   `json:"next_spacing,omitempty"`
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
	// NextRun is the task's nextRun after this enqueue (tick time +
	// interval; for cron and at, the first slot after the tick plus its
	// jitter). Zero when this run is the task's last (TaskFinished follows).
	NextRun time.Time `json:"next_run"`
	// Missed counts whole intervals (slots, for cron and at) skipped
	// between Due and the tick (R8, R10).
	Missed   int `json:"missed"`
	Priority int `json:"priority"`
	// Slot is the slot this run is for: Due without its jitter (schema 2,
	// always written; a schema 1 event is upgraded with Slot = Due, and a
	// missing one reads as Due).
	Slot time.Time `json:"slot"`
	// Spacing is, for cron and at, the time between Slot and the slot
	// before it (between the instants they fall due, when jitter moves
	// them): R11's interval in R3's check (absent for the first slot and
	// for interval tasks, which use their interval).
	Spacing Duration `json:"spacing,omitempty"`
	// NextSlot is the slot NextRun stands for when jitter moved it.
	NextSlot *time.Time `json:"next_slot,omitempty"`
	// NextSpacing is the spacing of NextSlot (cron and at).
	NextSpacing Duration `json:"next_spacing,omitempty"`
	// Reason says why the run is enqueued late: EnqueueBacklog (R18).
	// Absent for a run enqueued when the task fell due.
	Reason string `json:"reason,omitempty"`
	// Attempt numbers the tries of one slot (R13): absent or 1 for the
	// first, 2 for the first retry, …
	Attempt int `json:"attempt,omitempty"`
	// RetryOf is the ID of the failed run this one retries (R13).
	RetryOf *uuid.UUID `json:"retry_of,omitempty"`
	// Trigger is TriggerManual for a run a manual trigger enqueued (R15),
	// TriggerBackfill for a run a backfill enqueued for a past slot (DESIGN
	// §8.4); such a run moves neither nextRun nor lastRun.
	Trigger string `json:"trigger,omitempty"`
}

// TaskFinished: the task has no slot left (R10: its last slot passed,
// end_at, or max_runs). Recorded in the same decision that enqueues its
// last run; the task enqueues nothing more, its open runs still end.
type TaskFinished struct {
	// Runs is the number of scheduled runs this incarnation made.
	Runs int `json:"runs"`
	// Reason says why in words, e.g. "max_runs 3 reached".
	Reason string `json:"reason"`
}

// SlotsMissed: under missed_run_policy skip (R14), a tick found the task's
// slot missed — the tick is later than the instant the slot fell due (Due:
// the slot moved by its jitter) + missed_after — and made no run for it.
// nextRun moves to the first slot after the tick (for an interval task: the
// tick's time + interval), as a RunEnqueued would move it, and the missed
// count grows by Missed. No run is enqueued, so no run number is used and
// max_runs counts nothing.
type SlotsMissed struct {
	// Due is the nextRun that fell due; Slot the slot it stands for (Due
	// without jitter).
	Due  time.Time `json:"due"`
	Slot time.Time `json:"slot"`
	// Missed counts the slots missed: this one and those passed over
	// between it and the tick (R8's count + 1).
	Missed int `json:"missed"`
	// MissedAfter is the limit in force (the task's missed_after, or one
	// spacing by default).
	MissedAfter Duration `json:"missed_after"`
	// NextRun is the task's nextRun after the tick; zero when no slot is
	// left (TaskFinished follows). NextSlot is the slot it stands for when
	// jitter moved it, NextSpacing its spacing (cron and at).
	NextRun     time.Time  `json:"next_run"`
	NextSlot    *time.Time `json:"next_slot,omitempty"`
	NextSpacing Duration   `json:"next_spacing,omitempty"`
	// Detail says it in words, with the numbers.
	Detail string `json:"detail"`
}

// BackfillRequested: a backfill (DESIGN §8.4) asked for the task's slots in
// [From, To). Slots lists them, in order (at most MaxBackfillSlots): each
// becomes a run with trigger TriggerBackfill and that slot, enqueued in
// slot order as the task has room for it (R18); the slots not enqueued yet
// wait in the task's state (package taskstate), which a RunEnqueued with
// trigger TriggerBackfill takes the first of. The runs of the same
// decision follow it. Deleting or creating the task again forgets the
// slots still waiting.
type BackfillRequested struct {
	From  time.Time   `json:"from"`
	To    time.Time   `json:"to"`
	Slots []time.Time `json:"slots"`
}

// MaxBackfillSlots is the most slots one backfill may ask for.
const MaxBackfillSlots = 1000

// TaskCompacted: history retention (DESIGN §8.3) removes every event of
// the task's stream before this one. It carries the task's state folded up
// to the event before it, so a stream that now begins with it folds from
// that state (the fold sets state := State and goes on), and a fold of the
// whole stream, which already holds that state there, is unchanged by it.
// The removal itself happens once the last event it covers is older than
// the task's retention (docs/decisions/0023-retention.md); until then the
// events before it stay readable.
type TaskCompacted struct {
	// State is the folded state in package taskstate's binary form (its
	// first byte is the form's version; the reader keeps reading every
	// version), base64 in JSON.
	State []byte `json:"state"`
	// Events counts the events it covers: versions FromVersion through
	// ToVersion, decided between FromAt and ToAt.
	Events      int       `json:"events"`
	FromVersion uint64    `json:"from_version"`
	ToVersion   uint64    `json:"to_version"`
	FromAt      time.Time `json:"from_at"`
	ToAt        time.Time `json:"to_at"`
	// Retention is the task's history retention when it was decided.
	Retention Duration `json:"retention"`
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
	// Fatal: the handler marked the error as not retryable (R13).
	Fatal bool `json:"fatal,omitempty"`
	// RetryAt, when set, is when the retry of this run falls due (R13):
	// it is enqueued on the first tick at or after it, with the backoff
	// chosen in Backoff.
	RetryAt *time.Time `json:"retry_at,omitempty"`
	Backoff Duration   `json:"backoff,omitempty"`
	// NoRetry says in words why a task with a retry policy does not retry
	// this run (attempts used up, not retryable, past the next slot).
	NoRetry string `json:"no_retry,omitempty"`
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
	// RetryAt, when set, is when the retry of this run falls due (R13):
	// it is enqueued on the first tick at or after it, with the backoff
	// chosen in Backoff.
	RetryAt *time.Time `json:"retry_at,omitempty"`
	Backoff Duration   `json:"backoff,omitempty"`
	// NoRetry says in words why a task with a retry policy does not retry
	// this run (attempts used up, not retryable, past the next slot).
	NoRetry string `json:"no_retry,omitempty"`
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
func (TaskFinished) EventType() string    { return "TaskFinished" }
func (SlotsMissed) EventType() string     { return "SlotsMissed" }
func (TaskCompacted) EventType() string   { return "TaskCompacted" }
func (BackfillRequested) EventType() string {
	return "BackfillRequested"
}

func (e TaskCreated) check() error {
	for _, f := range []struct {
		name    string
		missing bool
	}{
		{"task_id", e.TaskID == uuid.Nil},
		{"name", e.Name == ""},
		{"owner", e.Owner == ""},
		{"kind", e.Kind == ""},
		{"timebox", e.Timebox <= 0},
		{"next_run", e.NextRun.IsZero()},
	} {
		if err := required(f.name, f.missing); err != nil {
			return err
		}
		if f.name == "kind" {
			if err := checkSchedule(e.Schedule); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkSchedule: exactly one schedule kind; a missing one is reported as
// the interval, as schema 1 required.
func checkSchedule(s Schedule) error {
	switch s.count() {
	case 0:
		return required("schedule.interval", true)
	case 1:
		return nil
	}
	return &fieldError{field: "schedule", err: ErrMalformed}
}

func (s Schedule) count() int {
	n := 0
	if s.Interval > 0 {
		n++
	}
	if len(s.Cron) > 0 {
		n++
	}
	if len(s.At) > 0 {
		n++
	}
	return n
}

func (e TaskUpdated) check() error {
	if err := checkSchedule(e.Schedule); err != nil {
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

func (e RunEnqueued) check() error       { return checkRun(e.RunID, e.Run) }
func (e SlotsMissed) check() error       { return required("due", e.Due.IsZero()) }
func (e BackfillRequested) check() error { return required("slots", len(e.Slots) == 0) }
func (e TaskCompacted) check() error {
	if err := required("state", len(e.State) == 0); err != nil {
		return err
	}
	return required("events", e.Events < 1)
}
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
// The name is the task ID's text form, "/" and n in decimal.
func RunID(task uuid.UUID, n int) uuid.UUID {
	var buf [16 + 36 + 1 + 20]byte
	b := append(buf[:0], runIDNamespace[:]...)
	b = AppendUUID(b, task)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(n), 10)
	return sha1UUID(b)
}
