// Package scheduler is the embedding API of cronactor: configure it with an
// events.Store, register handlers by kind, create tasks, Start, and Stop.
//
// Inside, every task is an actor (package task) whose state is rebuilt from
// its own stream; a ticker actor and shard actors (package dueindex) pass
// ticks to the tasks that are due; a queue and a pool of workers (package
// worker) ask the task actor for permission before running a handler. Every
// component is built with one archetype.Archetype (the Config's clock and
// logger). See docs/architecture.md.
//
// Lifecycle: a task has an actor in memory while it needs one — while a run
// of it is open. A task that rests (no open run: active, paused or
// finished between two runs) is kept as a compact record instead (its
// folded state in taskstate's binary form), still in the due-time index;
// a tick or a call about it starts its actor from the record, and the
// actor leaves again once it rests. A task deleted with nothing open keeps
// neither; any call about it loads it from the store. Start spawns actors
// only for tasks with open runs. Every method's context bounds
// its call into the actor; each store call of an actor is bounded by
// Config.StoreTimeout. Calls that write return the global log position of
// the task's latest event (Task.Position), for read-your-writes on a view.
//
// Writes are commands decided by the task's actor against its current
// state: UpdateTask sends only the fields a TaskUpdate sets (an unset
// Tolerance keeps the current one unless the schedule changes; earlier
// versions took the default),
// and every write may carry IfVersion to apply only at the version the
// caller read.
//
// Host actor system: an embedder that runs protoactor-go itself passes its
// *actor.ActorSystem (Config.ActorSystem); the scheduler's actors then live
// in it under a name prefix of their own (ActorPrefix), Stop stops exactly
// them, and host actors can address a task as an actor: TaskPID, and the
// request messages GetTask, PauseTask, ResumeTask, TriggerTask and
// UpdateTask answered by a TaskReply (gateway.go, docs/embedding.md).
//
// Concurrency: a Scheduler is safe for concurrent use once Start returned.
// Register handlers before Start. A task's actor decides the Go calls, the
// workers' requests and host actors' messages one at a time.
package scheduler

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/eventstream"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"
)

// Errors of the scheduler; test with errors.Is.
var (
	ErrTaskNotFound = errors.New("scheduler: task not found")
	ErrNotStarted   = errors.New("scheduler: not started")
	ErrStarted      = errors.New("scheduler: already started")
	ErrUnknownKind  = errors.New("scheduler: no handler registered for kind")
	ErrTaskDeleted  = rules.ErrTaskDeleted
	// ErrVersionMismatch: a write's IfVersion is not the task's version;
	// nothing was recorded. The error is a *VersionMismatchError.
	ErrVersionMismatch = rules.ErrVersionMismatch
	// ErrInvalidSpec matches every *FieldError.
	ErrInvalidSpec = rules.ErrInvalidSpec
	// ErrCannotTrigger: Trigger of a task that is paused, finished, deleted
	// or at its bound of waiting runs; the error's text says which.
	ErrCannotTrigger = rules.ErrCannotTrigger
)

// FieldError names the field of a spec that is wrong.
type FieldError = rules.FieldError

// VersionMismatchError says which version a write expected and which the
// task is at. It matches ErrVersionMismatch.
type VersionMismatchError = rules.VersionMismatchError

// WriteOption qualifies a write to a task (UpdateTask, PauseTask,
// ResumeTask, DeleteTask).
type WriteOption func(*writeOptions)

type writeOptions struct{ ifVersion *uint64 }

// IfVersion makes a write apply only if the task is at version v (its
// Task.Version, the HTTP ETag), decided by the task's actor against its
// current state; otherwise the write records nothing and fails with a
// *VersionMismatchError.
func IfVersion(v uint64) WriteOption { return func(o *writeOptions) { o.ifVersion = &v } }

func writeOpts(opts []WriteOption) writeOptions {
	var o writeOptions
	for _, f := range opts {
		f(&o)
	}
	return o
}

// Config configures a Scheduler. Only Store is required.
type Config struct {
	// Store holds the event log. Required.
	Store events.Store
	// Clock is the source of time; nil means the wall clock. Simulation and
	// tests pass a *clock.Virtual.
	Clock clock.Clock
	// Tick is the clock's tick interval. Default 1s; at least 1ms.
	Tick time.Duration
	// Workers is how many runs of the "default" queue execute at once,
	// unless Queues names "default". Default 8; at most 100,000.
	Workers int
	// Queues are named queues and their limits: name → how many of its
	// runs execute at once (1–100,000; names: see CheckQueueName). Each
	// queue has workers of its own, so a slow queue never takes another's
	// slots; priority orders runs within a queue (docs/queues.md). A task
	// naming a queue not listed here gets one made with the default
	// queue's limit, shown as not configured. Nil: the default queue only.
	Queues map[string]int
	// Shards is how many actors keep the due-time index. Default 4; 1–1024.
	Shards int
	// MaxActiveTasks bounds, for each queue, the task actors that ticks
	// wake: while that many actors that a tick reached live for a queue
	// (its tasks with an open run), that queue's due tasks wait in the
	// index, and go on — each deciding at the instant of the tick it fell
	// due at (R1) — as those actors leave. Other queues' due tasks go on
	// meanwhile: a slow queue's backlog holds back only its own tasks. It
	// bounds the memory a wave of due tasks takes, to this many actors per
	// queue. Calls are not held back, actors a call started count from the
	// first tick that reaches them (those with open runs at Start from
	// then), and actors pinned by TaskPID are not counted. Default
	// DefaultMaxActiveTasks; at least 1.
	MaxActiveTasks int
	// SnapshotEvery is how many events the log may gain before the
	// scheduler snapshots the tasks that changed, on a store that keeps
	// snapshots (events.SnapshotStore; the embedded store does): Start
	// then reads one entry per task and the log after the snapshot instead
	// of the whole log (docs/architecture.md, "Snapshots"). Stop always
	// snapshots. Default DefaultSnapshotEvery; negative: no snapshots are
	// read or written. Only one scheduler may use a store's snapshots.
	SnapshotEvery int
	// RecordEvery is how many events a task's actor may record before the
	// scheduler keeps its state as a snapshot record again, while the
	// actor lives (a task that rests is recorded each time it rests): a
	// load (an actor started for a task with no record in memory, a
	// restart's read of a task that had an actor) reads the task's record
	// and at most about this many events after it, however long its
	// stream. Default DefaultRecordEvery; negative: only rests are
	// recorded. Used only with snapshots (SnapshotEvery).
	RecordEvery int
	// HistoryRetention is how long the events of a task that sets no
	// retention of its own (TaskSpec.HistoryRetention) are kept (DESIGN
	// §8.3, docs/decisions/0023-retention.md): older ones leave its
	// stream after a TaskCompacted that carries its state. Zero (the
	// default) keeps everything; not negative. It needs a store that
	// implements events.Truncater (both shipped stores do); with another,
	// every task keeps its whole history and Start logs that once.
	HistoryRetention time.Duration
	// Loaders bounds the task loads that read the store at once (each on
	// a goroutine of its own, never a dispatcher's): the rest wait their
	// turn. Default DefaultLoaders; 1–10,000.
	Loaders int
	// LoadRetry and LoadRetryMax are the backoff of a task whose load
	// failed when a tick reached it: it stays scheduled and gets a tick
	// again LoadRetry later, doubling with each failure in a row up to
	// LoadRetryMax. Defaults 1s and 1m; LoadRetryMax at least LoadRetry.
	LoadRetry, LoadRetryMax time.Duration
	// Logger receives operational logs. Default: discard.
	Logger *slog.Logger
	// PickupDelay, if set, delays when a queued run may be taken by a worker
	// (simulation uses it to script queue delays). Nil: at once.
	PickupDelay func(worker.QueuedRun) time.Duration
	// RequestTimeout bounds each call into a task actor, on top of the
	// caller's context (which bounds it too). Default 30s.
	RequestTimeout time.Duration
	// StoreTimeout bounds each store call a task actor makes (a read or an
	// append), so that a hung store cannot block an actor for ever. Wall
	// clock. Default 10s.
	StoreTimeout time.Duration
	// TracerProvider, if set, gets one span per run a worker takes (see
	// worker.PoolConfig). Nil: no tracing. Spans never change a decision.
	TracerProvider trace.TracerProvider
	// Middleware wraps every registered handler, the first outermost
	// (worker.Chain): logging, metrics, tenancy around every run. Nil: the
	// handlers as registered. Tracing is not one of them: it is
	// TracerProvider, which sees what no handler does (a run's time in the
	// queue, its drop, a forced end decided by the task).
	Middleware []worker.Middleware
	// ActorSystem, if set, is the host's protoactor-go actor system: the
	// scheduler spawns its actors in it, each named under a prefix of its
	// own ("cronactor-N/", see ActorPrefix), so host actors can address a
	// task's actor (TaskPID and the messages of gateway.go). Stop stops
	// exactly the scheduler's actors and leaves the system and every other
	// actor in it running; several schedulers may share one system. Clock
	// and Logger stay the scheduler's (protoactor's own logs, such as dead
	// letters, go to the system's logger). Nil: the scheduler makes an
	// actor system of its own and shuts it down in Stop.
	ActorSystem *actor.ActorSystem
}

