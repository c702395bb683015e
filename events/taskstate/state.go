package taskstate

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Status of a task.
type Status int

const (
	// StatusNone: no TaskCreated yet.
	StatusNone Status = iota
	StatusActive
	StatusPaused
	StatusDeleted
	// StatusFinished: R10, no slot is left; the task enqueues nothing and
	// its open runs still end. An update that gives it a slot again makes
	// it active.
	StatusFinished
)

// String is the status word every reader shows (the view's and the audit
// trail's status column, the scheduler's Task.Status).
func (s Status) String() string {
	switch s {
	case StatusActive:
		return "active"
	case StatusPaused:
		return "paused"
	case StatusDeleted:
		return "deleted"
	case StatusFinished:
		return events.StatusFinished
	default:
		return "none"
	}
}

// Run is a run that was enqueued and has no outcome yet.
type Run struct {
	ID         uuid.UUID
	Number     int
	Due        time.Time
	EnqueuedAt time.Time
	Priority   int
	// Incarnation is the task's incarnation when the run was enqueued (see
	// the package doc).
	Incarnation int
	// Slot is the slot the run is for (Due without jitter); Spacing the
	// time from the slot before it, R3's interval for cron and at tasks
	// (zero: the first slot, or an interval task, which uses its interval).
	Slot    time.Time
	Spacing time.Duration
	// Started is set once RunStarted is recorded.
	Started   bool
	StartedAt time.Time
	Deadline  time.Time
	// Checkpoint is the last one this run saved while running.
	Checkpoint json.RawMessage
	// Attempt is 1 for a slot's first try, n for its (n-1)th retry (R13);
	// RetryOf the run it retries; Trigger is events.TriggerManual for a
	// manually triggered run (R15), events.TriggerBackfill for a backfill
	// run.
	Attempt int
	RetryOf uuid.UUID
	Trigger string
	// Origin is the Trigger of the slot's first attempt: a retry's own
	// RunEnqueued carries no trigger, so the state carries it through the
	// failure's PendingRetry. Only runs of no trigger ("") count for
	// pause_after_failures (decision 0030).
	Origin string
}

// PendingRetry is a retry a failure promised (R13) that is not enqueued
// yet: the failure recorded RetryAt, and the first tick at or after it
// enqueues the retry.
type PendingRetry struct {
	// Of is the failed run, Run its number.
	Of  uuid.UUID
	Run int
	// Attempt is the retry's attempt: the failed run's + 1.
	Attempt int
	// Slot and Spacing are the failed run's: a retry is a new run of the
	// same slot.
	Slot    time.Time
	Spacing time.Duration
	// At is when the retry falls due (the failure's RetryAt).
	At time.Time
	// Origin is the failed run's (Run.Origin).
	Origin string
}

// Spec is what a task is told to do.
type Spec struct {
	Name     string
	Owner    string
	Kind     string
	Payload  json.RawMessage
	Schedule events.Schedule
	// Window bounds the slots: start_at, end_at, max_runs, jitter.
	Window    events.Window
	Tolerance time.Duration
	Timebox   time.Duration
	Priority  int
	// MaxWaiting bounds the runs waiting at once (R18); 0 means
	// events.DefaultMaxWaiting (see WaitingBound).
	MaxWaiting int
	// Policy is how runs are run: queue, retries, missed runs, start
	// deadline, heartbeats (R12–R16).
	Policy events.Policy
	// ToleranceSet makes a zero Tolerance mean zero rather than "default"
	// in a command. It is not recorded: events carry the tolerance itself.
	ToleranceSet bool
	// HistoryRetention is how long the task's events are kept (DESIGN
	// §8.3); zero: the scheduler's default.
	HistoryRetention time.Duration
}

