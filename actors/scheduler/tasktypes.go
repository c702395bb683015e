package scheduler

import (
	"encoding/json"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// TaskSpec is what CreateTask takes.
type TaskSpec struct {
	// Schedule is the task's schedule as one value (Every, Cron, At; see
	// Schedule). Give it or the flat fields Interval, Cron, At, Timezone,
	// DSTGap and DSTOverlap (and Tolerance, ToleranceSet), not both.
	Schedule Schedule
	// Name and Owner are at most rules.MaxNameChars and MaxOwnerChars
	// characters, with no control or bidirectional formatting characters
	// (rules.TextProblem).
	Name  string
	Owner string
	Kind  string
	// Payload is JSON handed to every run (≤ 64 KiB).
	Payload  json.RawMessage
	Interval time.Duration
	// Tolerance defaults to 5s (or interval/10 when smaller); it must stay
	// below half the interval.
	Tolerance time.Duration
	// ToleranceSet makes a zero Tolerance mean zero, not the default.
	ToleranceSet bool
	// Timebox defaults to interval/2 and may not exceed the interval.
	Timebox  time.Duration
	Priority int
	// FirstRun is an interval task's first due time; zero means now +
	// interval. Any other time must lie between rules.MinTime and
	// rules.MaxTime.
	FirstRun time.Time

	// Cron and At are the other schedule kinds (see docs/schedules.md): exactly one
	// of Interval, Cron (one or more expressions whose slots are united)
	// and At (instants; one instant is a one-time task) is set. A cron or
	// at task is first due at its first slot strictly after its creation
	// (at or after StartAt when that is later); its tolerance defaults to
	// 5s (or a tenth of the shortest spacing of its next 1,000 slots when
	// smaller), its timebox to half that spacing (1h for a single slot).
	Cron []string
	At   []time.Time
	// Timezone is the IANA zone cron expressions are read in (default
	// UTC); DSTGap ("shift" default, "skip") and DSTOverlap ("first"
	// default, "last", "both") say what a wall time that does not exist or
	// happens twice does. Cron only (Timezone: cron and at).
	Timezone, DSTGap, DSTOverlap string
	// Exclude lists dates (2026-12-25: that day in Timezone) and cron
	// expressions whose wall times are no slots (DESIGN §8.4). Cron only.
	Exclude []string
	// StartAt and EndAt bound the slots (zero: unbounded); MaxRuns caps
	// the scheduled runs (0: no limit); Jitter moves every slot later by a
	// deterministic offset in [0, Jitter) (R17). Every kind.
	StartAt, EndAt time.Time
	MaxRuns        int
	Jitter         time.Duration
	// MaxWaiting bounds the task's runs waiting in the queue at once
	// (R18): 1..1000, zero means the default, 3. A task at its bound
	// enqueues nothing on a tick and keeps its nextRun.
	MaxWaiting int
	// Queue, Retry, MissedRunPolicy, MissedAfter, StartDeadline and
	// HeartbeatTimeout are the run policy (R12–R16, docs/policies.md):
	// the named queue the runs wait in ("" is "default"); retries of
	// failed runs (nil: none); "run_once" (default) or "skip" for missed
	// slots, a slot being missed when found later than slot + MissedAfter
	// (0: one spacing); a run asking to start later than slot +
	// StartDeadline is dropped as too_late (0: no deadline); a run that
	// has not heartbeated for HeartbeatTimeout is forced to end (0: off).
	Queue            string
	Retry            *RetryPolicy
	MissedRunPolicy  string
	MissedAfter      time.Duration
	StartDeadline    time.Duration
	HeartbeatTimeout time.Duration
	// Overlap is what happens when a run asks to start while another run
	// of the task is running (DESIGN §8.4, docs/policies.md): "skip" (the
	// default, ""), "buffer_one", "cancel_other" or "allow".
	// PauseAfterFailures, when ≥ 1, pauses the task once the runs of that
	// many consecutive slots have failed, each after its retries (0: never).
	Overlap            string
	PauseAfterFailures int
	// HistoryRetention is how long the task's events are kept (DESIGN
	// §8.3); zero: the scheduler's Config.HistoryRetention.
	HistoryRetention time.Duration
}

// RetryPolicy is R13's retry policy: a failed run with attempts left is
// retried after min(InitialBackoff × Multiplier^(attempt-1), MaxBackoff).
// MaxAttempts counts the first try (1: no retry).
type RetryPolicy struct {
	MaxAttempts    int
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	Multiplier     float64
}

// The parts of a retry policy of more than one attempt that the API and
// scenarios fill in when left out (R13; docs/policies.md).
const (
	DefaultRetryInitialBackoff = time.Second
	DefaultRetryMaxBackoff     = time.Minute
	DefaultRetryMultiplier     = 2.0
)

// FillDefaults gives a policy of more than one attempt the defaults for the
// parts its caller was not given (the given* flags say which were):
// initial backoff 1s, max backoff 1m (or the initial backoff when that is
// longer), multiplier 2. A policy of one attempt, or none, is left as is:
// there is nothing to retry.
func (r *RetryPolicy) FillDefaults(initialGiven, maxGiven, multiplierGiven bool) {
	if r == nil || r.MaxAttempts <= 1 {
		return
	}
	if !initialGiven {
		r.InitialBackoff = DefaultRetryInitialBackoff
	}
	if !maxGiven {
		r.MaxBackoff = max(DefaultRetryMaxBackoff, r.InitialBackoff)
	}
	if !multiplierGiven {
		r.Multiplier = DefaultRetryMultiplier
	}
}

func (r *RetryPolicy) events() *events.Retry {
	if r == nil {
		return nil
	}
	return &events.Retry{MaxAttempts: r.MaxAttempts, InitialBackoff: events.Duration(r.InitialBackoff),
		MaxBackoff: events.Duration(r.MaxBackoff), Multiplier: r.Multiplier}
}

func retryPolicy(r *events.Retry) *RetryPolicy {
	if r == nil {
		return nil
	}
	return &RetryPolicy{MaxAttempts: r.MaxAttempts, InitialBackoff: r.InitialBackoff.D(),
		MaxBackoff: r.MaxBackoff.D(), Multiplier: r.Multiplier}
}

// rulesSpec is the spec as the rules take it.
func (spec TaskSpec) rulesSpec() rules.Spec {
	sc := events.Schedule{Interval: events.Duration(spec.Interval), Cron: spec.Cron, At: utc(spec.At),
		Timezone: spec.Timezone, DSTGap: spec.DSTGap, DSTOverlap: spec.DSTOverlap, Exclude: spec.Exclude}
	return rules.Spec{Name: spec.Name, Owner: spec.Owner, Kind: spec.Kind, Payload: spec.Payload, Schedule: sc,
		Window: events.Window{StartAt: events.TimePtr(spec.StartAt), EndAt: events.TimePtr(spec.EndAt),
			MaxRuns: spec.MaxRuns, Jitter: events.Duration(spec.Jitter)},
		Tolerance: spec.Tolerance, ToleranceSet: spec.ToleranceSet, Timebox: spec.Timebox, Priority: spec.Priority,
		MaxWaiting: spec.MaxWaiting,
		Policy: events.Policy{Queue: spec.Queue, Retry: spec.Retry.events(), MissedRunPolicy: spec.MissedRunPolicy,
			MissedAfter: events.Duration(spec.MissedAfter), StartDeadline: events.Duration(spec.StartDeadline),
			HeartbeatTimeout: events.Duration(spec.HeartbeatTimeout), Overlap: spec.Overlap,
			PauseAfterFailures: spec.PauseAfterFailures},
		HistoryRetention: spec.HistoryRetention}
}

func utc(ts []time.Time) []time.Time {
	if ts == nil {
		return nil
	}
	out := make([]time.Time, len(ts))
	for i, t := range ts {
		out[i] = t.UTC()
	}
	return out
}

// TaskUpdate changes some fields of a task; every field is optional and
// an unset one keeps the task's current value. The task's actor applies it
// to the state it holds when the update arrives, so concurrent updates of
// different fields all survive (no read-merge-write).
//
// A new Interval takes the default tolerance and timebox for it unless
// Tolerance or Timebox is given too.
type TaskUpdate struct {
	// Schedule, when not nil, replaces the schedule as written (its kind,
	// zone and DST policies; see Schedule), and the tolerance when it
	// carries one. Give it or Interval, Cron, At, Timezone, DSTGap and
	// DSTOverlap (and Tolerance), not both.
	Schedule *Schedule
	// Payload, when not nil, replaces the payload (JSON null clears it).
	Payload json.RawMessage
	// Interval, when not nil, replaces the interval (positive).
	Interval *time.Duration
	// Tolerance, when not nil, replaces the tolerance (0 is no tolerance).
	Tolerance *time.Duration
	// Timebox, when not nil, replaces the timebox (positive).
	Timebox *time.Duration
	// Priority, when not nil, replaces the priority.
	Priority *int
	// NextRun, when not nil, moves nextRun.
	NextRun *time.Time

	// Cron or At, when not nil, makes the task a cron or an at task with
	// that schedule (Interval makes it an interval task); at most one of
	// the three. Timezone, DSTGap, DSTOverlap, Exclude (empty clears it),
	// StartAt, EndAt (a zero time clears it), MaxRuns and Jitter (0
	// clears), when not nil, replace the task's. Any change of the schedule is recorded and its
	// nextRun recomputed from the new schedule; a finished task given a
	// slot again is active again.
	Cron                         []string
	At                           []time.Time
	Timezone, DSTGap, DSTOverlap *string
	Exclude                      *[]string
	StartAt, EndAt               *time.Time
	MaxRuns                      *int
	Jitter                       *time.Duration
	// MaxWaiting, when not nil, replaces the bound on waiting runs (R18);
	// 0 restores the default.
	MaxWaiting *int
	// Queue, Retry, MissedRunPolicy, MissedAfter, StartDeadline and
	// HeartbeatTimeout, when not nil, replace the run policy's (see
	// TaskSpec); "" or 0 restores a default, a Retry with MaxAttempts 1
	// turns retries off.
	Queue            *string
	Retry            *RetryPolicy
	MissedRunPolicy  *string
	MissedAfter      *time.Duration
	StartDeadline    *time.Duration
	HeartbeatTimeout *time.Duration
	// Overlap and PauseAfterFailures, when not nil, replace the task's (see
	// TaskSpec); "" restores skip, 0 turns pausing off.
	Overlap            *string
	PauseAfterFailures *int
	// HistoryRetention, when not nil, replaces the task's history
	// retention; 0 restores the scheduler's default.
	HistoryRetention *time.Duration
}

// command is the update as the rules' command.
func (u TaskUpdate) command() (rules.Update, error) {
	var c rules.Update
	u, err := u.flatSchedule()
	if err != nil {
		return c, err
	}
	c.Payload, c.Priority, c.MaxWaiting = u.Payload, u.Priority, u.MaxWaiting
	c.Interval, c.Tolerance, c.Timebox, c.NextRun = u.Interval, u.Tolerance, u.Timebox, u.NextRun
	if u.Cron != nil {
		c.Cron = &u.Cron
	}
	if u.At != nil {
		at := utc(u.At)
		c.At = &at
	}
	c.Timezone, c.DSTGap, c.DSTOverlap, c.Exclude = u.Timezone, u.DSTGap, u.DSTOverlap, u.Exclude
	c.StartAt, c.EndAt, c.MaxRuns, c.Jitter = u.StartAt, u.EndAt, u.MaxRuns, u.Jitter
	c.Queue, c.Retry, c.MissedRunPolicy = u.Queue, u.Retry.events(), u.MissedRunPolicy
	c.MissedAfter, c.StartDeadline, c.HeartbeatTimeout = u.MissedAfter, u.StartDeadline, u.HeartbeatTimeout
	c.Overlap, c.PauseAfterFailures = u.Overlap, u.PauseAfterFailures
	c.HistoryRetention = u.HistoryRetention
	return c, nil
}

// Task is a task as its actor holds it.
type Task struct {
	ID      uuid.UUID
	Name    string
	Owner   string
	Kind    string
	Payload json.RawMessage
	// Interval, or Cron or At with Timezone, DSTGap, DSTOverlap and
	// Exclude: the schedule as written.
	Interval                     time.Duration
	Cron                         []string
	At                           []time.Time
	Timezone, DSTGap, DSTOverlap string
	Exclude                      []string
	// StartAt, EndAt (zero: unbounded), MaxRuns (0: no limit), Jitter.
	StartAt, EndAt time.Time
	MaxRuns        int
	Jitter         time.Duration
	Tolerance      time.Duration
	Timebox        time.Duration
	Priority       int
	Status         string // active, paused, finished, deleted
	NextRun        time.Time
	LastRun        time.Time // zero when no run started yet
	Runs           int       // runs enqueued so far
	Waiting        int       // runs waiting in the queue
	Running        int       // runs executing
	Checkpoint     json.RawMessage
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// Version is the task stream's version after the task's last event.
	Version uint64
	// Position is the global log position of the task's latest event: what
	// this call recorded, else the latest event the actor knew of. A view
	// that has folded the log up to Position shows this task as returned
	// (read-your-writes: crontasks.View.WaitFor).
	Position events.Position
	// MaxWaiting is the bound on waiting runs in force (R18): the task's
	// own, or the default 3.
	MaxWaiting int
	// The run policy (see TaskSpec); Queue and MissedRunPolicy are those in
	// force ("default" and "run_once" when the task names none).
	Queue            string
	Retry            *RetryPolicy
	MissedRunPolicy  string
	MissedAfter      time.Duration
	StartDeadline    time.Duration
	HeartbeatTimeout time.Duration
	// Overlap is the overlap policy in force ("skip" when the task names
	// none); PauseAfterFailures its pause_after_failures (0: never).
	// Failures counts the consecutive failed slots so far; PauseReason is
	// "failures" when the task paused itself, else "".
	Overlap            string
	PauseAfterFailures int
	Failures           int
	PauseReason        string
	// HistoryRetention is how long the task's events are kept (DESIGN
	// §8.3); zero: the scheduler's Config.HistoryRetention.
	HistoryRetention time.Duration
}

func taskFrom(s rules.State, pos events.Position) Task {
	sc, w := s.Spec.Schedule, s.Spec.Window
	return Task{ID: s.ID, Name: s.Spec.Name, Owner: s.Spec.Owner, Kind: s.Spec.Kind, Payload: s.Spec.Payload,
		Interval: s.Interval(), Cron: sc.Cron, At: sc.At, Timezone: sc.Timezone, DSTGap: sc.DSTGap, DSTOverlap: sc.DSTOverlap,
		Exclude: sc.Exclude, StartAt: w.Start(), EndAt: w.End(), MaxRuns: w.MaxRuns, Jitter: w.Jitter.D(), Tolerance: s.Spec.Tolerance, Timebox: s.Spec.Timebox, Priority: s.Spec.Priority,
		MaxWaiting: s.Spec.WaitingBound(), Status: s.Status.String(), NextRun: s.NextRun, LastRun: s.LastRun, Runs: s.Runs,
		Waiting: len(s.Waiting()), Running: len(s.Running()), Checkpoint: s.Checkpoint,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, Version: s.Version, Position: pos,
		Queue: s.Spec.Policy.QueueName(), Retry: retryPolicy(s.Spec.Policy.Retry), MissedRunPolicy: missedRunPolicy(s.Spec.Policy),
		MissedAfter: s.Spec.Policy.MissedAfter.D(), StartDeadline: s.Spec.Policy.StartDeadline.D(),
		HeartbeatTimeout: s.Spec.Policy.HeartbeatTimeout.D(), Overlap: overlapPolicy(s.Spec.Policy),
		PauseAfterFailures: s.Spec.Policy.PauseAfterFailures, Failures: s.Failures, PauseReason: s.PauseReason,
		HistoryRetention: s.Spec.HistoryRetention}
}

// overlapPolicy is the overlap policy in force: skip when the task names
// none.
func overlapPolicy(p events.Policy) string {
	if p.Overlap == "" {
		return events.OverlapSkip
	}
	return p.Overlap
}

// missedRunPolicy is the missed-run policy in force: run_once when the task
// names none.
func missedRunPolicy(p events.Policy) string {
	if p.MissedRunPolicy == "" {
		return events.MissedRunOnce
	}
	return p.MissedRunPolicy
}