// Validate reports the first field out of its limits.
func (c Config) Validate() error {
	switch {
	case c.Store == nil:
		return &FieldError{Field: "Store", Message: "is required"}
	case c.Tick != 0 && c.Tick < time.Millisecond:
		return &FieldError{Field: "Tick", Message: fmt.Sprintf("must be at least 1ms, got %s", c.Tick)}
	case c.Workers < 0 || c.Workers > 100000:
		return &FieldError{Field: "Workers", Message: fmt.Sprintf("must be between 1 and 100000, got %d", c.Workers)}
	case validateQueues(c.Queues) != nil:
		return validateQueues(c.Queues)
	case c.Shards < 0 || c.Shards > 1024:
		return &FieldError{Field: "Shards", Message: fmt.Sprintf("must be between 1 and 1024, got %d", c.Shards)}
	case c.MaxActiveTasks < 0:
		return &FieldError{Field: "MaxActiveTasks", Message: fmt.Sprintf("must be at least 1, got %d", c.MaxActiveTasks)}
	case c.RequestTimeout < 0:
		return &FieldError{Field: "RequestTimeout", Message: "must not be negative"}
	case c.StoreTimeout < 0:
		return &FieldError{Field: "StoreTimeout", Message: "must not be negative"}
	case c.Loaders < 0 || c.Loaders > 10000:
		return &FieldError{Field: "Loaders", Message: fmt.Sprintf("must be between 1 and 10000, got %d", c.Loaders)}
	case c.HistoryRetention < 0:
		return &FieldError{Field: "HistoryRetention", Message: fmt.Sprintf("must not be negative, got %s", c.HistoryRetention)}
	case c.LoadRetry < 0:
		return &FieldError{Field: "LoadRetry", Message: "must not be negative"}
	case c.LoadRetryMax < 0 || (c.LoadRetryMax != 0 && c.LoadRetryMax < max(c.LoadRetry, time.Millisecond)):
		return &FieldError{Field: "LoadRetryMax", Message: fmt.Sprintf("must be at least LoadRetry (%s), got %s", c.LoadRetry, c.LoadRetryMax)}
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Tick == 0 {
		c.Tick = time.Second
	}
	if c.Workers == 0 {
		c.Workers = 8
	}
	if c.Shards == 0 {
		c.Shards = 4
	}
	if c.MaxActiveTasks == 0 {
		c.MaxActiveTasks = DefaultMaxActiveTasks
	}
	if c.SnapshotEvery == 0 {
		c.SnapshotEvery = DefaultSnapshotEvery
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.StoreTimeout == 0 {
		c.StoreTimeout = task.DefaultStoreTimeout
	}
	if c.RecordEvery == 0 {
		c.RecordEvery = DefaultRecordEvery
	}
	if c.Loaders == 0 {
		c.Loaders = DefaultLoaders
	}
	if c.LoadRetry == 0 {
		c.LoadRetry = time.Second
	}
	if c.LoadRetryMax == 0 {
		c.LoadRetryMax = max(time.Minute, c.LoadRetry)
	}
	return c
}

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
// Tolerance (with ToleranceSet when zero) or Timebox is given too.
type TaskUpdate struct {
	// Schedule, when not nil, replaces the schedule as written (its kind,
	// zone and DST policies; see Schedule), and the tolerance when it
	// carries one. Give it or Interval, Cron, At, Timezone, DSTGap and
	// DSTOverlap (and Tolerance, ToleranceSet), not both.
	Schedule *Schedule
	// Payload, when not nil, replaces the payload (JSON null clears it).
	Payload json.RawMessage
	// Interval, when not zero, replaces the interval.
	Interval time.Duration
	// Tolerance, when not zero or when ToleranceSet, replaces the
	// tolerance.
	Tolerance    time.Duration
	ToleranceSet bool
	// Timebox, when not zero, replaces the timebox.
	Timebox time.Duration
	// Priority, when not nil, replaces the priority.
	Priority *int
	// NextRun, when not zero, moves nextRun.
	NextRun time.Time

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
	if u.Interval != 0 {
		c.Interval = &u.Interval
	}
	if u.Tolerance != 0 || u.ToleranceSet {
		c.Tolerance = &u.Tolerance
	}
	if u.Timebox != 0 {
		c.Timebox = &u.Timebox
	}
	if !u.NextRun.IsZero() {
		c.NextRun = &u.NextRun
	}
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

// Stats are live figures of a running scheduler.
type Stats struct {
	// Tasks counts the tasks in memory, as an actor or as a resting
	// task's record: every task not deleted, and deleted ones that still
	// have open runs.
	Tasks int
	// Actors counts the task actors in memory: the tasks with an open run,
	// and those woken for a tick or a call that have not left yet.
	Actors int
	// Queued counts the runs waiting for a worker, Busy the workers
	// executing a run, in every queue.
	Queued int64
	Busy   int64
	// Workers is how many runs may execute at once: the sum of every
	// queue's limit.
	Workers int
	// Queues are each queue's figures, by name: the configured ones (the
	// default queue included) from the start, one only a task names once
	// its first run has arrived.
	Queues []QueueStats
}

// slot is a task in memory: its actor's entry, or the record of the task
// while it rests (see record.go). One of the two is set.
type slot struct {
	e   *entry
	rec string
}

// entry is a task's actor in memory.
type entry struct {
	pid *actor.PID
	// mu orders the messages sent to pid against its leaving: every message
	// is sent while holding it, and Leave queues the actor's last message
	// while holding it (see task.Registry). It guards pid, leaving, left and
	// pinned.
	mu sync.Mutex
	// leaving is set while the actor leaves, until it has stopped or
	// stayed; left, made by the first caller that waits for that, is
	// closed then (most actors leave with nobody waiting: no channel).
	leaving bool
	left    chan struct{}
	// pinned is set once TaskPID has pinned the actor at pid, which the
	// bound then leaves out (see gate).
	pinned bool
	// gate is the queue whose share of Config.MaxActiveTasks the actor
	// takes until it stops: that of the first tick that reached it, or of
	// its task's open runs at Start. Nil: it takes none (no tick reached
	// it yet, or it is pinned).
	gate *gate
	// ticks reached the task while its actor was leaving: registry.Left
	// sends them on (see deliverTick).
	ticks []pendingTick
}

// endLeaving ends the actor's leaving, waking the callers that wait for
// it; e.mu must be held.
func (e *entry) endLeaving() {
	e.leaving = false
	if e.left != nil {
		close(e.left)
		e.left = nil
	}
}

// gone reports whether the actor has stopped: the map no longer holds the
// entry (the task's slot holds its record, or nothing), and a caller
// holding it looks again. e.mu must be held.
func (e *entry) gone() bool { return e.pid == nil }

// DefaultMaxActiveTasks is Config.MaxActiveTasks when unset: a wave of due
// tasks keeps at most this many task actors (each with its open run, a few
// KiB) in memory at once per queue; 64 workers drain far fewer. A larger
// bound made a 100,000-task wave dearer (at 65,536: 60 µs of CPU per run
// against 46, the collector marking more live actors; docs/performance.md,
// "How many task actors a wave keeps").
const DefaultMaxActiveTasks = 4096

// gate is one queue's share of Config.MaxActiveTasks (see Scheduler.room).
type gate struct {
	// actors counts the queue's task actors that take a place (see
	// entry.gate); waking the places room reserved for ticks being
	// delivered; starved is set while a shard holds the queue's due tasks
	// back for want of room.
	actors  atomic.Int64
	waking  atomic.Int64
	starved atomic.Bool
}

// Scheduler runs tasks. Build it with New.
type Scheduler struct {
	cfg      Config
	arch     archetype.Archetype // cfg's clock and logger, for every component
	handlers map[string]worker.Handler

	// mu guards what follows but owners (each entry orders its own
	// messages, see entry.mu).
	mu      sync.Mutex
	started bool
	stopped bool
	// gateClosed: StopStarting has stopped the ticking and the admission
	// of runs.
	gateClosed bool
	sys        *actor.ActorSystem
	ticker     *actor.PID
	queue      *actor.PID
	pool       *worker.Queue              // the queue's actor is at queue
	enqueue    func(worker.Enqueued) bool // pool.Enqueue, made once
	shards     []*actor.PID
	tasks      map[uuid.UUID]slot
	// ownersMu guards owners: the tasks not deleted, by owner (R6).
	ownersMu sync.Mutex
	owners   map[string]map[uuid.UUID]struct{}
	stats    *worker.Stats
	// actors counts the task actors (Stats.Actors); gates holds each
	// queue's *gate, by name, made as ticks first name the queue (see
	// room).
	actors  atomic.Int64
	gates   sync.Map
	base    context.Context
	abandon context.CancelFunc
	// dispatch runs the task actors' mailboxes (task.Dispatcher).
	dispatch *task.Dispatcher
	// infra lists the actors that are not task actors: shards, queue, ticker.
	infra []*actor.PID
	// prefix starts the name of every actor of this scheduler; hosted is
	// set when sys is the host's (Config.ActorSystem).
	prefix string
	hosted bool
	// deadLetters is the clock's dead-letter watcher on sys (see
	// counted.WatchPrefix).
	deadLetters *eventstream.Subscription
	// host is hostRequest, made once for every task actor's config.
	host func(any) (task.HostRequest, bool)
	// snap is what keeps the tasks' snapshots (snapshot.go), nil without.
	snap *snapshots
	// loaders holds a token per load reading the store (Config.Loaders);
	// load is loadTask, made once for every task actor's config.
	loaders chan struct{}
	load    func(context.Context, uuid.UUID) (rules.State, events.Position, error)
	// vacated counts the slots emptied (a task deleted and idle, or whose
	// load failed, left): a call's load (lookup) made before one of them
	// may be older than the task, and is not used. retries are the tasks
	// whose load failed on a tick (load.go). Both guarded by mu.
	vacated uint64
	retries map[uuid.UUID]*loadRetry
}

// schedulers numbers the Schedulers of the process, for their actors'
// name prefix.
var schedulers atomic.Uint64

// New checks cfg and returns a Scheduler; nothing runs before Start.
func New(cfg Config) (*Scheduler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Scheduler{cfg: cfg, arch: archetype.Archetype{Clock: cfg.Clock, Logger: cfg.Logger},
		handlers: map[string]worker.Handler{}, prefix: fmt.Sprintf("cronactor-%d/", schedulers.Add(1)),
		loaders: make(chan struct{}, cfg.Loaders)}, nil
}

// ActorPrefix is how the name (actor.PID.Id) of every actor of this
// scheduler starts, e.g. "cronactor-1/": unique in the process, so that
// schedulers sharing a host's actor system (Config.ActorSystem) never
// collide with each other or with the host's actors.
func (s *Scheduler) ActorPrefix() string { return s.prefix }

// Register sets the handler for a kind of task. Call it before Start. A
// handler that implements worker.PayloadValidator checks the payload of a
// task of its kind when the task is created and when an update replaces
// the payload; what it refuses is not recorded.
func (s *Scheduler) Register(kind string, h worker.Handler) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("%w: register %q before Start", ErrStarted, kind)
	}
	if kind == "" || h == nil {
		return &FieldError{Field: "kind", Message: "kind and handler are required"}
	}
	s.handlers[kind] = h
	return nil
}

// Kinds lists the registered kinds.
func (s *Scheduler) Kinds() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.handlers))
	for k := range s.handlers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Start rebuilds every task from the store (R9: waiting runs go back on the
// queue, runs that were running are forced to end once their deadline has
// passed), then starts ticking. Only tasks with open runs get an actor;
// resting ones get a record and their place in the due-time index, and an
// actor when a tick or a call needs them. Tasks that are deleted and have
// nothing open get neither: they stay in the log and the view, and a later
// command about them loads one on demand.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return ErrStarted
	}
	defer recoveryGC()()
	r, err := s.recover(ctx)
	if err != nil {
		return err
	}
	states := r.states
	c := s.cfg.Clock
	logger := s.cfg.Logger
	if s.cfg.ActorSystem != nil {
		s.sys, s.hosted = s.cfg.ActorSystem, true
	} else {
		s.sys = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
			return slog.New(slog.NewTextHandler(io.Discard, nil))
		}))
	}
	s.deadLetters = counted.WatchPrefix(s.sys, c, s.prefix, hostMessage)
	s.host, s.load = s.hostRequest, s.loadTask
	root := s.sys.Root
	s.base, s.abandon = context.WithCancel(context.Background())
	s.stats = &worker.Stats{}
	s.tasks, s.owners = make(map[uuid.UUID]slot, len(states)), map[string]map[uuid.UUID]struct{}{}
	ids := make([]uuid.UUID, 0, len(states))
	index := make([][]dueindex.Entry, s.cfg.Shards)
	for i := range index { // IDs are random: about as many per shard, and a little room
		index[i] = make([]dueindex.Entry, 0, len(states)/s.cfg.Shards+len(states)/s.cfg.Shards/16+16)
	}
	rested := 0
	// The tasks not deleted, indexed by owner after this pass rather than
	// within it: restarting 1,000,000 tasks took 1.68 s instead of 1.85 s
	// (docs/performance.md, "The bars measured again, and the restart
	// after a wave").
	type owned struct {
		owner string
		id    uuid.UUID
	}
	byOwner := make([]owned, 0, len(states))
	for id, st := range states {
		if rules.Idle(&st.State) {
			continue // deleted, nothing open: no actor until asked
		}
		if st.State.Status != rules.StatusDeleted {
			byOwner = append(byOwner, owned{st.State.Spec.Owner, id})
		}
		if !rules.Rests(&st.State) {
			ids = append(ids, id)
			continue
		}
		// Resting: a record and its place in the index, no actor.
		rec, ok := r.records[id]
		if !ok {
			rec = newRecord(st)
		}
		s.tasks[id] = slot{rec: rec}
		if t, ok := recoveredTrack(st.State); ok {
			i := s.shardIndex(id)
			index[i] = append(index[i], dueindex.Entry{TaskID: id, NextRun: t.NextRun, Queue: st.State.Spec.Policy.QueueName()})
		}
		rested++
	}
	s.ownersMu.Lock()
	for _, o := range byOwner {
		s.indexOwner(o.owner, o.id)
	}
	s.ownersMu.Unlock()
	for i := 0; i < s.cfg.Shards; i++ {
		initial := index[i]
		s.shards = append(s.shards, s.spawn(root, actor.PropsFromProducer(func() actor.Actor {
			return &dueindex.Shard{Archetype: s.arch, Deliver: s.deliver, Room: s.room, Initial: initial}
		})))
	}
	s.pool = worker.NewPool(worker.PoolConfig{
		Archetype: s.arch, Workers: s.cfg.Workers, Queues: s.cfg.Queues, Handlers: s.wrappedHandlers(), PickupDelay: s.cfg.PickupDelay,
		Ask: s.workerAsk, Post: s.workerPost, Tell: s.workerTell, Base: s.base, Stats: s.stats, TracerProvider: s.cfg.TracerProvider,
	})
	s.enqueue = s.pool.Enqueue
	s.queue = s.spawn(root, actor.PropsFromProducer(s.pool.Producer()))
	// Deterministic order: that of the IDs' text, which their bytes sort in
	// without formatting two strings per comparison (1M tasks: ~5.6s → ~1s).
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	for _, id := range ids {
		// An open run holds its actor as a tick's would: it takes a
		// place in its queue's share of the bound. (s.mu is held: the
		// actor cannot have left yet.)
		e := s.spawnTask(id, states[id])
		e.mu.Lock()
		e.count(s.gateOf(states[id].State.Spec.Policy.QueueName()))
		e.mu.Unlock()
	}
	s.ticker = s.spawn(root, actor.PropsFromProducer(func() actor.Actor {
		return &dueindex.Ticker{Archetype: s.arch, Interval: s.cfg.Tick, Shards: s.shards}
	}))
	if sn := s.snap; sn != nil {
		// The resting tasks whose state is not their snapshot's record
		// are written by the next sweep (all of them after a fold of the
		// whole log); the tasks with an actor are in its list of them.
		if r.changed == nil {
			for id, sl := range s.tasks {
				if sl.rec != "" {
					sn.dirty[id] = sl.rec
				}
			}
		}
		for id := range r.changed {
			switch st := states[id]; {
			case st == nil: // no stream
			case s.tasks[id].rec != "":
				sn.dirty[id] = s.tasks[id].rec
			case rules.Idle(&st.State): // its deletion is the last word
				sn.dirty[id] = newRecord(st)
			}
		}
		go s.runSweeper(sn)
		sn.poke()
	}
	s.started = true
	// The message says what the counts are (tasks - actors - resting
	// are deleted with nothing open).
	logger.Info("scheduler started (tasks: every task in the log; actors: those with a run open, given an actor now; "+
		"resting: the others not deleted, kept as a record until due or asked)",
		"tasks", len(states), "actors", len(ids), "resting", rested, "tick", s.cfg.Tick, "workers", s.cfg.Workers,
		"queues", len(s.cfg.Queues))
	if _, ok := s.cfg.Store.(events.Truncater); !ok {
		// Once: the task actors skip retention on such a store in silence.
		level := slog.LevelInfo
		if s.cfg.HistoryRetention > 0 {
			level = slog.LevelWarn
		}
		logger.Log(context.Background(), level, "history retention off: the store cannot remove events (no events.Truncater); every task keeps its whole history",
			"history_retention", s.cfg.HistoryRetention)
	}
	return nil
}