// State is a task as its events leave it. It is a value: Evolve returns a
// new State and never changes the one it was given.
type State struct {
	ID     uuid.UUID
	Spec   Spec
	Status Status
	// NextRun is when the task next falls due (R1); zero once finished.
	NextRun time.Time
	// NextSlot is the slot NextRun stands for: NextRun without its jitter
	// (R17). NextSpacing is that slot's spacing for cron and at tasks
	// (zero for the first slot and after a reschedule: no check).
	NextSlot    time.Time
	NextSpacing time.Duration
	// Scheduled counts this incarnation's scheduled runs (for max_runs).
	Scheduled int
	// LastRun is the start time of the latest run of this incarnation that
	// started (R3); zero when none has.
	LastRun time.Time
	// Runs counts the runs enqueued so far, over all incarnations: the
	// number of the latest one.
	Runs int
	// Checkpoint is what the next run is handed (R5).
	Checkpoint json.RawMessage
	// Open lists enqueued runs without an outcome, in enqueue order; runs
	// of an earlier incarnation among them, too.
	Open []Run
	// Incarnation counts the TaskCreated events: 1 for a task created
	// once, 2 after it was deleted and created again, …
	Incarnation int
	// Version is the stream version of the last event applied; meaningful
	// only when Status != StatusNone.
	Version uint64
	// Backlog says the task fell due while it held its bound of waiting
	// runs (R18): a tick at that time enqueued nothing and kept nextRun, so
	// the next run it enqueues late carries the reason backlog. Set when a
	// waiting run leaves a task at its bound after nextRun has passed;
	// cleared by the next RunEnqueued and by pausing, resuming, deleting or
	// creating the task.
	Backlog bool
	// Retries are the retries promised by failures and not enqueued yet
	// (R13), in the order the failures were recorded. See the package doc
	// for what pausing, resuming, updating and deleting do to them.
	Retries []PendingRetry
	// Failures counts the consecutive slots of this incarnation whose run
	// failed after its retries (a RunFailed or RunForcedEnd of a scheduled
	// run, or its retry, that promised no retry; a replaced run does not
	// count); a slot run that completes, a resume and a new incarnation
	// set it back to 0 (pause_after_failures, DESIGN §8.4).
	Failures int
	// PauseReason is the paused task's TaskPaused.Reason: "" for a
	// user's pause, events.PauseFailures when it paused itself.
	PauseReason string
	// CreatedAt is the time of this incarnation's TaskCreated, UpdatedAt
	// that of the latest event.
	CreatedAt time.Time
	UpdatedAt time.Time
	// Compacted is the version of the stream's latest TaskCompacted (zero:
	// none), CompactedAt the time it was decided, and CompactedThrough the
	// time of the last event it covers: once that is older than the task's
	// retention, the events before Compacted may be removed.
	Compacted        uint64
	CompactedAt      time.Time
	CompactedThrough time.Time
	// FirstAt is the time of the stream's first event (kept across a
	// TaskCompacted, which carries it).
	FirstAt time.Time
	// DeletedAt and DeleteReason are the time and reason of this
	// incarnation's TaskDeleted (zero while not deleted), so that a
	// TaskCompacted carries them.
	DeletedAt    time.Time
	DeleteReason string
	// Backfill lists the slots a backfill asked for (BackfillRequested)
	// that have no run yet, in slot order: each is enqueued, the first
	// first, as the task has room for it (R18; DESIGN §8.4). Deleting or
	// creating the task again forgets them.
	Backfill []time.Time
}

// Exists reports whether the task was created.
func (s *State) Exists() bool { return s.Status != StatusNone }

// Interval is the task's interval; zero for cron and at tasks.
func (s *State) Interval() time.Duration { return s.Spec.Schedule.Interval.D() }

// Spacing is R3's interval for run r: the task's interval for an interval
// task, else the spacing recorded with the run (R11; zero: no check).
func (s *State) Spacing(r Run) time.Duration {
	if s.Spec.Schedule.IsInterval() {
		return s.Interval()
	}
	return r.Spacing
}

// nextSlot is the slot an event's nextRun stands for.
func nextSlot(next time.Time, slot *time.Time) time.Time {
	if slot != nil {
		return *slot
	}
	return next
}

// WaitingBound is the most runs the task may have waiting (R18).
func (s Spec) WaitingBound() int {
	if s.MaxWaiting > 0 {
		return s.MaxWaiting
	}
	return events.DefaultMaxWaiting
}

// AtBound reports whether the task has as many runs waiting as its bound
// allows (R18): a tick then enqueues nothing.
func (s *State) AtBound() bool { return s.atBound() }

