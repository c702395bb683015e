package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Rejections. Decide returns them (wrapped with context) when a command does
// not apply to the state; test with errors.Is.
var (
	ErrNotCreated     = errors.New("rules: task does not exist")
	ErrAlreadyExists  = errors.New("rules: task already exists")
	ErrTaskDeleted    = errors.New("rules: task is deleted")
	ErrUnknownRun     = errors.New("rules: no such open run")
	ErrRunNotWaiting  = errors.New("rules: run already started")
	ErrRunNotStarted  = errors.New("rules: run has not started")
	ErrDeadlineNotDue = errors.New("rules: run's deadline has not passed")
	// ErrHeartbeatNotDue: a forced end for want of heartbeats (R16) of a
	// run that heartbeated within its task's heartbeat_timeout, or of a
	// task without one.
	ErrHeartbeatNotDue  = errors.New("rules: run's heartbeat_timeout has not passed")
	ErrInvalidSpec      = errors.New("rules: invalid task spec")
	ErrUnknownCommand   = errors.New("rules: unknown command")
	ErrEmptyCheckpoint  = errors.New("rules: checkpoint is empty")
	ErrUnknownForceKind = errors.New("rules: unknown forced-end reason")
	// ErrVersionMismatch: a command's expected version is not the task's
	// version (a stale If-Match); nothing is recorded.
	ErrVersionMismatch = errors.New("rules: task version does not match the expected one")
	// ErrCannotTrigger: a manual trigger (R15) of a task that is paused,
	// finished or deleted; the error's text says which.
	ErrCannotTrigger = errors.New("rules: the task cannot be triggered")
)

// VersionMismatchError is the rejection of a command whose IfVersion is not
// the task's version. It matches ErrVersionMismatch.
type VersionMismatchError struct {
	Expected, Actual uint64
}

func (e *VersionMismatchError) Error() string {
	return fmt.Sprintf("rules: the task is at version %d, not the expected %d", e.Actual, e.Expected)
}

// Is makes errors.Is(err, ErrVersionMismatch) true.
func (e *VersionMismatchError) Is(target error) bool { return target == ErrVersionMismatch }

// FieldError names the spec field a value is wrong for. It matches
// ErrInvalidSpec.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return fmt.Sprintf("rules: %s: %s", e.Field, e.Message) }

// Is makes errors.Is(err, ErrInvalidSpec) true.
func (e *FieldError) Is(target error) bool { return target == ErrInvalidSpec }