func (s *Scheduler) spawn(root *actor.RootContext, props *actor.Props) *actor.PID {
	pid := counted.SpawnPrefix(s.cfg.Clock, root, props, s.prefix)
	s.infra = append(s.infra, pid)
	return pid
}

// recoveryGCPercent is the garbage collector's target while Start folds
// the log. Recovery builds the state of every task at once — a heap that
// only grows — out of a stream of short-lived decoded events; at the
// default (100) the collector marks the growing heap again and again:
// restarting 1,000,000 tasks spent 27% of its CPU there, and 12.6 s against
// 10.8 s at 400. The process's own setting is restored once Start is done.
const recoveryGCPercent = 400

// recoveryGC raises the GC target to recoveryGCPercent (unless the process
// set a higher one, or turned the collector off) and returns what restores
// it.
func recoveryGC() (restore func()) {
	prev := debug.SetGCPercent(recoveryGCPercent)
	if prev < 0 || prev > recoveryGCPercent {
		debug.SetGCPercent(prev)
		return func() {}
	}
	return func() { debug.SetGCPercent(prev) }
}

// recovery is what Start rebuilt of the tasks: the state of every task;
// from a snapshot, also the tasks whose state is not their snapshot's
// record (changed), and the records of the others, as read; from the whole
// log, changed and records are nil. readWhole counts the streams a
// recovery from a snapshot read whole (streams_read_whole in its log line).
type recovery struct {
	states    map[uuid.UUID]*task.Initial
	changed   map[uuid.UUID]struct{}
	records   map[uuid.UUID]string
	readWhole int
}

