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
// state: UpdateTask sends only the fields a TaskUpdate sets (each a
// pointer, nil unset; an unset Tolerance keeps the current one unless the
// schedule changes), and every write may carry IfVersion to apply only at
// the version the caller read. A task is listed by owner then name
// (TasksPage) from the scheduler's memory, and the owners' index follows
// the tasks' own recorded creations and deletions.
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
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/eventstream"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/task/taskrt"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"
)

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
	// read or written. Only one running scheduler of a process may use a
	// store's snapshots: Start of a second is refused (ErrSnapshotsInUse).
	SnapshotEvery int
	// Follow says whether the scheduler follows the store's global log to
	// take in the tasks other writers create, change or delete (an
	// embedder's transaction on PostgreSQL, package pgtx). Default
	// FollowAuto: on a store that says others append to it
	// (events.SharedLog), not on the embedded store.
	Follow Follow
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
	// TracerProvider, if set, gets one span per run a worker takes, from
	// queued to the recorded outcome, also for a run dropped before any
	// handler is called (see worker.PoolConfig); and, unless Middleware
	// already holds a worker.Tracing, worker.Tracing(TracerProvider) is put
	// first in Middleware, so each handler call is a span under its run's
	// (worker.WithTracing). Nil: no run spans and nothing added. Spans
	// never change a decision.
	TracerProvider trace.TracerProvider
	// Middleware wraps every registered handler, the first outermost
	// (worker.Chain): logging, metrics, tenancy, worker.Tracing (the
	// handler's span) around every run. Nil: the handlers as registered.
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
	// RecoveryGC, if set, is called as Start begins to rebuild the tasks
	// from the store, and the function it returns (nil: nothing) once
	// Start is done. The scheduler sets no process-wide state of its own:
	// a process that restarts many tasks may raise the garbage
	// collector's target here while recovery builds a heap that only
	// grows (the daemon does: GOGC 400 during Start, docs/performance.md,
	// "Recovery and the GC target"). Nil: Start leaves the process's
	// settings alone.
	RecoveryGC func() (restore func())
}

// Validate reports the first field out of its limits, as a *ConfigError
// (errors.Is ErrInvalidConfig; never ErrInvalidSpec, which is about tasks).
func (c Config) Validate() error {
	switch {
	case c.Store == nil:
		return &ConfigError{Field: "Store", Message: "is required"}
	case c.Tick != 0 && c.Tick < time.Millisecond:
		return &ConfigError{Field: "Tick", Message: fmt.Sprintf("must be at least 1ms, got %s", c.Tick)}
	case c.Workers < 0 || c.Workers > 100000:
		return &ConfigError{Field: "Workers", Message: fmt.Sprintf("must be between 1 and 100000, got %d", c.Workers)}
	case validateQueues(c.Queues) != nil:
		return &ConfigError{Field: "Queues", Message: validateQueues(c.Queues).Error()}
	case c.Shards < 0 || c.Shards > 1024:
		return &ConfigError{Field: "Shards", Message: fmt.Sprintf("must be between 1 and 1024, got %d", c.Shards)}
	case c.MaxActiveTasks < 0:
		return &ConfigError{Field: "MaxActiveTasks", Message: fmt.Sprintf("must be at least 1, got %d", c.MaxActiveTasks)}
	case c.RequestTimeout < 0:
		return &ConfigError{Field: "RequestTimeout", Message: "must not be negative"}
	case c.StoreTimeout < 0:
		return &ConfigError{Field: "StoreTimeout", Message: "must not be negative"}
	case c.Loaders < 0 || c.Loaders > 10000:
		return &ConfigError{Field: "Loaders", Message: fmt.Sprintf("must be between 1 and 10000, got %d", c.Loaders)}
	case c.HistoryRetention < 0:
		return &ConfigError{Field: "HistoryRetention", Message: fmt.Sprintf("must not be negative, got %s", c.HistoryRetention)}
	case c.LoadRetry < 0:
		return &ConfigError{Field: "LoadRetry", Message: "must not be negative"}
	case c.LoadRetryMax < 0 || (c.LoadRetryMax != 0 && c.LoadRetryMax < max(c.LoadRetry, time.Millisecond)):
		return &ConfigError{Field: "LoadRetryMax", Message: fmt.Sprintf("must be at least LoadRetry (%s), got %s", c.LoadRetry, c.LoadRetryMax)}
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
	// ownersMu guards owners: the tasks not deleted, by owner (R6), each
	// with its name; the task actors keep it (registry.Listed).
	ownersMu sync.Mutex
	owners   map[string]map[uuid.UUID]string
	stats    *worker.Stats
	// actors counts the task actors (Stats.Actors); gates holds each
	// queue's *gate, by name, made as ticks first name the queue (see
	// room).
	actors  atomic.Int64
	gates   sync.Map
	base    context.Context
	abandon context.CancelFunc
	// rt is the task actors' runtime (task.NewRuntime): their mailboxes on
	// a task.Dispatcher, their objects reused. Made by the first spawn.
	rt *taskrt.Runtime
	// infra lists the actors that are not task actors: shards, queue, ticker.
	infra []*actor.PID
	// prefix starts the name of every actor of this scheduler; hosted is
	// set when sys is the host's (Config.ActorSystem).
	prefix string
	hosted bool
	// deadLetters is the clock's dead-letter watcher on sys (see
	// counted.WatchPrefix).
	deadLetters *eventstream.Subscription
	// releaseAnswers releases the task package's dead-letter watcher of
	// sys (task.WatchDeadLetters), held from Start to Stop.
	releaseAnswers func()
	// host is hostRequest, made once for every task actor's config.
	host func(any) (task.HostRequest, bool)
	// snap is what keeps the tasks' snapshots (snapshot.go), nil without;
	// claimed is its store while s is its user (claimSnapshots).
	snap    *snapshots
	claimed events.SnapshotStore
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
	// stopHook, if set, is called by Stop once no run may start any more
	// (tests set it, through export_test.go, to act during the drain).
	stopHook func()
	// follow is the follower of the log (follow.go), nil when not following.
	follow *follower
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