// Limits of a spec.
const (
	MinInterval      = time.Second
	DefaultTolerance = 5 * time.Second
	MaxPayloadBytes  = 64 << 10
	// MaxWaitingLimit is the largest bound on a task's waiting runs (R18);
	// a spec's MaxWaiting is 0 (the default, events.DefaultMaxWaiting) or
	// 1..MaxWaitingLimit.
	MaxWaitingLimit = 1000
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

// Defaults fills a spec's zero Tolerance (unless ToleranceSet) and Timebox:
// tolerance 5 s, or a tenth of the interval when that is smaller (it must
// stay below half the interval); timebox half the interval.
func Defaults(s Spec) Spec {
	iv := s.Schedule.Interval.D()
	if s.Tolerance == 0 && !s.ToleranceSet {
		s.Tolerance = min(DefaultTolerance, iv/10)
	}
	if s.Timebox == 0 {
		s.Timebox = iv / 2
	}
	return s
}

// Prepare fills a spec's defaults as of now and checks it, for a create or
// a reschedule. An interval task takes Defaults. A cron or at task (R11)
// takes tolerance 5 s, or a tenth of the shortest spacing among its next
// 1,000 slots when that is smaller, and timebox half that spacing (1 h when
// a single slot is left); its schedule must compile and have a slot
// strictly after now. Errors are *FieldError.
func Prepare(s Spec, now time.Time) (Spec, error) { return prepare(s, now, Validate) }

// prepare is Prepare with the check to run on the spec: Validate for a
// create, validateSpec for an update (which cannot change name or owner).
func prepare(s Spec, now time.Time, validate func(Spec) error) (Spec, error) {
	if s.Schedule.IsInterval() {
		s = Defaults(s)
		return s, validate(s)
	}
	if err := validateSchedule(s); err != nil {
		return s, err
	}
	c, err := Compiled(s)
	if err != nil {
		return s, err
	}
	if err := c.Live(now); err != nil {
		return s, fieldError(err)
	}
	shortest := shortestSpacing(c, now)
	if s.Tolerance == 0 && !s.ToleranceSet {
		s.Tolerance = schedule.DefaultTolerance(shortest)
	}
	if s.Timebox == 0 {
		s.Timebox = schedule.OnceTimebox
		if shortest > 0 {
			s.Timebox = shortest / 2
		}
	}
	if err := validate(s); err != nil {
		return s, err
	}
	switch {
	case shortest > 0 && atLeastHalf(s.Tolerance, shortest):
		return s, &FieldError{"tolerance", fmt.Sprintf("must be less than half the shortest spacing of the schedule (%s), got %s", shortest/2, s.Tolerance)}
	case shortest > 0 && s.Timebox > shortest:
		return s, &FieldError{"timebox", fmt.Sprintf("must not exceed the shortest spacing of the schedule (%s), got %s", shortest, s.Timebox)}
	}
	return s, nil
}

// validateSchedule checks what a spec's schedule and window say without
// compiling them: one kind, qualifiers only where they mean something.
func validateSchedule(s Spec) error {
	sc, w := s.Schedule, s.Window
	kinds := 0
	for _, set := range []bool{sc.Interval != 0, len(sc.Cron) > 0, len(sc.At) > 0} {
		if set {
			kinds++
		}
	}
	switch {
	case kinds > 1:
		return &FieldError{"schedule", "give exactly one of interval, cron and at"}
	case sc.IsInterval() && sc.Timezone != "":
		return &FieldError{"timezone", "applies to cron and at schedules, not to an interval"}
	case len(sc.Cron) == 0 && sc.DSTGap != "":
		return &FieldError{"dst_gap", "applies to cron schedules only"}
	case len(sc.Cron) == 0 && sc.DSTOverlap != "":
		return &FieldError{"dst_overlap", "applies to cron schedules only"}
	case len(sc.Cron) == 0 && len(sc.Exclude) > 0:
		return &FieldError{"exclude", "applies to cron schedules only"}
	case w.MaxRuns < 0:
		return &FieldError{"max_runs", fmt.Sprintf("must not be negative (0: no limit), got %d", w.MaxRuns)}
	case w.Jitter < 0:
		return &FieldError{"jitter", fmt.Sprintf("must not be negative, got %s", w.Jitter)}
	case !w.Start().IsZero() && !w.End().IsZero() && w.End().Before(w.Start()):
		return &FieldError{"end_at", "is before start_at"}
	}
	return nil
}

// Validate checks a spec after Defaults (an interval task) or Prepare.
// Errors are *FieldError. Names and owners follow TextProblem and
// MaxNameChars/MaxOwnerChars.
func Validate(s Spec) error {
	if err := validateIdentity(s); err != nil {
		return err
	}
	return validateSpec(s)
}

// validateSpec checks everything but the name and owner, which an update
// cannot change: a task recorded before the name rules were enforced can
// still be updated.
func validateSpec(s Spec) error {
	iv := s.Schedule.Interval.D()
	interval := s.Schedule.IsInterval()
	switch {
	case s.Kind == "":
		return &FieldError{"kind", "is required"}
	}
	if err := validateSchedule(s); err != nil {
		return err
	}
	switch {
	case interval && iv < MinInterval:
		return &FieldError{"interval", fmt.Sprintf("must be at least %s, got %s", MinInterval, iv)}
	case s.Tolerance < 0:
		return &FieldError{"tolerance", fmt.Sprintf("must not be negative, got %s", s.Tolerance)}
	case interval && atLeastHalf(s.Tolerance, iv):
		return &FieldError{"tolerance", fmt.Sprintf("must be less than half the interval (%s), got %s", iv/2, s.Tolerance)}
	case s.Timebox <= 0:
		return &FieldError{"timebox", fmt.Sprintf("must be positive, got %s", s.Timebox)}
	case interval && s.Timebox > iv:
		return &FieldError{"timebox", fmt.Sprintf("must not exceed the interval (%s), got %s", iv, s.Timebox)}
	case len(s.Payload) > MaxPayloadBytes:
		return &FieldError{"payload", fmt.Sprintf("must be at most %d bytes, got %d", MaxPayloadBytes, len(s.Payload))}
	case len(s.Payload) > 0 && !json.Valid(s.Payload):
		return &FieldError{"payload", "must be valid JSON"}
	}
	if err := validateMaxWaiting(s.MaxWaiting); err != nil {
		return err
	}
	if s.HistoryRetention < 0 {
		return &FieldError{"history_retention", fmt.Sprintf("must not be negative, got %s", s.HistoryRetention)}
	}
	return validatePolicy(s)
}

// validateMaxWaiting checks R18's bound: 0 (the default) or 1..MaxWaitingLimit.
func validateMaxWaiting(n int) error {
	if n < 0 || n > MaxWaitingLimit {
		return &FieldError{"max_waiting", fmt.Sprintf("must be between 1 and %d (0: the default, %d), got %d", MaxWaitingLimit, events.DefaultMaxWaiting, n)}
	}
	return nil
}

// Decide answers cmd at time now: the events to record (none when nothing
// changes) or a rejection. It is pure: same input, same output.
//
// The commands of every run (Tick, RequestStart, Complete) are decided on
// s through small stack frames, by functions that take it by pointer: a
// task actor decides on a goroutine that starts with a small stack, and
// frames that each hold copies of the whole State made it grow (and copy
// itself) for every decision (docs/performance.md). The other commands go
// through decide.
func Decide(s State, cmd Command, now time.Time) ([]events.Event, error) {
	if _, ok := cmd.(Create); !ok && !s.Exists() {
		return nil, ErrNotCreated
	}
	switch c := cmd.(type) {
	case Tick:
		return decideTick(&s, now), nil
	case RequestStart:
		return decideStart(&s, c, now)
	case Complete:
		return decideComplete(&s, c)
	}
	return decide(&s, cmd, now)
}

// decideComplete records the outcome of a started run that succeeded.
func decideComplete(s *State, c Complete) ([]events.Event, error) {
	r, err := startedRun(s, c.RunID)
	if err != nil {
		return nil, err
	}
	return []events.Event{events.RunCompleted{RunID: c.RunID, Run: r.Number, Checkpoint: c.Checkpoint}}, nil
}

// decide is Decide for the commands other than those of every run.
func decide(sp *State, cmd Command, now time.Time) ([]events.Event, error) {
	s := *sp
	if v := ifVersion(cmd); v != nil && *v != s.Version {
		return nil, &VersionMismatchError{Expected: *v, Actual: s.Version}
	}
	switch c := cmd.(type) {
	case Create:
		return decideCreate(s, c, now)
	case Update:
		return decideUpdate(s, c, now)
	case Pause:
		switch s.Status {
		case StatusDeleted:
			return nil, ErrTaskDeleted
		case StatusPaused, StatusFinished:
			return nil, nil
		}
		return []events.Event{events.TaskPaused{}}, nil
	case Resume:
		switch s.Status {
		case StatusDeleted:
			return nil, ErrTaskDeleted
		case StatusActive, StatusFinished:
			return nil, nil
		}
		next := s.NextRun
		if !next.Before(now) {
			return []events.Event{events.TaskResumed{NextRun: next}}, nil
		}
		res := events.TaskResumed{NextRun: now}
		if !s.Spec.Schedule.IsInterval() {
			// The slots that passed while paused: the latest runs once, at
			// the next tick, and none of them counts as missed.
			if c, err := Compiled(s.Spec); err == nil {
				if last := c.Prev(now.Add(time.Nanosecond)); !last.IsZero() && last.After(s.NextSlot) {
					var spacing time.Duration
					if prev := c.Prev(last); !prev.IsZero() {
						spacing = dueSpacing(s.ID, s.Spec.Window.Jitter.D(), prev, last)
					}
					res.NextSlot, res.NextSpacing = events.TimePtr(last), events.Duration(spacing)
				}
			}
		}
		return []events.Event{res}, nil
	case Delete:
		if s.Status == StatusDeleted {
			return nil, nil
		}
		return []events.Event{events.TaskDeleted{Reason: c.Reason}}, nil
	case Fail:
		r, err := startedRun(&s, c.RunID)
		if err != nil {
			return nil, err
		}
		f := events.RunFailed{RunID: c.RunID, Run: r.Number, Error: c.Error, Checkpoint: c.Checkpoint, Fatal: c.Fatal}
		f.RetryAt, f.Backoff, f.NoRetry = retryOf(s, r, c.Fatal, now)
		return pauseAfterFailures(&s, r, f.RetryAt != nil, f), nil
	case Trigger:
		return decideTrigger(s, now)
	case Heartbeat:
		// Heartbeats are not recorded (too frequent): the actor keeps the
		// time of a run's last one (R16). Only a running run heartbeats.
		_, err := startedRun(&s, c.RunID)
		return nil, err
	case SaveCheckpoint:
		r, err := startedRun(&s, c.RunID)
		if err != nil {
			return nil, err
		}
		if len(c.Checkpoint) == 0 || string(c.Checkpoint) == "null" {
			return nil, ErrEmptyCheckpoint
		}
		return []events.Event{events.CheckpointSaved{RunID: c.RunID, Run: r.Number, Checkpoint: c.Checkpoint}}, nil
	case ForceEnd:
		return decideForceEnd(s, c, now)
	case Compact:
		return decideCompact(s, c)
	}
	return nil, fmt.Errorf("%w: %T", ErrUnknownCommand, cmd)
}

// ifVersion is a command's expected version, if it has one.
func ifVersion(cmd Command) *uint64 {
	switch c := cmd.(type) {
	case Update:
		return c.IfVersion
	case Pause:
		return c.IfVersion
	case Resume:
		return c.IfVersion
	case Delete:
		return c.IfVersion
	}
	return nil
}

// decideUpdate applies the fields an Update sets to the current spec.
func decideUpdate(s State, c Update, now time.Time) ([]events.Event, error) {
	if s.Status == StatusDeleted {
		return nil, ErrTaskDeleted
	}
	if c.PayloadKind != "" && c.PayloadKind != s.Spec.Kind {
		return nil, &FieldError{"payload", fmt.Sprintf("was checked for kind %q, but the task is now of kind %q (it was created again); send the update again", c.PayloadKind, s.Spec.Kind)}
	}
	spec := s.Spec
	spec.ToleranceSet = true
	kinds := 0
	for _, set := range []bool{c.Interval != nil, c.Cron != nil, c.At != nil} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		return nil, &FieldError{"schedule", "give at most one of interval, cron and at"}
	}
	old := s.Spec.Schedule
	switch {
	case c.Interval != nil:
		spec.Schedule = events.Schedule{Interval: events.Duration(*c.Interval)}
	case c.Cron != nil:
		spec.Schedule = events.Schedule{Cron: slices.Clone(*c.Cron), Timezone: old.Timezone}
		if len(old.Cron) > 0 {
			spec.Schedule.DSTGap, spec.Schedule.DSTOverlap, spec.Schedule.Exclude = old.DSTGap, old.DSTOverlap, old.Exclude
		}
	case c.At != nil:
		spec.Schedule = events.Schedule{At: slices.Clone(*c.At), Timezone: old.Timezone}
	}
	if c.Timezone != nil {
		spec.Schedule.Timezone = *c.Timezone
	}
	if c.DSTGap != nil {
		spec.Schedule.DSTGap = *c.DSTGap
	}
	if c.DSTOverlap != nil {
		spec.Schedule.DSTOverlap = *c.DSTOverlap
	}
	if c.Exclude != nil {
		spec.Schedule.Exclude = nil
		if len(*c.Exclude) > 0 {
			spec.Schedule.Exclude = slices.Clone(*c.Exclude)
		}
	}
	if c.StartAt != nil {
		spec.Window.StartAt = events.TimePtr(*c.StartAt)
	}
	if c.EndAt != nil {
		spec.Window.EndAt = events.TimePtr(*c.EndAt)
	}
	if c.MaxRuns != nil {
		spec.Window.MaxRuns = *c.MaxRuns
	}
	if c.Jitter != nil {
		spec.Window.Jitter = events.Duration(*c.Jitter)
	}
	scheduleChanged := !spec.Schedule.Equal(old)
	windowChanged := !spec.Window.Equal(s.Spec.Window)
	kindChanged := spec.Schedule.Kind() != old.Kind()
	// An interval task whose interval alone changed keeps its nextRun (R1
	// as before schedules); any other change of the schedule or its window
	// is a reschedule.
	rescheduled := windowChanged || kindChanged || (scheduleChanged && !spec.Schedule.IsInterval())
	if scheduleChanged {
		// A new schedule takes the default tolerance and timebox for it
		// unless they are given too.
		spec.Tolerance, spec.ToleranceSet, spec.Timebox = 0, false, 0
	}
	if c.Tolerance != nil {
		spec.Tolerance, spec.ToleranceSet = *c.Tolerance, true
	}
	if c.Timebox != nil {
		if *c.Timebox <= 0 {
			return nil, &FieldError{"timebox", fmt.Sprintf("must be positive, got %s", *c.Timebox)}
		}
		spec.Timebox = *c.Timebox
	}
	if c.Payload != nil {
		spec.Payload = c.Payload
	}
	if c.Priority != nil {
		spec.Priority = *c.Priority
	}
	if c.MaxWaiting != nil {
		spec.MaxWaiting = *c.MaxWaiting
	}
	if c.HistoryRetention != nil {
		spec.HistoryRetention = *c.HistoryRetention
	}
	spec.Policy = updatedPolicy(spec.Policy, c)
	if m := spec.Window.MaxRuns; rescheduled && m > 0 && s.Scheduled >= m {
		return nil, &FieldError{"max_runs", fmt.Sprintf("the task has made %d scheduled runs already, got %d", s.Scheduled, m)}
	}
	var err error
	if spec, err = prepare(spec, now, validateSpec); err != nil {
		return nil, err
	}
	next, nextSlot := s.NextRun, s.NextSlot
	if rescheduled {
		from := now // a task that becomes an interval task is first due an interval from now
		if spec.Schedule.IsInterval() {
			from = now.Add(spec.Schedule.Interval.D())
		}
		if next, nextSlot, err = firstSlot(s.ID, spec, from, now); err != nil {
			return nil, err
		}
		if spec.Schedule.IsInterval() && !kindChanged && !s.NextSlot.IsZero() {
			// The interval stays: nextRun stays, unless the window moved it.
			next, nextSlot, err = firstSlot(s.ID, spec, s.NextSlot, now)
			if err != nil {
				return nil, err
			}
		}
	}
	if c.NextRun != nil {
		if msg := TimeProblem(*c.NextRun); msg != "" {
			return nil, &FieldError{"next_run", msg}
		}
		next, nextSlot = c.NextRun.UTC(), c.NextRun.UTC()
	}
	if spec.Schedule.Equal(s.Spec.Schedule) && spec.Window.Equal(s.Spec.Window) && spec.Tolerance == s.Spec.Tolerance &&
		spec.Timebox == s.Spec.Timebox && spec.Priority == s.Spec.Priority && bytes.Equal(spec.Payload, s.Spec.Payload) &&
		next.Equal(s.NextRun) && spec.MaxWaiting == s.Spec.MaxWaiting && samePolicy(spec.Policy, s.Spec.Policy) &&
		spec.HistoryRetention == s.Spec.HistoryRetention {
		return nil, nil
	}
	u := events.TaskUpdated{Payload: spec.Payload, Schedule: spec.Schedule, Window: spec.Window,
		Tolerance: events.Duration(spec.Tolerance), Timebox: events.Duration(spec.Timebox),
		Priority: spec.Priority, NextRun: next, Rescheduled: rescheduled,
		MaxWaiting: spec.MaxWaiting, Policy: spec.Policy, HistoryRetention: events.Duration(spec.HistoryRetention)}
	if !nextSlot.Equal(next) {
		u.NextSlot = events.TimePtr(nextSlot)
	}
	return []events.Event{u}, nil
}