// recover rebuilds the state of every task: from the store's snapshot and
// the log after it when there is one to use, else from the whole log.
func (s *Scheduler) recover(ctx context.Context) (recovery, error) {
	s.snap = newSnapshots(s.cfg)
	if s.snap != nil {
		r, err := s.recoverFromSnapshot(ctx)
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, errNoSnapshot) {
			return recovery{}, err
		}
		s.cfg.Logger.Info("no snapshot to start from: reading the whole log", "reason", err)
	}
	states, err := s.recoverStates(ctx)
	if err != nil {
		return recovery{}, err
	}
	if s.snap != nil {
		// What the snapshot holds may be of tasks the log no longer has
		// in that state: start afresh.
		if err := s.snap.store.ClearSnapshot(ctx); err != nil {
			s.cfg.Logger.Warn("snapshots off: the snapshot table cannot be cleared", "err", err)
			s.snap = nil
		}
	}
	return recovery{states: states}, nil
}

// recoverStates folds the global log into the state of every task.
func (s *Scheduler) recoverStates(ctx context.Context) (map[uuid.UUID]*task.Initial, error) {
	states := map[uuid.UUID]*task.Initial{}
	err := s.foldLog(ctx, events.Start, func(r *events.Recorded, id uuid.UUID, e events.Event) {
		st := states[id]
		if st == nil {
			st = &task.Initial{}
			states[id] = st
		}
		st.State.Apply(r.Metadata, e) // rules.Evolve in place
		st.Position = r.Position
	})
	if err != nil {
		return nil, err
	}
	return states, nil
}

// foldLog calls fold with every event of the task streams after the
// position after, in the log's order.
//
// Recovery reads every event of the log, so it is a pipeline: one
// goroutine reads the next page while this one decodes the current page
// in parallel (decoding is most of the work) and then folds it.
func (s *Scheduler) foldLog(ctx context.Context, after events.Position, fold func(r *events.Recorded, id uuid.UUID, e events.Event)) error {
	const pageSize = 4096
	type page struct {
		recs []events.Recorded
		err  error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pages := make(chan page, 2)
	go func() {
		defer close(pages)
		for {
			recs, err := s.cfg.Store.ReadAll(ctx, after, pageSize)
			select {
			case pages <- page{recs, err}:
			case <-ctx.Done():
				return
			}
			if err != nil || len(recs) < pageSize {
				return
			}
			after = recs[len(recs)-1].Position
		}
	}()
	decoded := make([]recovered, pageSize)
	for p := range pages {
		if p.err != nil {
			return fmt.Errorf("scheduler: recover: %w", p.err)
		}
		recs := p.recs
		if err := decodePage(recs, decoded[:len(recs)]); err != nil {
			return err
		}
		for i := range recs {
			d := &decoded[i]
			if d.e == nil {
				continue // not a task stream
			}
			fold(&recs[i], d.id, d.e)
			d.e = nil
		}
	}
	return nil
}

// parallelism is how many goroutines recovery splits CPU work over.
func parallelism() int { return runtime.GOMAXPROCS(0) }

// recovered is one event of the log as recovery decoded it: nil e for an
// event outside the task streams.
type recovered struct {
	id uuid.UUID
	e  events.Event
}

// decodePage decodes recs into out, split over the machine's processors.
func decodePage(recs []events.Recorded, out []recovered) error {
	return inParallel(len(recs), 256, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			r := &recs[i]
			id, err := events.TaskIDFromStream(r.Stream)
			if err != nil {
				out[i] = recovered{}
				continue
			}
			e, err := events.Decode(*r)
			if err != nil {
				return fmt.Errorf("scheduler: recover %s version %d: %w", r.Stream, r.Version, err)
			}
			out[i] = recovered{id: id, e: e}
		}
		return nil
	})
}

