package rules

import (
	"encoding/json"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Command is something asked of a task.
type Command interface{ command() }

// Create makes the task. Zero Tolerance and Timebox take their defaults
// (see Defaults); FirstRun is the first nextRun. Creating a deleted task
// starts a new incarnation (see package events/taskstate): the runs of the
// old one still waiting are dropped (reason deleted) in the same decision.
type Create struct {
	TaskID   uuid.UUID
	Spec     Spec
	FirstRun time.Time
}

// Update changes some of the spec, decided against the task's current
// state: a nil field keeps the current value. A new Interval takes the
// default tolerance and timebox for it unless Tolerance or Timebox is given
// too. NextRun moves nextRun. An update that changes nothing records
// nothing.
type Update struct {
	// Payload, when not nil, replaces the payload (JSON null clears it).
	Payload   json.RawMessage
	Interval  *time.Duration
	Tolerance *time.Duration
	Timebox   *time.Duration
	Priority  *int
	NextRun   *time.Time
	// Cron or At, when not nil, makes the task a cron or an at task with
	// that schedule (Interval makes it an interval task); at most one of
	// the three. Timezone, DSTGap, DSTOverlap and Exclude (an empty list
	// clears it), when not nil, replace the schedule's; a new Cron keeps the
	// old cron schedule's DST policies and exclude list. StartAt and EndAt (the zero time clears one), MaxRuns and
	// Jitter (0 clears) replace the window's. A change of any of them is a
	// reschedule: nextRun is recomputed from the new schedule as of the
	// update (for an interval task whose kind stays, only a window that
	// excludes it moves it), and tolerance and timebox take their defaults
	// for it unless given too.
	Cron                         *[]string
	At                           *[]time.Time
	Timezone, DSTGap, DSTOverlap *string
	Exclude                      *[]string
	StartAt, EndAt               *time.Time
	MaxRuns                      *int
	Jitter                       *time.Duration
	// MaxWaiting, when not nil, replaces the bound on waiting runs (R18);
	// 0 restores the default.
	MaxWaiting *int
	// Queue, Retry, MissedRunPolicy, MissedAfter, StartDeadline and
	// HeartbeatTimeout, when not nil, replace the task's run policy fields
	// (R12–R16); an empty string or zero duration restores the default, a
	// Retry with MaxAttempts 1 turns retries off.
	Queue            *string
	Retry            *events.Retry
	MissedRunPolicy  *string
	MissedAfter      *time.Duration
	StartDeadline    *time.Duration
	HeartbeatTimeout *time.Duration
	// Overlap, when not nil, replaces the task's overlap ("" restores
	// skip); PauseAfterFailures its pause_after_failures (0: never pause).
	Overlap            *string
	PauseAfterFailures *int
	// HistoryRetention, when not nil, replaces the task's history
	// retention (DESIGN §8.3); 0 restores the scheduler's default.
	HistoryRetention *time.Duration
	// PayloadKind, when set, is the kind the new Payload was checked for
	// (by the kind's handler, outside the rules): a task of another kind —
	// deleted and created again since — refuses the update.
	PayloadKind string
	// IfVersion, when set, is the version the task must be at (see
	// VersionMismatchError).
	IfVersion *uint64
}

// Pause stops enqueueing (R7). Pausing a paused task changes nothing.
type Pause struct{ IfVersion *uint64 }

// Resume lets a paused task enqueue again; if its nextRun passed while
// paused it falls due at the next tick, without counting missed intervals.
type Resume struct{ IfVersion *uint64 }

// Delete ends the task (R6, R7). Deleting a deleted task changes nothing.
type Delete struct {
	Reason    string
	IfVersion *uint64
}

// Tick is the clock's tick (R1, R8).
type Tick struct{}

// RequestStart is a worker asking to start a waiting run (R3, R7).
// Buffered is the run the actor holds waiting for the running run's
// outcome under overlap buffer_one, if any (see Buffer): holding is not
// recorded, so the actor says which run it holds.
type RequestStart struct {
	RunID    uuid.UUID
	Buffered uuid.UUID
}

// Complete records a run that ended without error.
type Complete struct {
	RunID      uuid.UUID
	Checkpoint json.RawMessage
}

// Fail records a run whose handler returned an error or panicked. Fatal:
// the handler marked the error as not retryable (R13).
type Fail struct {
	RunID      uuid.UUID
	Error      string
	Checkpoint json.RawMessage
	Fatal      bool
}

// Trigger enqueues one run now, outside the schedule (R15). A paused,
// finished or deleted task refuses it with ErrCannotTrigger.
type Trigger struct{}

// Heartbeat says a running run is alive (R16). It records nothing.
type Heartbeat struct{ RunID uuid.UUID }

// SaveCheckpoint records progress of a running run (R5).
type SaveCheckpoint struct {
	RunID      uuid.UUID
	Checkpoint json.RawMessage
}

// ForceEnd ends a started run whose deadline passed (R4, R9), or that
// stopped heartbeating (R16). Reason is events.ForcedTimebox,
// events.ForcedProcessLost or events.ForcedHeartbeat.
type ForceEnd struct {
	RunID  uuid.UUID
	Reason string
	// LastHeartbeat is, for events.ForcedHeartbeat, when the run last
	// heartbeated as the actor saw it (its start counts; heartbeats are
	// not recorded): the run is forced to end only once LastHeartbeat +
	// the task's heartbeat_timeout has passed.
	LastHeartbeat time.Time
}

func (Create) command()         {}
func (Update) command()         {}
func (Pause) command()          {}
func (Resume) command()         {}
func (Delete) command()         {}
func (Tick) command()           {}
func (RequestStart) command()   {}
func (Complete) command()       {}
func (Fail) command()           {}
func (SaveCheckpoint) command() {}
func (ForceEnd) command()       {}
func (Trigger) command()        {}
func (Heartbeat) command()      {}