// updatedPolicy is p with the policy fields an Update sets (nil keeps).
func updatedPolicy(p events.Policy, c Update) events.Policy {
	if c.Queue != nil {
		p.Queue = *c.Queue
	}
	if c.Retry != nil {
		r := *c.Retry
		p.Retry = &r
	}
	if c.MissedRunPolicy != nil {
		p.MissedRunPolicy = *c.MissedRunPolicy
	}
	if c.Overlap != nil {
		p.Overlap = *c.Overlap
	}
	if c.PauseAfterFailures != nil {
		p.PauseAfterFailures = *c.PauseAfterFailures
	}
	for _, f := range []struct {
		from *time.Duration
		to   *events.Duration
	}{{c.MissedAfter, &p.MissedAfter}, {c.StartDeadline, &p.StartDeadline}, {c.HeartbeatTimeout, &p.HeartbeatTimeout}} {
		if f.from != nil {
			*f.to = events.Duration(*f.from)
		}
	}
	return p
}

// firstSlot is a task's first nextRun (R10), with jitter, and the slot it
// stands for: for an interval task from (its first_run) or start_at when
// that is later; for cron and at the first slot strictly after now (at or
// after start_at when that is later).
func firstSlot(id uuid.UUID, spec Spec, from, now time.Time) (time.Time, time.Time, error) {
	var slot time.Time
	if spec.Schedule.IsInterval() {
		slot = from.UTC()
		if st := spec.Window.Start(); st.After(slot) {
			slot = st.UTC()
		}
		if end := spec.Window.End(); !end.IsZero() && slot.After(end) {
			return time.Time{}, time.Time{}, &FieldError{"end_at", "no slot falls between the first run (or start_at) and end_at"}
		}
	} else {
		c, err := Compiled(spec)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		if slot = c.First(now); slot.IsZero() {
			return time.Time{}, time.Time{}, fieldError(c.Live(now))
		}
		slot = slot.UTC()
	}
	next, _ := jittered(id, slot, spec.Window.Jitter.D())
	return next, slot, nil
}