// NextRetry is when the earliest pending retry falls due (R13); false when
// none is pending.
func (s *State) NextRetry() (time.Time, bool) {
	var at time.Time
	for _, r := range s.Retries {
		if at.IsZero() || r.At.Before(at) {
			at = r.At
		}
	}
	return at, !at.IsZero()
}

// First reports whether r is a scheduled first attempt: not a retry (R13)
// and not manually triggered (R15). Only those move lastRun and are held to
// R3's spacing.
func (r Run) First() bool { return r.Attempt <= 1 && r.Trigger == "" }

// Run finds an open run by ID.
func (s *State) Run(id uuid.UUID) (Run, bool) {
	for _, r := range s.Open {
		if r.ID == id {
			return r, true
		}
	}
	return Run{}, false
}

// Current reports whether r belongs to the task's current incarnation.
func (s *State) Current(r Run) bool { return r.Incarnation == s.Incarnation }

// Waiting lists open runs not started yet, in enqueue order.
func (s *State) Waiting() []Run {
	var out []Run
	for _, r := range s.Open {
		if !r.Started {
			out = append(out, r)
		}
	}
	return out
}

// Running lists open runs that started.
func (s *State) Running() []Run {
	var out []Run
	for _, r := range s.Open {
		if r.Started {
			out = append(out, r)
		}
	}
	return out
}

// withRun changes open run id in a copy of Open: the slice is shared with
// the State values this one was made from.
func (s *State) withRun(id uuid.UUID, f func(*Run)) {
	open := slices.Clone(s.Open)
	for i := range open {
		if open[i].ID == id {
			f(&open[i])
		}
	}
	s.Open = open
}

// closeRun removes a run and settles the checkpoint handed to the next run:
// the one the outcome carries, else the last one the run saved (R5). A run
// of an earlier incarnation hands nothing on.
func (s *State) closeRun(id uuid.UUID, outcome json.RawMessage) {
	// A new backing array, as in enqueued; none when the run closed was
	// the only one open (most runs: one allocation less per run).
	var open []Run
	if len(s.Open) > 1 {
		open = make([]Run, 0, len(s.Open))
	}
	current := true
	for i := range s.Open {
		r := &s.Open[i]
		if r.ID != id {
			open = append(open, *r)
			continue
		}
		current = r.Incarnation == s.Incarnation
		if current && present(r.Checkpoint) {
			s.Checkpoint = r.Checkpoint
		}
	}
	if current && present(outcome) {
		s.Checkpoint = outcome
	}
	s.Open = open
}

// present reports whether a recorded checkpoint says something: absent and
// JSON null both mean "none".
func present(cp json.RawMessage) bool { return len(cp) > 0 && string(cp) != "null" }

// Evolve applies one recorded event. meta.At is when it was decided; for
// RunStarted it becomes LastRun. Unknown event types leave the state as is
// (apart from Version and UpdatedAt).
//
// Each event type is applied by its own method, so that no goroutine
// deciding for a task carries the temporaries of every case in one stack
// frame (docs/performance.md).
func Evolve(s State, meta events.Metadata, e events.Event) State {
	s.Apply(meta, e)
	return s
}

// Apply is Evolve in place: s becomes Evolve(*s, meta, e) without a copy
// of the whole state. Slices s shares with other State values (Open,
// Retries) are never written to: they are replaced, as Evolve replaces
// them.
func (s *State) Apply(meta events.Metadata, e events.Event) { s.apply(meta, e) }

// Folds reports whether Apply has a rule for e's type. An event of a type
// it has none for changes only Version and UpdatedAt; the table test over
// every registered event type (cmd/cronactor) asks it of each.
func Folds(e events.Event) bool {
	var s State
	return s.apply(events.Metadata{}, e)
}