// inParallel splits [0, n) into one part per processor, of at least per
// items each, calls work with each part on a goroutine of its own, and
// returns their errors joined.
func inParallel(n, per int, work func(lo, hi int) error) error {
	parts := min(parallelism(), 1+n/per)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Go(func() { errs[p] = work(lo, hi) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// spawnTask starts the actor of a task in a new entry, from st (nil: it
// loads the task from the store); s.mu must be held.
func (s *Scheduler) spawnTask(id uuid.UUID, st *task.Initial) *entry {
	return s.spawnActor(id, task.New(s.taskConfig(id), id, st))
}

// taskConfig is the configuration of task id's actor.
func (s *Scheduler) taskConfig(id uuid.UUID) task.Config {
	cfg := task.Config{Store: s.cfg.Store, Archetype: s.arch, Queue: s.queue, Enqueue: s.enqueue, Shard: s.shardOf(id),
		Registry: (*registry)(s), StoreTimeout: s.cfg.StoreTimeout, Host: s.host, Rest: true, Load: s.load,
		HistoryRetention: s.cfg.HistoryRetention}
	if s.snap != nil && s.cfg.RecordEvery > 0 {
		cfg.RecordEvery = s.cfg.RecordEvery
	}
	return cfg
}

// spawnActor starts a task's actor from produce in a new entry; s.mu must
// be held.
func (s *Scheduler) spawnActor(id uuid.UUID, produce actor.Producer) *entry {
	s.actors.Add(1)
	if s.dispatch == nil {
		s.dispatch = task.NewDispatcher(0)
	}
	e := &entry{pid: counted.SpawnPrefix(s.cfg.Clock, s.sys.Root, actor.PropsFromProducer(produce,
		actor.WithDispatcher(s.dispatch), actor.WithMailbox(task.NewMailbox)), s.prefix)}
	s.tasks[id] = slot{e: e}
	if s.snap != nil {
		s.snap.live[id] = struct{}{}
	}
	return e
}

// wake starts the actor of a resting task from its record rec; s.mu must
// be held. A record that does not read (it cannot happen: this process
// wrote it) is logged, and the actor loads the task from the store.
func (s *Scheduler) wake(id uuid.UUID, rec string) *entry {
	return s.spawnActor(id, task.NewFrom(s.taskConfig(id), id, func(st *rules.State, pos *events.Position) error {
		err := readRecordInto(rec, st, pos)
		if err != nil {
			s.cfg.Logger.Error("resting task's record unreadable, loading the task", "task_id", id, "err", err)
		}
		return err
	}))
}

// lockActor returns task id's entry with its actor, e.mu held: the actor
// in memory, or one started from the task's record if it rests. A task
// with neither is loaded first, on this goroutine (lookup), and its actor
// started from what was read: one the store does not know is
// ErrTaskNotFound and gets no actor, unless create (the call creates it:
// its actor starts empty). It waits while the actor leaves, no longer than
// ctx lasts.
func (s *Scheduler) lockActor(ctx context.Context, id uuid.UUID, create bool) (*entry, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.mu.Lock()
		if !s.started || s.stopped {
			s.mu.Unlock()
			return nil, ErrNotStarted
		}
		sl := s.tasks[id]
		e := sl.e
		switch {
		case e != nil:
		case sl.rec != "":
			e = s.wake(id, sl.rec)
		default:
			vacated := s.vacated
			s.mu.Unlock()
			st, err := s.lookup(ctx, id)
			if create && errors.Is(err, ErrTaskNotFound) {
				st, err = &task.Initial{}, nil
			}
			if err != nil {
				return nil, err
			}
			s.mu.Lock()
			if !s.started || s.stopped {
				s.mu.Unlock()
				return nil, ErrNotStarted
			}
			if sl := s.tasks[id]; sl.e != nil || sl.rec != "" || s.vacated != vacated {
				s.mu.Unlock()
				continue // the task came into memory, or left it, meanwhile: look again
			}
			e = s.spawnTask(id, st)
		}
		s.mu.Unlock()
		e.mu.Lock()
		if e.gone() {
			e.mu.Unlock()
			continue // stopped meanwhile: look again
		}
		if e.leaving {
			if e.left == nil {
				e.left = make(chan struct{})
			}
			left := e.left
			e.mu.Unlock()
			select {
			case <-left:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return e, nil
	}
}

// room is the shards' dueindex.Shard.Room: whether a tick may wake one more
// task actor for queue (Config.MaxActiveTasks, per queue). A yes reserves
// a place, which the delivery that follows gives back once the actor
// counts (the shards ask on goroutines of their own). When it says no, the
// first of the queue's actors to leave once its count is down to resumeAt
// tells the shards to go on.
func (s *Scheduler) room(queue string) bool {
	g := s.gateOf(queue)
	for {
		w := g.waking.Load()
		if g.actors.Load()+w >= int64(s.cfg.MaxActiveTasks) {
			g.starved.Store(true)
			// A place given back between the count's read and the flag
			// would not have seen it: look again.
			if g.actors.Load()+g.waking.Load() >= int64(s.cfg.MaxActiveTasks) {
				return false
			}
			continue
		}
		if g.waking.CompareAndSwap(w, w+1) {
			return true
		}
	}
}

// gateOf is queue's gate, made on first use.
func (s *Scheduler) gateOf(queue string) *gate {
	if g, ok := s.gates.Load(queue); ok {
		return g.(*gate)
	}
	g, _ := s.gates.LoadOrStore(queue, &gate{})
	return g.(*gate)
}

// count makes e's actor take a place in g, unless it takes one already or
// is pinned: pinned actors stay until their task is deleted, and were they
// counted, an embedder pinning as many tasks as the bound would stop every
// tick's deliveries for good. e.mu must be held.
func (e *entry) count(g *gate) {
	if e.gate == nil && !e.pinned {
		e.gate = g
		g.actors.Add(1)
	}
}

// uncount gives back the place e's actor takes, if any, and tells the
// shards to go on if that makes room; e.mu must be held.
func (s *Scheduler) uncount(e *entry) {
	if g := e.gate; g != nil {
		e.gate = nil
		g.actors.Add(-1)
		s.maybeResume(g)
	}
}

// maybeResume tells the shards to go on when they held g's queue back for
// room and its actors are down to resumeAt.
func (s *Scheduler) maybeResume(g *gate) {
	if g.actors.Load() <= s.resumeAt() && g.starved.CompareAndSwap(true, false) {
		for _, sh := range s.shards {
			counted.Send(s.cfg.Clock, s.sys.Root, sh, dueindex.Resume{})
		}
	}
}

// resumeAt is the actor count at which shards held back for room go on:
// seven eighths of the bound, so that they deliver in batches.
func (s *Scheduler) resumeAt() int64 { return int64(s.cfg.MaxActiveTasks) * 7 / 8 }

// deliver hands a due task its tick (dueindex.Shard.Deliver): to its
// actor, woken from its record if it rests, after its leaving if it is
// leaving — without waiting for it, on the shard's goroutine (see
// deliverTick). Once the scheduler stopped, ticks go nowhere.
func (s *Scheduler) deliver(id uuid.UUID, queue string, t dueindex.Tick) {
	g := s.gateOf(queue)
	defer func() {
		// The place room reserved: the actor counts now, or it did not
		// take it (pinned, counted already, or the scheduler stopped),
		// and the place is free again.
		g.waking.Add(-1)
		s.maybeResume(g)
	}()
	s.deliverTick(id, g, t)
}

// registry is the Scheduler as the task actors' task.Registry.
type registry Scheduler

var _ task.Pinner = (*registry)(nil)

// Leave implements task.Registry.
func (r *registry) Leave(id uuid.UUID, self *actor.PID, send func()) {
	s := (*Scheduler)(r)
	s.mu.Lock()
	e := s.tasks[id].e
	s.mu.Unlock()
	if e == nil {
		send()
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !samePID(e.pid, self) {
		send()
		return
	}
	if !e.gone() {
		e.leaving = true
	}
	send()
}

// Left implements task.Registry: an actor that stopped leaves the record
// of its resting task in its slot, or takes the slot with it. One stopped
// with an open run (by Stop) leaves no record in the slot — a resting
// task's record is all its next actor starts from — but hands it to the
// last snapshot all the same.
func (r *registry) Left(id uuid.UUID, self *actor.PID, stopped bool, rest *rules.State, pos events.Position) {
	s := (*Scheduler)(r)
	var rec string
	keep := false // the record can stand for the task in its slot
	if stopped && rest != nil {
		rec = recordOf(rest, pos) // before taking the locks
		keep = !rules.Idle(rest) && rules.Rests(rest)
	}
	s.mu.Lock()
	e := s.tasks[id].e
	if e == nil {
		s.mu.Unlock()
		return
	}
	e.mu.Lock()
	if !samePID(e.pid, self) {
		e.mu.Unlock()
		s.mu.Unlock()
		return
	}
	if stopped {
		s.uncount(e)
		s.actors.Add(-1)
		if keep && !s.stopped {
			s.tasks[id] = slot{rec: rec}
		} else {
			delete(s.tasks, id)
			s.vacated++
		}
		if rec != "" {
			s.forgetRetry(id)
		}
		if s.snap != nil {
			delete(s.snap.live, id)
			if rec != "" { // while stopping too: the last sweep is still to come
				s.snap.rested(id, rec)
			}
		}
		e.pid = nil // gone
	}
	s.mu.Unlock()
	e.endLeaving()
	ticks := e.ticks
	e.ticks = nil
	e.mu.Unlock()
	if len(ticks) > 0 {
		s.sendPending(id, ticks) // to the actor that stayed, or the task's next one
	}
}

// samePID reports whether a and b are the same actor; nil is none.
func samePID(a, b *actor.PID) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b)
}

// indexOwner adds a task to its owner's; s.ownersMu must be held.
func (s *Scheduler) indexOwner(owner string, id uuid.UUID) {
	m := s.owners[owner]
	if m == nil {
		m = map[uuid.UUID]struct{}{}
		s.owners[owner] = m
	}
	m[id] = struct{}{}
}

func (s *Scheduler) shardOf(id uuid.UUID) *actor.PID { return s.shards[s.shardIndex(id)] }

// shardIndex is the shard that keeps task id in its due-time index.
func (s *Scheduler) shardIndex(id uuid.UUID) int {
	return int(binary.BigEndian.Uint32(id[:4]) % uint32(s.cfg.Shards))
}

// StopStarting is the first step of a graceful stop, for a caller that
// has more to stop (an HTTP server, say) before Stop: ticking stops, no run
// is admitted any more, and it returns once the start of every run
// admitted before has been decided (or ctx ends) — from then on no run
// starts. Tasks still answer calls; running runs go on. Stop calls it.
func (s *Scheduler) StopStarting(ctx context.Context) error {
	s.mu.Lock()
	if !s.started {
		s.mu.Unlock()
		return ErrNotStarted
	}
	first := !s.gateClosed
	s.gateClosed = true
	s.mu.Unlock()
	var tickErr error
	if first {
		if _, err := counted.Request(context.Background(), s.cfg.Clock, s.sys.Root, s.ticker, dueindex.StopTicking{}, s.cfg.RequestTimeout); err != nil {
			tickErr = fmt.Errorf("scheduler: stop ticking: %w", err)
		}
		s.stats.Close() // no run is admitted from now on
	}
	return errors.Join(tickErr, s.stats.WaitStarts(ctx))
}

// Stop shuts the scheduler down gracefully: ticking stops and no further
// run starts, then running runs may finish or reach their deadline until
// ctx ends; runs still going then are abandoned (their outcome is left for
// the next start to record as a forced end). Then the task actors stop,
// each handing over its state, and the last snapshot is cut with none of
// them left: the next start reads the tasks from it and nothing of the
// log (see stopTasks). A stopped Scheduler cannot start again; build a new
// one on the same store. It returns errors.Join of what failed (stopping
// the ticker, task actors that did not stop; hosted in an actor system of
// the caller's, its actors that did not stop within ctx); ctx ending the
// drain is not a failure.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	if !s.started || s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	s.mu.Unlock()
	// What failed is returned, joined; ctx ending the drain is not a
	// failure (the runs left are abandoned, as documented).
	var errs []error
	if err := s.StopStarting(ctx); err != nil && ctx.Err() == nil {
		errs = append(errs, err)
	}
	s.logDrain(ctx)
	if stopHook != nil {
		stopHook()
	}
	if err := s.stats.Wait(ctx); err != nil {
		s.logCutOff()
		s.abandon()
		_ = s.stats.Wait(context.Background()) // handlers end with their context
	}
	s.abandon()
	errs = append(errs, s.stopTasks(ctx))
	if s.snap != nil {
		s.stopSweeper(ctx)
	}
	s.mu.Lock()
	pids := append([]*actor.PID(nil), s.infra...)
	s.mu.Unlock()
	if !s.hosted {
		for _, pid := range pids {
			s.sys.Root.Stop(pid)
		}
		s.sys.Shutdown() // stops no actor (they are stopped above), only the system's own machinery
		s.cfg.Logger.Info("scheduler stopped")
		return errors.Join(errs...)
	}
	// The host's system lives on: stop exactly our actors (workers stop with
	// the queue, their parent) and return once they are gone, then stop
	// watching its dead letters.
	errs = append(errs, s.awaitStopped(ctx, pids))
	s.sys.EventStream.Unsubscribe(s.deadLetters)
	s.cfg.Logger.Info("scheduler stopped")
	return errors.Join(errs...)
}

// awaitStopped stops the actors at pids and waits for them within ctx.
// Every actor is told to stop before any is waited for, so their futures'
// timeouts (10 s) run at once: an actor busy in a message (a hung store
// call, say) costs one timeout in all, not one per actor after it. It
// returns errors.Join of what did not stop: each future's timeout and,
// when ctx ends first, how many actors were still stopping (they stop on
// their own once they get to it).
func (s *Scheduler) awaitStopped(ctx context.Context, pids []*actor.PID) error {
	futures := make([]*actor.Future, len(pids))
	for i, pid := range pids {
		futures[i] = s.sys.Root.StopFuture(pid)
	}
	var waited atomic.Int64
	done := make(chan error, 1)
	go func() {
		var errs []error
		for i, f := range futures {
			if err := f.Wait(); err != nil {
				errs = append(errs, fmt.Errorf("scheduler: stop actor %s: %w", pids[i].Id, err))
			}
			waited.Add(1)
		}
		done <- errors.Join(errs...)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		select {
		case err := <-done:
			return err
		default:
		}
		return fmt.Errorf("scheduler: stop: %d of %d actors still stopping: %w", int64(len(pids))-waited.Load(), len(pids), ctx.Err())
	}
}

// logDrain says what Stop waits for, when runs are running: how many, and
// until when (ctx's deadline; none: until they end).
func (s *Scheduler) logDrain(ctx context.Context) {
	running := s.stats.Executing()
	if len(running) == 0 {
		return
	}
	attrs := []any{"runs", len(running), "last_deadline", running[len(running)-1].Deadline.UTC()}
	if until, ok := ctx.Deadline(); ok {
		attrs = append(attrs, "until", until.UTC())
	}
	s.cfg.Logger.Info("draining: waiting for running runs to end", attrs...)
}

// logCutOff logs each run still running when Stop gave up waiting: it is
// abandoned, recorded lost (process_lost) at its deadline — by the next
// start, or on it if that comes later — and until then its task starts no
// other run (overlap).
func (s *Scheduler) logCutOff() {
	for _, r := range s.stats.Executing() {
		s.cfg.Logger.Warn("drain timeout: run cut off, recorded lost at its deadline; its task starts no run before",
			"task_id", r.TaskID, "run_id", r.RunID, "run", r.Run, "deadline", r.Deadline.UTC())
	}
}

// stopTasks stops every task actor and returns once they are gone. Each
// hands its state to Left as it stops (task.Actor.handOver) — a task with
// runs waiting or cut off by the stop included — so the last sweep, which
// comes after, finds in the set of tasks with an actor only those whose
// actor could not vouch for its state; every other task's record holds its
// stream up to the head, as a resting task's does (snapshot.go), and the
// next start reads none of it. Ticks and calls reach no actor any more
// (lockActor refuses once stopped), so none starts meanwhile. It waits for
// them whatever ctx says (the sweep needs their hand-over), each for at
// most its future's timeout, all at once (awaitStopped).
func (s *Scheduler) stopTasks(ctx context.Context) error {
	s.mu.Lock()
	s.stopRetries()
	entries := make([]*entry, 0, len(s.tasks))
	for _, sl := range s.tasks {
		if sl.e != nil {
			entries = append(entries, sl.e)
		}
	}
	s.mu.Unlock()
	pids := make([]*actor.PID, 0, len(entries))
	for _, e := range entries {
		e.mu.Lock()
		if e.pid != nil {
			pids = append(pids, e.pid)
		}
		e.endLeaving() // its callers learn that the scheduler stopped
		for range e.ticks {
			s.cfg.Clock.End() // kept ticks go nowhere now
		}
		e.ticks = nil
		e.mu.Unlock()
	}
	return s.awaitStopped(context.WithoutCancel(ctx), pids)
}

// stopHook, if set, is called by Stop once no run may start any more
// (tests use it to act during the drain).
var stopHook func()

// Stats returns live figures.
func (s *Scheduler) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Tasks: len(s.tasks), Actors: int(s.actors.Load())}
	if s.stats != nil {
		st.Queued, st.Busy = s.stats.Queued.Load(), s.stats.Busy.Load()
		st.Queues = s.stats.Queues()
		for _, q := range st.Queues {
			st.Workers += q.Limit
		}
	}
	return st
}