func decideCreate(s State, c Create, now time.Time) ([]events.Event, error) {
	if s.Exists() && s.Status != StatusDeleted {
		return nil, ErrAlreadyExists
	}
	if c.TaskID == uuid.Nil {
		return nil, &FieldError{"id", "is required"}
	}
	spec, err := Prepare(c.Spec, now)
	if err != nil {
		return nil, err
	}
	from := c.FirstRun
	if spec.Schedule.IsInterval() {
		if c.FirstRun.IsZero() {
			return nil, &FieldError{"first_run", "is required"}
		}
		if msg := TimeProblem(c.FirstRun); msg != "" {
			return nil, &FieldError{"first_run", msg}
		}
	} else if !c.FirstRun.IsZero() {
		return nil, &FieldError{"first_run", "applies to interval tasks; a cron or at task starts at its first slot (use start_at)"}
	}
	next, slot, err := firstSlot(c.TaskID, spec, from, now)
	if err != nil {
		return nil, err
	}
	// A new incarnation: the old one's waiting runs get their outcome now,
	// so none of them can start under the new task (R9). Its running runs
	// end on their own; their outcome no longer touches the task.
	var out []events.Event
	for _, r := range s.Waiting() {
		out = append(out, events.RunDropped{RunID: r.ID, Run: r.Number, Reason: events.DropDeleted,
			Detail: "the task was deleted before this run started; it was created again"})
	}
	created := events.TaskCreated{TaskID: c.TaskID, Name: spec.Name, Owner: spec.Owner, Kind: spec.Kind,
		Payload: spec.Payload, Schedule: spec.Schedule, Window: spec.Window, Tolerance: events.Duration(spec.Tolerance),
		Timebox: events.Duration(spec.Timebox), Priority: spec.Priority, NextRun: next,
		MaxWaiting: spec.MaxWaiting, Policy: spec.Policy, HistoryRetention: events.Duration(spec.HistoryRetention)}
	if !slot.Equal(next) {
		created.NextSlot = events.TimePtr(slot)
	}
	return append(out, created), nil
}