// apply is Apply; handled is false for an event type it has no rule for.
func (s *State) apply(meta events.Metadata, e events.Event) (handled bool) {
	s.UpdatedAt = meta.At
	s.Version = meta.Version
	if meta.Version == 0 {
		s.FirstAt = meta.At
	}
	switch ev := e.(type) {
	case events.TaskCreated:
		s.created(meta, e)
	case events.TaskUpdated:
		s.updated(e)
	case events.TaskPaused:
		s.Status = StatusPaused
		s.Backlog = false
		s.PauseReason = ev.Reason
	case events.TaskResumed:
		s.resumed(meta, e)
	case events.TaskDeleted:
		s.DeletedAt, s.DeleteReason = meta.At, e.(events.TaskDeleted).Reason
		s.Status = StatusDeleted
		s.Backlog = false
		s.Retries = nil
		s.Backfill = nil
	case events.RunEnqueued:
		s.enqueued(meta, e)
	case events.TaskFinished:
		if s.Status == StatusActive {
			s.Status = StatusFinished
		}
		s.NextRun, s.NextSlot, s.NextSpacing = time.Time{}, time.Time{}, 0
	case events.SlotsMissed:
		s.missed(e)
	case events.RunStarted:
		s.started(meta, e)
	case events.CheckpointSaved:
		s.checkpointSaved(e)
	case events.RunCompleted, events.RunFailed, events.RunForcedEnd, events.RunDropped:
		s.ended(meta, e)
	case events.TaskCompacted:
		s.compacted(meta, e)
	case events.BackfillRequested:
		// A new backing array: the old one is shared with the State values
		// this one was made from.
		s.Backfill = append(slices.Clone(s.Backfill), ev.Slots...)
	default:
		return false
	}
	return true
}

// compacted starts the fold again from the state the event carries: in a
// stream whose events before it were removed, that is the state they left;
// in a whole stream, it is the state the fold already holds there. A body
// that does not hold a state (it cannot be decoded) leaves the state as it
// is, with only the compaction noted.
func (s *State) compacted(meta events.Metadata, ev events.Event) {
	e := ev.(events.TaskCompacted)
	var carried State
	if err := carried.UnmarshalBinary(e.State); err == nil {
		*s = carried
	}
	s.Version, s.UpdatedAt = meta.Version, meta.At
	s.Compacted, s.CompactedAt, s.CompactedThrough = meta.Version, meta.At, e.ToAt
}

// ended closes the run e ended: a failure or a forced end keeps the retry
// it promised (R13); a drop may leave a backlog mark (R18).
func (s *State) ended(meta events.Metadata, ev events.Event) {
	switch e := ev.(type) {
	case events.RunCompleted:
		if s.slotRun(e.RunID) {
			s.Failures = 0
		}
		s.closeRun(e.RunID, e.Checkpoint)
	case events.RunFailed:
		if e.RetryAt == nil && s.slotRun(e.RunID) {
			s.Failures++
		}
		s.promiseRetry(e.RunID, e.RetryAt)
		s.closeRun(e.RunID, e.Checkpoint)
	case events.RunForcedEnd:
		if e.RetryAt == nil && e.Reason != events.ForcedReplaced && s.slotRun(e.RunID) {
			s.Failures++
		}
		s.promiseRetry(e.RunID, e.RetryAt)
		s.closeRun(e.RunID, e.Checkpoint)
	case events.RunDropped:
		s.leaveBound(meta, e.RunID)
		s.closeRun(e.RunID, nil)
	}
}

// slotRun reports whether open run id is a scheduled run of the current
// incarnation (a slot's first attempt or its retry, not a manual trigger
// or a backfill run, nor their retries: Run.Origin): only those count for
// pause_after_failures.
func (s *State) slotRun(id uuid.UUID) bool {
	i := s.openIndex(id)
	return i >= 0 && s.Open[i].Incarnation == s.Incarnation && s.Open[i].Origin == ""
}

// created: a new incarnation starts clean; only the run counter and the
// open runs of earlier incarnations carry over.
func (s *State) created(meta events.Metadata, ev events.Event) {
	e := ev.(events.TaskCreated)
	s.Incarnation++
	s.ID = e.TaskID
	s.Spec = Spec{Name: e.Name, Owner: e.Owner, Kind: e.Kind, Payload: e.Payload, Schedule: e.Schedule,
		Window: e.Window, Tolerance: e.Tolerance.D(), Timebox: e.Timebox.D(), Priority: e.Priority,
		MaxWaiting: e.MaxWaiting, Policy: e.Policy, HistoryRetention: e.HistoryRetention.D()}
	s.Status = StatusActive
	s.Backlog = false
	s.NextRun = e.NextRun
	s.NextSlot, s.NextSpacing, s.Scheduled = nextSlot(e.NextRun, e.NextSlot), 0, 0
	s.LastRun = time.Time{}
	s.Checkpoint = nil
	s.Retries = nil
	s.Backfill = nil
	s.Failures, s.PauseReason = 0, ""
	s.CreatedAt = meta.At
	s.DeletedAt, s.DeleteReason = time.Time{}, ""
}