// CreateTask creates a task, or returns the existing one with that owner and
// name (created false) — whatever its spec (R6). Creating a task that was
// deleted creates it again on the same stream as a new incarnation that
// starts clean (no lastRun, no checkpoint); run numbers go on, and runs of
// the old incarnation never start under the new one (see package
// events/taskstate).
func (s *Scheduler) CreateTask(ctx context.Context, spec TaskSpec) (Task, bool, error) {
	spec, err := spec.flatSchedule()
	if err != nil {
		return Task{}, false, err
	}
	if _, ok := s.handlers[spec.Kind]; !ok && spec.Kind != "" {
		return Task{}, false, &FieldError{Field: "kind", Message: fmt.Sprintf("no handler registered for kind %q; the kinds registered are %s",
			spec.Kind, strings.Join(s.Kinds(), ", "))}
	}
	now := s.cfg.Clock.Now()
	first := spec.FirstRun
	if first.IsZero() && len(spec.Cron) == 0 && len(spec.At) == 0 {
		first = now.Add(spec.Interval)
	}
	id := TaskID(spec.Owner, spec.Name)
	cmd := rules.Create{TaskID: id, FirstRun: first, Spec: spec.rulesSpec()}
	// Validate before spawning anything for a bad spec: the schedule
	// compiles, has a slot after now, and the defaults fit it.
	if _, err := rules.Prepare(cmd.Spec, now); err != nil {
		return Task{}, false, err
	}
	if err := s.checkPayload(spec.Kind, spec.Payload); err != nil {
		return Task{}, false, err
	}
	reply, err := s.ask(ctx, id, cmd)
	if errors.Is(err, rules.ErrAlreadyExists) {
		return taskFrom(reply.State, reply.Position), false, nil
	}
	if err != nil {
		return Task{}, false, err
	}
	s.ownersMu.Lock()
	s.indexOwner(spec.Owner, id)
	s.ownersMu.Unlock()
	return taskFrom(reply.State, reply.Position), true, nil
}