// decideTick is R1 and R8 for an interval task, R10 for cron and at: a
// due, active task gets one run for the slot nextRun stands for, and
// nextRun moves to the tick time plus the interval (the first slot after
// the tick), plus its jitter (R17); skipped whole intervals (slots passed
// over) are counted. Missed intervals are counted only from when the task
// existed: a first_run before its creation reports none from before it.
// When no slot is left (end_at, max_runs, the last of an at list), the run
// is enqueued with TaskFinished in the same decision. R18 comes first, for
// every kind: a task at its bound of waiting runs enqueues nothing and
// keeps its nextRun (see backlogReason).
//
// Before the slot, the retries due (R13) are enqueued, earliest first, as
// far as the bound lets them (a retry due while the task is at its bound
// waits for room); a finished task still makes its retries. Under
// missed_run_policy skip (R14), a slot found later than it fell due +
// missed_after gets no run: SlotsMissed moves nextRun on (see
// decideMissed), whether or not the task is at its bound.
func decideTick(s *State, now time.Time) []events.Event {
	if s.Status != StatusActive && s.Status != StatusFinished {
		return nil
	}
	var out []events.Event
	if len(s.Retries) > 0 {
		out = enqueueRetries(s, now)
	}
	if s.Status != StatusActive || s.NextRun.After(now) {
		return out
	}
	if s.Spec.Policy.MissedRunPolicy == events.MissedSkip {
		if limit, ok := missedLimit(s); ok && now.After(s.NextRun.Add(limit)) {
			return append(out, decideMissed(s, now, limit)...)
		}
	}
	if s.AtBound() {
		return out
	}
	return append(out, decideSlot(s, now)...)
}

// enqueueRetries enqueues the retries due (R13), earliest first, as far as
// the bound lets them (a retry due while the task is at its bound waits for
// room), evolving s by each.
func enqueueRetries(s *State, now time.Time) []events.Event {
	var out []events.Event
	for _, p := range dueRetries(s, now) {
		if s.AtBound() {
			break
		}
		e := retryRun(s, p)
		out = append(out, e)
		*s = Evolve(*s, events.Metadata{Stream: events.TaskStream(s.ID), Version: s.Version, At: now}, e)
	}
	return out
}