func (s *State) updated(ev events.Event) {
	e := ev.(events.TaskUpdated)
	s.Spec.Payload = e.Payload
	s.Spec.Schedule = e.Schedule
	s.Spec.Window = e.Window
	s.Spec.Tolerance = e.Tolerance.D()
	s.Spec.Timebox = e.Timebox.D()
	s.Spec.Priority = e.Priority
	s.Spec.MaxWaiting = e.MaxWaiting
	s.Spec.Policy = e.Policy
	s.Spec.HistoryRetention = e.HistoryRetention.D()
	if !e.NextRun.IsZero() { // an update without one keeps nextRun
		s.NextRun = e.NextRun
		s.NextSlot = nextSlot(e.NextRun, e.NextSlot)
	}
	if e.Rescheduled {
		s.NextSpacing = 0
		if s.Status == StatusFinished && !e.NextRun.IsZero() {
			s.Status = StatusActive
		}
	}
	s.Retries = s.retriesAfterUpdate()
}

func (s *State) resumed(meta events.Metadata, ev events.Event) {
	e := ev.(events.TaskResumed)
	if s.NextRun.Before(meta.At) {
		// The next slot came while the task was paused: the run the
		// resume makes due supersedes the retries of earlier slots.
		s.Retries = nil
	}
	s.Status = StatusActive
	s.Backlog = false
	s.Failures, s.PauseReason = 0, ""
	if !e.NextRun.IsZero() && !e.NextRun.Equal(s.NextRun) {
		// An interval task's slot is where its nextRun lands; a cron or
		// at task's run, made late, is still for the slot it missed.
		s.NextRun = e.NextRun
		if s.Spec.Schedule.IsInterval() {
			s.NextSlot = e.NextRun
		}
	}
	if e.NextSlot != nil {
		s.NextSlot, s.NextSpacing = *e.NextSlot, e.NextSpacing.D()
	}
}

func (s *State) enqueued(meta events.Metadata, ev events.Event) {
	e := ev.(events.RunEnqueued)
	s.Runs = e.Run
	if e.RetryOf == nil && e.Trigger == "" {
		// A scheduled run: the slot is used up. A retry (R13) or a
		// manual trigger (R15) moves neither nextRun nor the count of
		// scheduled runs, and leaves a backlog mark (R18) for the
		// scheduled run it concerns.
		s.Backlog = false
		s.Scheduled++
		s.NextRun = e.NextRun
		s.NextSlot, s.NextSpacing = nextSlot(e.NextRun, e.NextSlot), e.NextSpacing.D()
	}
	if e.Trigger == events.TriggerBackfill && len(s.Backfill) > 0 {
		// The first slot waiting has its run (the rules enqueue them in
		// order); the rest keep waiting.
		s.Backfill = s.Backfill[1:len(s.Backfill):len(s.Backfill)]
		if len(s.Backfill) == 0 {
			s.Backfill = nil
		}
	}
	origin := e.Trigger
	if e.RetryOf != nil {
		if i := slices.IndexFunc(s.Retries, func(r PendingRetry) bool { return r.Of == *e.RetryOf }); i >= 0 {
			origin = s.Retries[i].Origin
		}
		s.Retries = slices.DeleteFunc(slices.Clone(s.Retries), func(r PendingRetry) bool { return r.Of == *e.RetryOf })
	}
	slot := e.Slot
	if slot.IsZero() {
		slot = e.Due
	}
	// A new backing array: the old one is shared with the State values
	// this one was made from.
	open := make([]Run, len(s.Open), len(s.Open)+1)
	copy(open, s.Open)
	s.Open = append(open, Run{ID: e.RunID, Number: e.Run, Due: e.Due, EnqueuedAt: meta.At,
		Priority: e.Priority, Incarnation: s.Incarnation, Slot: slot, Spacing: e.Spacing.D(),
		Attempt: max(e.Attempt, 1), RetryOf: derefID(e.RetryOf), Trigger: e.Trigger, Origin: origin})
}