// send sends msg to the actor of task id — starting one if the task has
// none in memory — and waits for the reply, no longer than ctx lasts or
// RequestTimeout. An actor that is leaving is waited for.
func (s *Scheduler) send(ctx context.Context, id uuid.UUID, msg any) (task.Reply, error) {
	reply, _, err := s.sendTo(ctx, id, msg)
	return reply, err
}

// sendTo is send that also returns the PID of the actor that answered.
func (s *Scheduler) sendTo(ctx context.Context, id uuid.UUID, msg any) (task.Reply, *actor.PID, error) {
	create := false
	if c, ok := msg.(task.Command); ok {
		_, create = c.Cmd.(rules.Create)
	}
	e, err := s.lockActor(ctx, id, create)
	if err != nil {
		return task.Reply{}, nil, err
	}
	pid := e.pid
	f := counted.RequestFuture(s.cfg.Clock, s.sys.Root, pid, msg, s.cfg.RequestTimeout)
	e.mu.Unlock()
	res, err := counted.Await(ctx, f)
	if err != nil {
		return task.Reply{}, nil, fmt.Errorf("scheduler: ask task %s: %w", id, err)
	}
	reply, ok := res.(task.Reply)
	if !ok {
		return task.Reply{}, nil, fmt.Errorf("scheduler: task %s answered %T", id, res)
	}
	return reply, pid, nil
}