// decideSlot enqueues the run of the slot nextRun stands for (R1, R8, R10,
// R18's backlog reason), and finishes the task when no slot is left.
func decideSlot(s *State, now time.Time) []events.Event {
	n := s.Runs + 1
	slot := s.NextSlot
	if slot.IsZero() {
		slot = s.NextRun
	}
	enq := events.RunEnqueued{RunID: events.RunID(s.ID, n), Run: n, Due: s.NextRun, Slot: slot, Priority: s.Spec.Priority,
		Reason: backlogReason(s, now)}
	var next time.Time
	finished := ""
	if s.Spec.Schedule.IsInterval() {
		sched := Compile(s.Spec.Schedule)
		next, enq.Missed = sched.Next(now), sched.Missed(missedFrom(s), now)
		switch end, m := s.Spec.Window.End(), s.Spec.Window.MaxRuns; {
		case m > 0 && s.Scheduled+1 >= m:
			finished = fmt.Sprintf("max_runs %d reached", m)
		case !end.IsZero() && next.After(end):
			finished = "no slot is left before end_at " + end.UTC().Format(time.RFC3339)
		}
	} else {
		c, err := Compiled(s.Spec)
		if err != nil {
			// A recorded schedule that no longer compiles (a zone gone from
			// the tz database): the task stays due and enqueues nothing.
			return nil
		}
		st := c.Advance(slot, now, s.Scheduled+1)
		enq.Spacing, enq.Missed, next = events.Duration(s.NextSpacing), st.Missed, st.Next
		switch m := s.Spec.Window.MaxRuns; {
		case st.Finished && m > 0 && s.Scheduled+1 >= m:
			finished = fmt.Sprintf("max_runs %d reached", m)
		case st.Finished:
			finished = noSlotLeft(s)
		default:
			enq.NextSpacing = events.Duration(dueSpacing(s.ID, s.Spec.Window.Jitter.D(), st.Prev, st.Next))
		}
	}
	if finished != "" {
		return []events.Event{enq, events.TaskFinished{Runs: s.Scheduled + 1, Reason: finished}}
	}
	next = next.UTC()
	enq.NextRun, enq.NextSlot = jittered(s.ID, next, s.Spec.Window.Jitter.D())
	return []events.Event{enq}
}

// missedFrom is when an interval task's missed intervals are counted from:
// its nextRun, or its creation when that is later.
func missedFrom(s *State) time.Time {
	if s.CreatedAt.After(s.NextRun) {
		return s.CreatedAt
	}
	return s.NextRun
}

// noSlotLeft is the reason a cron or at task finishes without max_runs.
func noSlotLeft(s *State) string {
	r := "no slot is left"
	if end := s.Spec.Window.End(); !end.IsZero() {
		r += " before end_at " + end.UTC().Format(time.RFC3339)
	}
	return r
}

// decideMissed is R14's skip: the slot nextRun stands for was found by a
// tick later than it fell due + limit (missed_after), so no run is made
// for it. nextRun moves to the first slot after the tick (an interval
// task: the tick's time + interval), with its jitter, and the slot counts
// as missed with those passed over (R8's count + 1). No run is made, so
// max_runs counts nothing; a task with no slot left finishes.
func decideMissed(s *State, now time.Time, limit time.Duration) []events.Event {
	slot := s.NextSlot
	if slot.IsZero() {
		slot = s.NextRun
	}
	ev := events.SlotsMissed{Due: s.NextRun, Slot: slot, MissedAfter: events.Duration(limit)}
	var next time.Time
	finished := ""
	if s.Spec.Schedule.IsInterval() {
		sched := Compile(s.Spec.Schedule)
		next, ev.Missed = sched.Next(now), sched.Missed(missedFrom(s), now)+1
		if end := s.Spec.Window.End(); !end.IsZero() && next.After(end) {
			finished = "no slot is left before end_at " + end.UTC().Format(time.RFC3339)
		}
	} else {
		c, err := Compiled(s.Spec)
		if err != nil {
			return nil
		}
		st := c.Advance(slot, now, s.Scheduled)
		ev.Missed, next = st.Missed+1, st.Next
		if st.Finished {
			finished = noSlotLeft(s)
		} else {
			ev.NextSpacing = events.Duration(dueSpacing(s.ID, s.Spec.Window.Jitter.D(), st.Prev, st.Next))
		}
	}
	late := now.Sub(s.NextRun)
	ev.Detail = fmt.Sprintf("found %s after it fell due at %s, later than missed_after %s: no run (missed_run_policy skip); %d missed",
		late, s.NextRun.UTC().Format(time.RFC3339Nano), limit, ev.Missed)
	if finished != "" {
		return []events.Event{ev, events.TaskFinished{Runs: s.Scheduled, Reason: finished}}
	}
	ev.NextRun, ev.NextSlot = jittered(s.ID, next.UTC(), s.Spec.Window.Jitter.D())
	return []events.Event{ev}
}