func (s *State) missed(ev events.Event) {
	e := ev.(events.SlotsMissed)
	s.Backlog = false
	s.NextRun = e.NextRun
	s.NextSlot, s.NextSpacing = nextSlot(e.NextRun, e.NextSlot), e.NextSpacing.D()
}

func (s *State) started(meta events.Metadata, ev events.Event) {
	e := ev.(events.RunStarted)
	s.leaveBound(meta, e.RunID)
	// lastRun is the start of the latest scheduled first attempt (R3,
	// R13, R15).
	if i := s.openIndex(e.RunID); i < 0 || (s.Open[i].Incarnation == s.Incarnation && s.Open[i].First()) {
		s.LastRun = meta.At
	}
	s.withRun(e.RunID, func(r *Run) {
		r.Started, r.StartedAt, r.Deadline = true, meta.At, e.Deadline
	})
}

func (s *State) checkpointSaved(ev events.Event) {
	e := ev.(events.CheckpointSaved)
	if present(e.Checkpoint) {
		s.withRun(e.RunID, func(r *Run) { r.Checkpoint = e.Checkpoint })
	}
}

// openIndex is the index of open run id in Open, or -1.
func (s *State) openIndex(id uuid.UUID) int {
	for i := range s.Open {
		if s.Open[i].ID == id {
			return i
		}
	}
	return -1
}

// promiseRetry keeps the retry a failure of open run id promised for at
// (R13); nothing when at is nil.
func (s *State) promiseRetry(id uuid.UUID, at *time.Time) {
	i := s.openIndex(id)
	if at == nil || i < 0 {
		return
	}
	r := &s.Open[i]
	s.Retries = append(slices.Clone(s.Retries), PendingRetry{Of: r.ID, Run: r.Number, Attempt: r.Attempt + 1,
		Slot: r.Slot, Spacing: r.Spacing, At: *at, Origin: r.Origin})
}

// retriesAfterUpdate is what an update leaves of the pending retries: those
// the policy after it would still make — within its max_attempts, due no
// later than the nextRun after it.
func (s *State) retriesAfterUpdate() []PendingRetry {
	if len(s.Retries) == 0 {
		return s.Retries
	}
	most := 1
	if p := s.Spec.Policy.Retry; p != nil {
		most = p.MaxAttempts
	}
	next := s.NextRun
	return slices.DeleteFunc(slices.Clone(s.Retries), func(r PendingRetry) bool {
		return r.Attempt > most || (!next.IsZero() && r.At.After(next))
	})
}

// leaveBound notes a backlog (R18) when waiting run id leaves a task that
// is due and at its bound: the task fell due with no room, so a tick at or
// after nextRun enqueued nothing for it (unless that tick comes only now,
// in which case it enqueues on time and the mark goes unused).
func (s *State) leaveBound(meta events.Metadata, id uuid.UUID) {
	if s.Status != StatusActive || s.NextRun.IsZero() || s.NextRun.After(meta.At) || !s.atBound() {
		return
	}
	if i := s.openIndex(id); i >= 0 && !s.Open[i].Started {
		s.Backlog = true
	}
}

// atBound is AtBound without copying the state.
func (s *State) atBound() bool {
	n := 0
	for i := range s.Open {
		if !s.Open[i].Started {
			n++
		}
	}
	return n >= s.Spec.WaitingBound()
}

// Replay folds a task's recorded events into its state.
func Replay(recs []events.Recorded) (State, error) {
	var s State
	for _, r := range recs {
		e, err := events.Decode(r)
		if err != nil {
			return s, err
		}
		s = Evolve(s, r.Metadata, e)
	}
	return s, nil
}

func derefID(id *uuid.UUID) uuid.UUID {
	if id == nil {
		return uuid.Nil
	}
	return *id
}