// ask has the actor of task id decide cmd, within ctx.
func (s *Scheduler) ask(ctx context.Context, id uuid.UUID, cmd rules.Command) (task.Reply, error) {
	reply, err := s.send(ctx, id, task.Command{Ctx: ctx, Cmd: cmd})
	if err != nil {
		return reply, err
	}
	if errors.Is(reply.Err, rules.ErrNotCreated) {
		return reply, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	return reply, reply.Err
}

// workerAsk carries a worker's command to a task actor: the one that
// enqueued the run, which stays while the run is open. An actor that is
// gone (a dead letter) left because no run of its task was open any more,
// so the run asked about already has its outcome: that is the answer, as
// the actor would have given it, unless the scheduler is stopping.
func (s *Scheduler) workerAsk(ctx context.Context, from actor.SenderContext, pid *actor.PID, cmd rules.Command) (worker.Decision, error) {
	r, err := task.Ask(ctx, s.cfg.Clock, from, pid, cmd, s.cfg.RequestTimeout)
	d := worker.Decision{Events: r.Events}
	if start, ok := cmd.(rules.RequestStart); ok && err == nil && len(r.Events) > 0 {
		d = worker.StartDecision(r.Events, &r.State, start.RunID)
	}
	return d, s.deadLetter(err)
}

// deadLetter is err, or the answer to a command that reached no actor
// because the task's actor had left (see workerAsk).
func (s *Scheduler) deadLetter(err error) error {
	if errors.Is(err, actor.ErrDeadLetter) && !s.stopping() {
		return fmt.Errorf("%w (its task's actor has left: %v)", rules.ErrUnknownRun, err)
	}
	return err
}

// workerPost is the workers' worker.PostFunc: task.Post, with a gone
// actor's dead letter answered as workerAsk answers it. Workers post only
// runs' outcomes, and read only the events of the decision (Worker.report),
// so the decision carries only those: a copy of the task's state for every
// outcome was a tenth of the bytes a wave allocated.
func (s *Scheduler) workerPost(from actor.SenderContext, pid *actor.PID, cmd rules.Command) func() (worker.Decision, error) {
	p := task.PostCommand(context.Background(), s.cfg.Clock, from, pid, cmd, s.cfg.RequestTimeout)
	return func() (worker.Decision, error) {
		r, err := p.Wait()
		return worker.Decision{Events: r.Events}, s.deadLetter(err)
	}
}

// stopping reports whether Stop has begun.
func (s *Scheduler) stopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// workerTell carries a run's heartbeat to its task actor without waiting:
// the answer goes to a future nobody reads. (A plain send would have the
// actor answer to nobody, a dead letter the clock's counting would take
// for an undelivered message.)
func (s *Scheduler) workerTell(from actor.SenderContext, pid *actor.PID, cmd rules.Command) {
	counted.RequestFuture(s.cfg.Clock, from, pid, task.Command{Cmd: cmd}, s.cfg.RequestTimeout)
}

func (s *Scheduler) command(ctx context.Context, id uuid.UUID, cmd rules.Command) (Task, error) {
	reply, err := s.ask(ctx, id, cmd)
	if err != nil {
		return taskFrom(reply.State, reply.Position), err
	}
	return taskFrom(reply.State, reply.Position), nil
}

// Task returns a task's current state.
func (s *Scheduler) Task(ctx context.Context, id uuid.UUID) (Task, error) {
	reply, err := s.send(ctx, id, task.Get{})
	if err != nil {
		return Task{}, err
	}
	if reply.Err != nil {
		return Task{}, reply.Err
	}
	if !reply.State.Exists() {
		return Task{}, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	return taskFrom(reply.State, reply.Position), nil
}

// Tasks returns every task not deleted, ordered by owner then name.
// Deleted tasks are in the log and the cron_tasks view.
func (s *Scheduler) Tasks(ctx context.Context) ([]Task, error) {
	s.ownersMu.Lock()
	var ids []uuid.UUID
	for _, m := range s.owners {
		for id := range m {
			ids = append(ids, id)
		}
	}
	s.ownersMu.Unlock()
	out := make([]Task, 0, len(ids))
	for _, id := range ids {
		t, err := s.Task(ctx, id)
		if errors.Is(err, ErrTaskNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if t.Status == rules.StatusDeleted.String() {
			continue
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Owner != out[j].Owner {
			return out[i].Owner < out[j].Owner
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// UpdateTask changes the fields u sets; the task's actor decides it against
// its current state. An update that changes nothing records nothing.
func (s *Scheduler) UpdateTask(ctx context.Context, id uuid.UUID, u TaskUpdate, opts ...WriteOption) (Task, error) {
	c, err := u.command()
	if err != nil {
		return Task{}, err
	}
	c.IfVersion = writeOpts(opts).ifVersion
	if c.PayloadKind, err = s.checkUpdatePayload(ctx, id, u); err != nil {
		return Task{}, err
	}
	return s.command(ctx, id, c)
}

// MaxUpcoming is the most slots Upcoming returns.
const MaxUpcoming = 1000

// Upcoming is a task's next n slots (at most MaxUpcoming) strictly after
// now, in the task's zone (UTC for an interval task): where its schedule
// and window put them, capped by the runs max_runs leaves and without
// jitter. The slot the task is due at but has not enqueued yet comes first.
// A finished or deleted task has none.
func (s *Scheduler) Upcoming(ctx context.Context, id uuid.UUID, n int) ([]time.Time, error) {
	if n < 1 || n > MaxUpcoming {
		return nil, &FieldError{Field: "count", Message: fmt.Sprintf("must be between 1 and %d, got %d", MaxUpcoming, n)}
	}
	reply, err := s.send(ctx, id, task.Get{})
	if err != nil {
		return nil, err
	}
	if reply.Err != nil {
		return nil, reply.Err
	}
	if !reply.State.Exists() {
		return nil, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	return rules.Upcoming(reply.State, s.cfg.Clock.Now(), n)
}

// Trigger enqueues one run of task id now, outside its schedule (R15), and
// returns the run's ID. The run moves neither the task's nextRun nor its
// lastRun nor its count of scheduled runs (max_runs), is not held to R3's
// spacing, and is dropped as overlap if another run of the task is running
// when a worker takes it (R12). A task that is paused, finished, deleted
// or at its bound of waiting runs (R18) refuses it with an error matching
// ErrCannotTrigger whose text says which; an unknown task with
// ErrTaskNotFound.
func (s *Scheduler) Trigger(ctx context.Context, id uuid.UUID) (uuid.UUID, error) {
	reply, err := s.ask(ctx, id, rules.Trigger{})
	if err != nil {
		return uuid.Nil, err
	}
	for _, e := range reply.Events {
		if en, ok := e.(events.RunEnqueued); ok {
			return en.RunID, nil
		}
	}
	return uuid.Nil, fmt.Errorf("scheduler: trigger of task %s recorded no run", id)
}

// PauseTask stops a task from enqueueing runs; its waiting runs are dropped
// when a worker asks for them (R7).
func (s *Scheduler) PauseTask(ctx context.Context, id uuid.UUID, opts ...WriteOption) (Task, error) {
	return s.command(ctx, id, rules.Pause{IfVersion: writeOpts(opts).ifVersion})
}

// ResumeTask lets a paused task run again.
func (s *Scheduler) ResumeTask(ctx context.Context, id uuid.UUID, opts ...WriteOption) (Task, error) {
	return s.command(ctx, id, rules.Resume{IfVersion: writeOpts(opts).ifVersion})
}

// DeleteTask deletes a task (R7). Its actor stops once the task has no open
// run; the task stays in the log and the view.
func (s *Scheduler) DeleteTask(ctx context.Context, id uuid.UUID, opts ...WriteOption) (Task, error) {
	t, err := s.command(ctx, id, rules.Delete{Reason: "deleted", IfVersion: writeOpts(opts).ifVersion})
	if err == nil {
		s.ownersMu.Lock()
		delete(s.owners[t.Owner], id)
		s.ownersMu.Unlock()
	}
	return t, err
}

// OwnerDeletion is what DeleteOwner did.
type OwnerDeletion struct {
	// Deleted counts the tasks deleted.
	Deleted int
	// Position is the global log position of the last deletion recorded (zero
	// when none was): a view that has folded up to it shows them all.
	Position events.Position
}

// DeleteOwner deletes every task of an owner (R6).
func (s *Scheduler) DeleteOwner(ctx context.Context, owner string) (OwnerDeletion, error) {
	s.ownersMu.Lock()
	var ids []uuid.UUID
	for id := range s.owners[owner] {
		ids = append(ids, id)
	}
	s.ownersMu.Unlock()
	// The bytes in order sort as the IDs' text does (fixed-width lowercase
	// hex), without formatting two strings per comparison.
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	var d OwnerDeletion
	for _, id := range ids {
		t, err := s.command(ctx, id, rules.Delete{Reason: "owner " + owner + " deleted"})
		if err != nil {
			return d, err
		}
		s.ownersMu.Lock()
		delete(s.owners[owner], id)
		s.ownersMu.Unlock()
		d.Deleted++
		if d.Position.Less(t.Position) {
			d.Position = t.Position
		}
	}
	return d, nil
}