// decideTrigger is R15: one run now, outside the schedule — due now, for a
// slot at now, attempt 1, marked manual. It moves neither nextRun nor the
// count of scheduled runs (nor, once started, lastRun) and is not held to
// R3's spacing; R12 applies when it asks to start. A paused, finished or
// deleted task refuses it, and so does a task at its bound of waiting runs
// (R18): a trigger is an explicit request, better refused with the reason
// than left waiting.
func decideTrigger(s State, now time.Time) ([]events.Event, error) {
	switch s.Status {
	case StatusPaused:
		return nil, fmt.Errorf("%w: the task is paused", ErrCannotTrigger)
	case StatusFinished:
		return nil, fmt.Errorf("%w: the task is finished (no slot is left)", ErrCannotTrigger)
	case StatusDeleted:
		return nil, fmt.Errorf("%w: the task is deleted", ErrCannotTrigger)
	}
	if s.AtBound() {
		b := s.Spec.WaitingBound()
		return nil, fmt.Errorf("%w: the task has %d runs waiting, its max_waiting (%d)", ErrCannotTrigger, b, b)
	}
	n := s.Runs + 1
	e := events.RunEnqueued{RunID: events.RunID(s.ID, n), Run: n, Due: now, Slot: now, Priority: s.Spec.Priority,
		Attempt: 1, Trigger: events.TriggerManual}
	return []events.Event{asItStands(&s, e)}, nil
}

// backlogReason is R18's mark: the run a tick enqueues after the task fell
// due at its bound (it is late: its due time, the nextRun kept meanwhile,
// is before the tick) carries the reason backlog. Its missed count is R8's
// (R10's slots passed over), counted from that kept nextRun.
func backlogReason(s *State, now time.Time) string {
	if s.Backlog && s.NextRun.Before(now) {
		return events.EnqueueBacklog
	}
	return ""
}

// decideStart is R7, R3, R12 and R14's start deadline, checked in that
// order (the first that applies is the reason recorded), so R1–R9 stay
// exactly as written and the newer reasons apply to runs they would start:
// a paused or deleted task drops the run (R7); a scheduled first attempt
// asking before lastRun + spacing - tolerance is dropped as too_soon (R3;
// retries and triggers are not held to it); a run asking while another run
// of the task is running is dropped as overlap (R12, whatever the run:
// slot, retry or trigger); a run asking later than it fell due +
// start_deadline is dropped as too_late (R14: a slot run's due time is its
// slot moved by its jitter, a retry's is its RetryAt, a trigger's the
// trigger's time).
func decideStart(s *State, c RequestStart, now time.Time) ([]events.Event, error) {
	r, ok := s.Run(c.RunID)
	if !ok {
		return nil, ErrUnknownRun
	}
	if r.Started {
		return nil, ErrRunNotWaiting
	}
	drop := events.RunDropped{RunID: r.ID, Run: r.Number}
	if !s.Current(r) {
		// Only in logs written before re-creating dropped the old waiting
		// runs: a run of a deleted incarnation never starts.
		drop.Reason, drop.Detail = events.DropDeleted, "the task was deleted before this run started; it was created again"
		return []events.Event{drop}, nil
	}
	switch s.Status { // a finished task's runs still start (R10)
	case StatusPaused:
		drop.Reason, drop.Detail = events.DropPaused, "the task is paused"
		return []events.Event{drop}, nil
	case StatusDeleted:
		drop.Reason, drop.Detail = events.DropDeleted, "the task is deleted"
		return []events.Event{drop}, nil
	}
	if spacing := s.Spacing(r); r.First() && !s.LastRun.IsZero() && spacing > 0 {
		needed := spacing - s.Spec.Tolerance
		since := now.Sub(s.LastRun)
		if since < needed {
			last := s.LastRun
			word := "interval"
			if !s.Spec.Schedule.IsInterval() {
				word = "spacing"
			}
			drop.Reason = events.DropTooSoon
			drop.Detail = fmt.Sprintf("asked to start %s after the last start; needs %s (%s %s - tolerance %s)",
				since, needed, word, spacing, s.Spec.Tolerance)
			drop.LastRun, drop.SinceLastStart, drop.Needed = &last, events.Duration(since), events.Duration(needed)
			return []events.Event{drop}, nil
		}
	}
	var out []events.Event
	if o, ok := runningRun(s); ok {
		switch s.Spec.Policy.Overlap {
		case events.OverlapAllow:
		case events.OverlapBufferOne:
			if w, ok := s.Run(c.Buffered); ok && !w.Started && w.ID != r.ID {
				drop.Reason = events.DropOverlap
				drop.Detail = fmt.Sprintf("run %d is still running and run %d waits for it already (overlap buffer_one: at most one waits)",
					o.Number, w.Number)
				return []events.Event{drop}, nil
			}
			if dropped, late := tooLate(s, r, drop, now); late {
				return []events.Event{dropped}, nil
			}
			return nil, nil // held: see Buffer
		case events.OverlapCancelOther:
			for _, o := range s.Open {
				if o.Started && s.Current(o) {
					f := events.RunForcedEnd{RunID: o.ID, Run: o.Number, Deadline: o.Deadline, Reason: events.ForcedReplaced,
						Detail:     fmt.Sprintf("run %d asked to start after this one ran %s (overlap cancel_other)", r.Number, now.Sub(o.StartedAt)),
						Checkpoint: o.Checkpoint}
					if retries(*s) {
						f.NoRetry = fmt.Sprintf("replaced by run %d", r.Number)
					}
					out = append(out, f)
				}
			}
		default:
			drop.Reason = events.DropOverlap
			left := fmt.Sprintf("its deadline %s away", o.Deadline.Sub(now))
			if !now.Before(o.Deadline) {
				left = fmt.Sprintf("its deadline passed %s before, its forced end not recorded yet", now.Sub(o.Deadline))
			}
			drop.Detail = fmt.Sprintf("run %d is still running: started %s before, %s", o.Number, now.Sub(o.StartedAt), left)
			return []events.Event{drop}, nil
		}
	}
	if dropped, late := tooLate(s, r, drop, now); late {
		return []events.Event{dropped}, nil // a run too late to start replaces nothing
	}
	return append(out, events.RunStarted{RunID: r.ID, Run: r.Number, Deadline: now.Add(s.Spec.Timebox)}), nil
}

// runningRun is the first run of the task's current incarnation that is
// running, if any (R12).
func runningRun(s *State) (Run, bool) {
	for _, o := range s.Open {
		if o.Started && s.Current(o) {
			return o, true
		}
	}
	return Run{}, false
}

// Buffers reports whether run id waits, held by the actor, for the running
// run's outcome (overlap buffer_one): it is waiting, the task's overlap is
// buffer_one and a run of the task is running. Decide answers its
// RequestStart with no event, and Effects with Buffer.
func Buffers(s *State, id uuid.UUID) bool {
	if s.Spec.Policy.Overlap != events.OverlapBufferOne || (s.Status != StatusActive && s.Status != StatusFinished) {
		return false
	}
	r, ok := s.Run(id)
	if !ok || r.Started || !s.Current(r) {
		return false
	}
	_, running := runningRun(s)
	return running
}

// tooLate is R14's start deadline: drop, with reason too_late, when run r
// asks later than it fell due + start_deadline.
func tooLate(s *State, r Run, drop events.RunDropped, now time.Time) (events.RunDropped, bool) {
	if sd := s.Spec.Policy.StartDeadline.D(); sd > 0 && now.After(r.Due.Add(sd)) {
		drop.Reason = events.DropTooLate
		drop.Detail = fmt.Sprintf("asked to start %s after it fell due; start_deadline %s", now.Sub(r.Due), sd)
		return drop, true
	}
	return drop, false
}

func startedRun(s *State, id uuid.UUID) (Run, error) {
	r, ok := s.Run(id)
	if !ok {
		return r, ErrUnknownRun
	}
	if !r.Started {
		return r, ErrRunNotStarted
	}
	return r, nil
}

// decideForceEnd is R4 and R9: only a started run whose deadline passed is
// forced to end; it hands on the last checkpoint it saved. R16: a run of a
// task with a heartbeat_timeout whose last heartbeat (c.LastHeartbeat, or
// its start when later) is that long ago is forced to end with reason
// heartbeat_timeout before its deadline. Then R13: the forced end records
// the retry it gets, or why none.
func decideForceEnd(s State, c ForceEnd, now time.Time) ([]events.Event, error) {
	r, err := startedRun(&s, c.RunID)
	if err != nil {
		return nil, err
	}
	var detail string
	switch c.Reason {
	case events.ForcedTimebox:
		if now.Before(r.Deadline) {
			return nil, ErrDeadlineNotDue
		}
		// The run's own timebox (its deadline), not the spec's now: the task
		// may have been updated or created again since the run started.
		tb := r.Deadline.Sub(r.StartedAt)
		detail = fmt.Sprintf("still running at its deadline, %s after it started (timebox %s)", tb, tb)
	case events.ForcedProcessLost:
		if now.Before(r.Deadline) {
			return nil, ErrDeadlineNotDue
		}
		detail = fmt.Sprintf("the process running it stopped; its deadline %s has passed", r.Deadline.UTC().Format(time.RFC3339))
	case events.ForcedHeartbeat:
		hb := s.Spec.Policy.HeartbeatTimeout.D()
		if hb <= 0 || !s.Current(r) {
			return nil, fmt.Errorf("%w: the task has no heartbeat_timeout", ErrHeartbeatNotDue)
		}
		last := c.LastHeartbeat
		if last.Before(r.StartedAt) {
			last = r.StartedAt
		}
		if now.Before(last.Add(hb)) {
			return nil, fmt.Errorf("%w: the run heartbeated %s ago, within %s", ErrHeartbeatNotDue, now.Sub(last), hb)
		}
		detail = fmt.Sprintf("no heartbeat for %s since it started (heartbeat_timeout %s)", now.Sub(last), hb)
		if last.After(r.StartedAt) {
			detail = fmt.Sprintf("no heartbeat for %s (heartbeat_timeout %s); the last came %s after it started",
				now.Sub(last), hb, last.Sub(r.StartedAt))
		}
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnknownForceKind, c.Reason)
	}
	f := events.RunForcedEnd{RunID: r.ID, Run: r.Number, Deadline: r.Deadline,
		Reason: c.Reason, Detail: detail, Checkpoint: r.Checkpoint}
	f.RetryAt, f.Backoff, f.NoRetry = retryOf(s, r, false, now)
	return pauseAfterFailures(&s, r, f.RetryAt != nil, f), nil
}

// pauseAfterFailures is ended (the failure or forced end of run r) and,
// when it is the last attempt of a slot that makes the task's
// pause_after_failures consecutive failed slots, the TaskPaused (reason
// failures, with the count) of an active task (DESIGN §8.4). A retry
// promised (retried) leaves the slot's outcome open; a manual trigger is
// no slot.
func pauseAfterFailures(s *State, r Run, retried bool, ended events.Event) []events.Event {
	n := s.Spec.Policy.PauseAfterFailures
	if n < 1 || retried || s.Status != StatusActive || !s.Current(r) || r.Trigger != "" || s.Failures+1 < n {
		return []events.Event{ended}
	}
	return []events.Event{ended, events.TaskPaused{Reason: events.PauseFailures, Failures: s.Failures + 1}}
}
