package worker

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"
)

// ErrNoHandler: a run's kind has no registered handler.
var ErrNoHandler = errors.New("worker: no handler registered for kind")

// ErrRecordLater: the task actor could not record a run's start or
// outcome now (its store refused or lost the append) and sees to it
// itself once the store answers again: an outcome is kept and recorded
// then, a run whose start was not recorded is put back on the queue. The
// worker drops the run (a start) or has nothing more to do (an outcome);
// the task actor logs it, once a run.
var ErrRecordLater = errors.New("worker: the task records it once its store answers")

// Enqueued is what a task actor puts on the queue for each run it enqueued
// (or found waiting on recovery).
type Enqueued struct {
	TaskID uuid.UUID
	// Task is the task actor that decides whether the run may start.
	Task       *actor.PID
	RunID      uuid.UUID
	Run        int
	Priority   int
	Due        time.Time
	EnqueuedAt time.Time
	// Queue is the named queue the run waits in (events.DefaultQueue when
	// empty); each queue has its own limit of runs executing at once.
	Queue string
	// Attempt, RetryOf and Trigger are the run's (see Run).
	Attempt int
	RetryOf uuid.UUID
	Trigger string
}

// QueuedRun is a run waiting in the queue.
type QueuedRun = Enqueued

// Decision is a task actor's answer to a command: the events it recorded
// (none when nothing changed) and, for a RequestStart, what a worker reads
// of the task after them (see StartDecision).
type Decision struct {
	Events []events.Event
	// Run is, for a RequestStart, the run as its handler gets it — the
	// task's name, owner, kind, payload and checkpoint, the run's number,
	// deadline, attempt — after the decision; nil for other commands and
	// when the task did not answer. A worker reads this much of the task,
	// not a copy of its whole state (~620 bytes a run; docs/performance.md).
	Run *Run
	// HeartbeatTimeout is the task's heartbeat_timeout (R16), with Run.
	HeartbeatTimeout time.Duration
}

// StartDecision is the Decision of a task that answered a RequestStart
// for run id with evs, st being its state after them.
func StartDecision(evs []events.Event, st *rules.State, id uuid.UUID) Decision {
	r, _ := st.Run(id)
	return Decision{Events: evs, HeartbeatTimeout: st.Spec.Policy.HeartbeatTimeout.D(),
		Run: &Run{TaskID: st.ID, TaskName: st.Spec.Name, Owner: st.Spec.Owner, Kind: st.Spec.Kind,
			RunID: r.ID, Number: r.Number, Payload: st.Spec.Payload, Checkpoint: st.Checkpoint, Deadline: r.Deadline,
			Attempt: max(r.Attempt, 1), RetryOf: r.RetryOf, Trigger: r.Trigger}}
}

// AskFunc sends cmd to the task actor at task, from from, and waits for its
// decision, no longer than ctx lasts. A rejection is returned as the error.
// The decision a RequestStart gets when nothing was rejected carries Run
// (StartDecision builds it from the task's state).
type AskFunc func(ctx context.Context, from actor.SenderContext, task *actor.PID, cmd rules.Command) (Decision, error)

// PostFunc sends cmd to the task actor at task, from from, as AskFunc
// does, but returns once cmd is in the task actor's mailbox, with the
// function that waits for the decision (called once).
// Workers post only runs' outcomes and read only the decision's events, so
// the decision's State may be nil.
type PostFunc func(from actor.SenderContext, task *actor.PID, cmd rules.Command) (wait func() (Decision, error))

// PoolConfig configures the queue and its workers.
type PoolConfig struct {
	// Archetype is the clock (handlers' deadlines, pick-up delays) and the
	// logger.
	Archetype archetype.Archetype
	// Workers is the default queue's limit: how many of its runs execute at
	// once (its worker actors). Queues["default"], when given, replaces it.
	Workers int
	// Queues are the limits of named queues (name → runs executing at
	// once). Each queue has workers of its own, so a run of one queue never
	// takes a slot of another. A run naming a queue not listed here waits
	// in a queue of its own, made when its first run arrives, with the
	// default queue's limit (reported as not configured).
	Queues map[string]int
	// Handlers maps a task kind to its handler; read-only once started.
	Handlers map[string]Handler
	// PickupDelay, if set, says how long a queued run waits before a worker
	// may take it (simulation scripts pick-up times with it).
	PickupDelay func(QueuedRun) time.Duration
	// Ask carries the worker's commands to the task actors. Required.
	Ask AskFunc
	// Post, if set, carries a run's outcome to its task actor: the worker
	// is free for its next run as soon as the outcome is in the task
	// actor's mailbox, not once it is recorded (the task actor decides the
	// outcome before any later command about the task, since messages
	// between two actors keep their order). The run still counts as
	// executing for Stats.Wait until the outcome is decided. Nil: the
	// worker waits for the decision with Ask.
	Post PostFunc
	// Tell carries a run's heartbeats (rules.Heartbeat) to its task actor
	// without waiting. Nil: Ask on a goroutine of its own, answer dropped.
	Tell TellFunc
	// Base is the parent of every handler's context; cancelling it abandons
	// running handlers (their outcomes are then not recorded).
	Base context.Context
	// Stats is updated as runs are queued and executed.
	Stats *Stats
	// TracerProvider, if set, gets a span per run, from queued to outcome
	// (trace.go); the handler's context carries it, so the handler span of
	// a Tracing middleware among Handlers is its child. Nil: no run spans.
	TracerProvider trace.TracerProvider
}

// Stats are live counters of the pool, and the gate runs start through:
// once Close is called no run starts any more, and Wait waits for those
// started to end. (A sync.WaitGroup cannot serve: a run may start while
// Wait is waiting, and WaitGroup forbids an Add from zero concurrent with
// Wait.)
type Stats struct {
	Queued atomic.Int64 // runs waiting for a worker, every queue
	Busy   atomic.Int64 // workers executing a run, every queue

	mu      sync.Mutex
	closed  bool      // no run is admitted any more
	running countdown // runs admitted and not ended
	asking  countdown // admitted runs whose start is not decided yet
	// executing are the runs handed to their handler and not ended, by
	// run ID: what a drain waits for and what it cuts off (Executing).
	executing map[uuid.UUID]ExecutingRun

	qmu    sync.Mutex
	queues map[string]*queueStats
}

// QueueStats are one queue's figures.
type QueueStats struct {
	Name string
	// Limit is how many of its runs may execute at once.
	Limit int
	// Depth counts its runs waiting for a worker; Busy its workers
	// executing a run.
	Depth int64
	Busy  int64
	// Configured is false for a queue that only a task named: it has the
	// default queue's limit.
	Configured bool
}

type queueStats struct {
	limit       int
	configured  bool
	depth, busy atomic.Int64
}

// queue returns the figures of the queue name, adding them (with limit and
// configured) if they are new.
func (s *Stats) queue(name string, limit int, configured bool) *queueStats {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if q, ok := s.queues[name]; ok {
		return q
	}
	if s.queues == nil {
		s.queues = map[string]*queueStats{}
	}
	q := &queueStats{limit: limit, configured: configured}
	s.queues[name] = q
	return q
}

// Queues returns each queue's figures, by name: the configured queues from
// the start, a queue only a task names once its first run has arrived.
func (s *Stats) Queues() []QueueStats {
	s.qmu.Lock()
	out := make([]QueueStats, 0, len(s.queues))
	for name, q := range s.queues {
		out = append(out, QueueStats{Name: name, Limit: q.limit, Depth: q.depth.Load(), Busy: q.busy.Load(), Configured: q.configured})
	}
	s.qmu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// countdown counts admitted runs in some state; its waiters are released
// once the Stats are closed and the count is zero. Guarded by Stats.mu.
type countdown struct {
	n    int
	zero chan struct{} // made by the first waiter, closed on release
}

// release wakes the waiters if closed and the count is zero.
func (c *countdown) release(closed bool) {
	if closed && c.n == 0 && c.zero != nil {
		close(c.zero)
		c.zero = nil
	}
}

// enter admits one run; false once Close was called.
func (s *Stats) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.running.n++
	s.asking.n++
	return true
}

// asked says the start of an admitted run was decided (started or not).
func (s *Stats) asked() { s.down(&s.asking) }

// exit ends an admitted run.
func (s *Stats) exit() { s.down(&s.running) }

func (s *Stats) down(c *countdown) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.n--
	c.release(s.closed)
}

// ExecutingRun is a run a worker has handed to its handler and whose
// handler has not returned.
type ExecutingRun struct {
	TaskID, RunID uuid.UUID
	Run           int // its number
	// Deadline is the end of its timebox: a run cut off by a stop is
	// recorded lost (process_lost) at this time, by the next start, and
	// its task starts no other run before then (overlap, R12).
	Deadline time.Time
}

// began counts r as executing.
func (s *Stats) began(r ExecutingRun) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.executing == nil {
		s.executing = map[uuid.UUID]ExecutingRun{}
	}
	s.executing[r.RunID] = r
}

// ended ends the admitted run id, which was executing: exit, and no
// longer executing.
func (s *Stats) ended(id uuid.UUID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.executing, id)
	s.running.n--
	s.running.release(s.closed)
}

// Executing returns the runs being executed now, by deadline (then task
// and run number): a graceful stop logs what it waits for and what it
// cuts off from it.
func (s *Stats) Executing() []ExecutingRun {
	s.mu.Lock()
	out := make([]ExecutingRun, 0, len(s.executing))
	for _, r := range s.executing {
		out = append(out, r)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.Deadline.Equal(b.Deadline) {
			return a.Deadline.Before(b.Deadline)
		}
		if c := bytes.Compare(a.TaskID[:], b.TaskID[:]); c != 0 {
			return c < 0
		}
		return a.Run < b.Run
	})
	return out
}

// Close admits no more runs: a worker that takes a run from the queue
// leaves it waiting (in the log: the next start takes it).
func (s *Stats) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.running.release(true)
	s.asking.release(true)
}

// Wait waits until Close was called and every admitted run has ended, or
// ctx ends (returning its error).
func (s *Stats) Wait(ctx context.Context) error { return s.wait(ctx, &s.running) }

// WaitStarts waits until Close was called and the start of every run
// admitted before has been decided, or ctx ends (returning its error):
// from then on no run starts.
func (s *Stats) WaitStarts(ctx context.Context) error { return s.wait(ctx, &s.asking) }

func (s *Stats) wait(ctx context.Context, c *countdown) error {
	s.mu.Lock()
	if s.closed && c.n == 0 {
		s.mu.Unlock()
		return nil
	}
	if c.zero == nil {
		c.zero = make(chan struct{})
	}
	ch := c.zero
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

type queued struct {
	run QueuedRun
	seq uint64
}

// ready is a delayed run whose pick-up time came.
type ready struct{ q queued }

// work hands a run to a worker.
type work struct{ run QueuedRun }

// Queue is the run queue actor. It keeps one queue per name (a lane), each
// with its own workers, as many as its limit: runs of a lane wait in
// priority order, then enqueue order, and only its own workers take them,
// so a lane whose runs are slow never holds back another's. Several runs of
// one task may wait at once (R2).
//
// Runs reach a lane as messages to the actor or through Enqueue, and
// workers free themselves through free, so q.mu guards what follows cfg
// and limits: a run enqueued by a task actor costs no message to the
// queue, and a run handed to a worker one message (work).
type Queue struct {
	cfg    PoolConfig
	limits map[string]int // the configured queues' limits, "default" included

	mu    sync.Mutex
	seq   uint64
	lanes map[string]*lane
	sys   *actor.ActorSystem
	self  *actor.PID // set once the actor started and the configured lanes are open
}

// lane is one named queue: its waiting runs and its idle workers.
type lane struct {
	name    string
	stats   *queueStats
	waiting runQueue
	idle    []*actor.PID
}

// NewQueue returns the producer of the queue actor; it spawns its workers.
// The configured queues show in cfg.Stats at once.
func NewQueue(cfg PoolConfig) actor.Producer { return NewPool(cfg).Producer() }

// NewPool returns the queue, whose actor Producer makes (spawn it once):
// runs reach it as Enqueued messages to that actor, or through Enqueue.
// The configured queues show in cfg.Stats at once.
func NewPool(cfg PoolConfig) *Queue {
	cfg.Archetype = cfg.Archetype.WithDefaults()
	limits := map[string]int{events.DefaultQueue: cfg.Workers}
	for name, n := range cfg.Queues {
		limits[name] = n
	}
	for name, n := range limits {
		cfg.Stats.queue(name, n, true)
	}
	return &Queue{cfg: cfg, limits: limits, lanes: map[string]*lane{}}
}

// Producer is the producer of q's actor. The actor is q itself: a restart
// keeps the waiting runs and the workers.
func (q *Queue) Producer() actor.Producer { return func() actor.Actor { return q } }

// Receive implements actor.Actor.
func (q *Queue) Receive(ctx actor.Context) {
	c := q.cfg.Archetype.Clock
	if counted.Counted(ctx.Message()) {
		defer c.End()
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.self != nil {
			return // restarted: the lanes and their workers are there
		}
		names := make([]string, 0, len(q.limits))
		for name := range q.limits {
			names = append(names, name)
		}
		sort.Strings(names) // spawn in one order every time
		for _, name := range names {
			q.open(ctx, name)
		}
		q.sys, q.self = ctx.ActorSystem(), ctx.Self()
	case Enqueued:
		if m.Queue == "" {
			m.Queue = events.DefaultQueue
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		q.enqueue(q.lane(ctx, m.Queue), m)
	case ready:
		q.mu.Lock()
		defer q.mu.Unlock()
		l := q.lanes[m.q.run.Queue]
		l.waiting.push(m.q)
		q.dispatch(l)
	}
}

// Enqueue puts run m on its queue at once, from any goroutine, as an
// Enqueued message to the queue's actor would once processed: without the
// message and the turn of the actor's mailbox, two for every run a task
// actor enqueues. It reports false, doing nothing, when it cannot — the
// actor has not started, or m names a queue that has no lane yet (only
// the actor opens one: it spawns the lane's workers) — and the caller
// then sends the message.
//
// Runs put by Enqueue and by messages share the lanes, under q.mu; a run a
// caller enqueues directly after sending one as a message does not pass
// it, since a lane it had to send for is opened by the actor only.
func (q *Queue) Enqueue(m Enqueued) bool {
	if m.Queue == "" {
		m.Queue = events.DefaultQueue
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	l, ok := q.lanes[m.Queue]
	if !ok || q.self == nil {
		return false
	}
	q.enqueue(l, m)
	return true
}

// enqueue puts m on l, or sets it aside until its pick-up delay passes;
// q.mu must be held.
func (q *Queue) enqueue(l *lane, m Enqueued) {
	c := q.cfg.Archetype.Clock
	q.seq++
	it := queued{run: m, seq: q.seq}
	q.cfg.Stats.Queued.Add(1)
	l.stats.depth.Add(1)
	if q.cfg.PickupDelay != nil {
		if d := q.cfg.PickupDelay(m); d > 0 {
			sys, self := q.sys, q.self
			c.AfterFunc(d, func() { counted.Send(c, sys.Root, self, ready{q: it}) })
			return
		}
	}
	l.waiting.push(it)
	q.dispatch(l)
}

// free takes worker pid of the queue named lane back, and hands it the
// next waiting run if there is one. From any goroutine: a worker frees
// itself with it rather than with a message to the queue's actor.
func (q *Queue) free(pid *actor.PID, lane string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	l := q.lanes[lane]
	l.idle = append(l.idle, pid)
	q.dispatch(l)
}

// lane returns the lane of the queue name, opening it with the default
// queue's limit if no configuration names it; q.mu must be held.
func (q *Queue) lane(ctx actor.Context, name string) *lane {
	if l, ok := q.lanes[name]; ok {
		return l
	}
	q.cfg.Archetype.Logger.Warn("a task names a queue the scheduler was not configured with; it gets the default queue's limit",
		"queue", name, "limit", q.limits[events.DefaultQueue])
	return q.open(ctx, name)
}

// open makes the lane of the queue name and spawns its workers; q.mu must
// be held.
func (q *Queue) open(ctx actor.Context, name string) *lane {
	limit, configured := q.limits[name]
	if !configured {
		limit = q.limits[events.DefaultQueue]
	}
	l := &lane{name: name, stats: q.cfg.Stats.queue(name, limit, configured)}
	for i := 0; i < limit; i++ {
		w := &Worker{cfg: q.cfg, queue: q, lane: name, stats: l.stats, trace: newRunTracer(q.cfg.TracerProvider)}
		l.idle = append(l.idle, counted.Spawn(q.cfg.Archetype.Clock, ctx, actor.PropsFromProducer(func() actor.Actor { return w })))
	}
	q.lanes[name] = l
	return l
}

// dispatch hands l's waiting runs to its idle workers; q.mu must be held.
func (q *Queue) dispatch(l *lane) {
	for len(l.idle) > 0 && l.waiting.len() > 0 {
		it := l.waiting.pop()
		// The longest idle worker first. Shifted down in place: re-slicing
		// past the first made the next append copy the slice to a new
		// array, about every other run.
		w := l.idle[0]
		n := copy(l.idle, l.idle[1:])
		l.idle[n] = nil
		l.idle = l.idle[:n]
		q.cfg.Stats.Queued.Add(-1)
		l.stats.depth.Add(-1)
		counted.Send(q.cfg.Archetype.Clock, q.sys.Root, w, work{run: it.run})
	}
}

// Worker takes one run at a time: it asks the task actor for permission,
// runs the handler until it returns or its deadline passes, and reports the
// outcome.
type Worker struct {
	cfg   PoolConfig
	queue *Queue
	lane  string      // the name of the queue whose worker it is
	stats *queueStats // that queue's figures
	trace runTracer
	// cur is the run it executes, or executed last; only Receive reads it.
	cur *execution
	// runs is the parent of its handlers' contexts, which stopRun cancels
	// with a forced end's cause (execution.stop); begin makes it again for
	// the next run once it is cancelled. Only Receive uses them. One per
	// worker rather than one per run: each run's own was added to and
	// removed from Base's children, which every worker shares.
	runs    context.Context
	stopRun context.CancelCauseFunc
}

// Receive implements actor.Actor.
func (w *Worker) Receive(ctx actor.Context) {
	c := w.cfg.Archetype.Clock
	if counted.Counted(ctx.Message()) {
		defer c.End()
	}
	if m, ok := ctx.Message().(StopRun); ok {
		if w.cur != nil && w.cur.id == m.RunID {
			w.cur.stop(m.Reason)
		}
		return
	}
	m, ok := ctx.Message().(work)
	if !ok {
		return
	}
	if !w.cfg.Stats.enter() {
		// Shutting down: the run stays waiting in the log.
		w.queue.free(ctx.Self(), w.lane)
		return
	}
	reply, err := w.ask(ctx, m.run, rules.RequestStart{RunID: m.run.RunID})
	w.cfg.Stats.asked()
	if err != nil || len(reply.Events) == 0 {
		w.cfg.Stats.exit()
		if err != nil && !errors.Is(err, rules.ErrUnknownRun) && !errors.Is(err, rules.ErrRunNotWaiting) && !errors.Is(err, ErrRecordLater) {
			w.cfg.Archetype.Failed(slog.LevelError, "request start failed", err, "task_id", m.run.TaskID, "run_id", m.run.RunID)
		}
		w.queue.free(ctx.Self(), w.lane)
		return
	}
	// The start need not be the decision's only event: under overlap
	// cancel_other the forced end of the run it replaces comes first, and
	// the runs of backfill slots its leaving the queue makes room for come
	// after it.
	started := startedIn(reply.Events, m.run.RunID)
	if started && reply.Run == nil {
		// An AskFunc that does not answer a start with StartDecision: the
		// run is recorded started, and its task forces it to end at its
		// deadline (R4).
		w.cfg.Stats.exit()
		w.cfg.Archetype.Logger.Error("start decision without its run: the AskFunc must answer a start with StartDecision",
			"task_id", m.run.TaskID, "run_id", m.run.RunID)
		w.queue.free(ctx.Self(), w.lane)
		return
	}
	if !started {
		w.trace.dropped(m.run, &reply, c.Now())
		w.cfg.Stats.exit()
		w.queue.free(ctx.Self(), w.lane) // dropped, and recorded as such
		return
	}
	w.begin(ctx, m, &reply)
}

// startedIn reports whether evs record the start of run id.
func startedIn(evs []events.Event, id uuid.UUID) bool {
	for _, e := range evs {
		if s, ok := e.(events.RunStarted); ok && s.RunID == id {
			return true
		}
	}
	return false
}

// begin hands run m, which its task started (d is the start's decision),
// to its handler on a goroutine of its own. Receive, which waits for the
// task to decide, keeps no more than the decision in its frame: the rest
// is here, and in report, so that the goroutines that wait for a task's
// decisions do not outgrow their first stack (docs/performance.md).
func (w *Worker) begin(ctx actor.Context, m work, d *Decision) {
	c := w.cfg.Archetype.Clock
	x := &handling{w: w, root: ctx.ActorSystem().Root, self: ctx.Self(), q: m.run, h: w.cfg.Handlers[d.Run.Kind], run: *d.Run}
	x.b = begun{taskID: x.run.TaskID, runID: x.run.RunID, number: x.run.Number, attempt: x.run.Attempt, deadline: x.run.Deadline}
	// The run's checkpoints and heartbeats go through x: no function
	// values, nor heartbeats of their own, made for every run.
	x.run.saver = x
	x.bt.start(c, d.HeartbeatTimeout)
	x.bt.to, x.run.beats = x, &x.bt
	x.span = w.trace.start(m.run, d.Run)
	w.trace.started(x.span, c.Now(), x.run.Deadline)
	// The handler's context ends at the deadline (R4), or earlier when the
	// task actor tells this worker it forced the run to end (StopRun): the
	// cause then says why.
	if w.runs == nil || w.runs.Err() != nil {
		w.runs, w.stopRun = context.WithCancelCause(w.cfg.Base)
	}
	x.hctx, x.release = clock.WithDeadline(w.trace.inContext(w.runs, x.span), c, x.run.Deadline)
	x.id, x.c, x.cancel, x.beats = x.run.RunID, c, w.stopRun, x.run.beats
	w.cur = &x.execution
	w.cfg.Stats.Busy.Add(1)
	w.stats.busy.Add(1)
	w.cfg.Stats.began(ExecutingRun{TaskID: x.b.taskID, RunID: x.b.runID, Run: x.b.number, Deadline: x.b.deadline})
	c.Begin() // the handler goroutine is work in flight
	go x.handle()
}

// begun is what the worker reports a run's outcome by: copied before the
// handler runs, which may change its *Run.
type begun struct {
	taskID, runID   uuid.UUID
	number, attempt int
	deadline        time.Time
}

// handling is a run handed to its handler: its execution, and what the
// handler's goroutine needs, in one allocation (they were eight).
type handling struct {
	execution
	w       *Worker
	root    *actor.RootContext
	self    *actor.PID
	q       QueuedRun
	h       Handler
	run     Run // the handler's *Run
	span    trace.Span
	hctx    context.Context
	release context.CancelFunc // hctx's deadline
	b       begun
	bt      beats // the run's heartbeats (run.beats)
}

// handle runs the handler in x.hctx and reports its outcome to the task.
func (x *handling) handle() {
	w := x.w
	c := w.cfg.Archetype.Clock
	defer c.End()
	defer w.cfg.Stats.ended(x.b.runID) // Stop waits for the outcome to be decided
	cp, herr := call(x.hctx, x.h, &x.run)
	forced, reason := x.end()
	x.run.beats.stop()
	x.release()
	if w.cfg.Base.Err() != nil {
		w.unbusy()
		w.trace.abandoned(x.span, c.Now())
		return // abandoned at shutdown: recovery will force it to end
	}
	w.report(x.root, x.self, x.q, x.b, x.span, cp, herr, forced, reason)
}

// saveCheckpoint is the run's Run.SaveCheckpoint. It waits for the task
// actor within the handler's ctx: a handler past its deadline (or whose run
// was forced to end) gets ctx's error at once instead of waiting for the
// task actor's answer.
func (x *handling) saveCheckpoint(ctx context.Context, cp json.RawMessage) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("worker: save checkpoint of run %s: %w", x.b.runID, err)
	}
	_, err := x.w.askIn(ctx, x.root, x.q, rules.SaveCheckpoint{RunID: x.b.runID, Checkpoint: cp})
	return err
}

// heartbeat sends the run's heartbeat (Run.Heartbeat); nothing once the
// handler's context has ended (the deadline passed, or the run was forced
// to end): the task no longer waits for it.
func (x *handling) heartbeat() {
	if x.hctx.Err() != nil {
		return
	}
	x.w.tell(x.root, x.q, rules.Heartbeat{RunID: x.b.runID})
}

// unbusy counts the worker as no longer executing a run.
func (w *Worker) unbusy() {
	w.cfg.Stats.Busy.Add(-1)
	w.stats.busy.Add(-1)
}

// free tells the queue the worker may take its next run.
func (w *Worker) free(self *actor.PID) {
	w.unbusy()
	w.queue.free(self, w.lane)
}

// report records the outcome of run b, whose handler returned cp and
// herr: nothing when the task actor forced the run to end (it recorded
// that and told this worker), a forced end when the handler returned at or
// after the deadline, else a failure or a completion. The worker is free
// once the outcome is on its way (with Post) or decided (with Ask).
func (w *Worker) report(root *actor.RootContext, self *actor.PID, q QueuedRun, b begun, span trace.Span, cp json.RawMessage, herr error, forced bool, reason string) {
	c := w.cfg.Archetype.Clock
	var cmd rules.Command
	switch {
	case forced:
		// Recorded by the task actor, which told us: nothing to report.
		cmd = rules.ForceEnd{RunID: b.runID, Reason: reason}
	case !c.Now().Before(b.deadline):
		cmd = rules.ForceEnd{RunID: b.runID, Reason: events.ForcedTimebox}
	case herr != nil:
		// A handler marks an error it knows retrying cannot mend (R13);
		// a panic is retryable, like any unmarked error.
		cmd = rules.Fail{RunID: b.runID, Error: herr.Error(), Checkpoint: cp, Fatal: IsPermanent(herr)}
	default:
		cmd = rules.Complete{RunID: b.runID, Checkpoint: cp}
	}
	var d Decision
	var err error
	switch {
	case forced:
		w.free(self)
	case w.cfg.Post != nil:
		wait := w.cfg.Post(root, q.Task, cmd)
		w.free(self)
		d, err = wait()
		if err != nil {
			err = taskErr(q, err)
		}
	default:
		d, err = w.askFrom(root, q, cmd)
		w.free(self)
	}
	// ErrUnknownRun: the task actor forced the run to end before the
	// outcome reached it (and before its StopRun reached this worker); the
	// run has its one outcome, the forced end.
	unknown := errors.Is(err, rules.ErrUnknownRun)
	if f, failed := cmd.(rules.Fail); failed && !unknown {
		w.cfg.Archetype.Logger.Warn("run failed", "task_id", b.taskID, "run_id", b.runID, "run", b.number, "attempt", b.attempt,
			"permanent", f.Fatal, "error", f.Error)
	}
	if err != nil && !unknown && !errors.Is(err, ErrRecordLater) {
		w.cfg.Archetype.Failed(slog.LevelError, "report outcome failed", err, "task_id", q.TaskID, "run_id", b.runID)
	}
	w.trace.ended(span, cmd, d.Events, herr, err, b.deadline, c.Now())
}

// call runs the handler, turning a panic into an error.
func call(ctx context.Context, h Handler, run *Run) (cp json.RawMessage, err error) {
	if h == nil {
		return nil, fmt.Errorf("%w %q", ErrNoHandler, run.Kind)
	}
	defer func() {
		if p := recover(); p != nil {
			cp, err = nil, fmt.Errorf("panic: %v\n%s", p, firstLines(debug.Stack(), 12))
		}
	}()
	return h.Handle(ctx, run)
}

func firstLines(b []byte, n int) string {
	for i, c := range b {
		if c == '\n' {
			n--
			if n == 0 {
				return string(b[:i])
			}
		}
	}
	return string(b)
}

func (w *Worker) ask(ctx actor.Context, run QueuedRun, cmd rules.Command) (Decision, error) {
	return w.askFrom(ctx, run, cmd)
}

func (w *Worker) askFrom(from actor.SenderContext, run QueuedRun, cmd rules.Command) (d Decision, err error) {
	return w.askIn(context.Background(), from, run, cmd)
}

// askIn is askFrom waiting within ctx (a handler's, for its checkpoints).
func (w *Worker) askIn(ctx context.Context, from actor.SenderContext, run QueuedRun, cmd rules.Command) (d Decision, err error) {
	d, err = w.cfg.Ask(ctx, from, run.Task, cmd)
	if err != nil {
		err = taskErr(run, err)
	}
	return d, err
}

func taskErr(run QueuedRun, err error) error {
	return fmt.Errorf("worker: task %s: %w", run.TaskID, err)
}

// runQueue is a lane's waiting runs, highest priority first, then in the
// order they came (seq): one first-in, first-out queue per priority, the
// highest first. A wave of 100,000 runs of one priority waiting at once
// made a binary heap of them move each run (~170 B) up and down 17 levels
// on its way out; here it is taken from the front.
type runQueue struct {
	levels []*runLevel // highest priority first; none empty
	n      int
	// spare is the last level that emptied, for the next level made: a
	// lane whose one level empties and fills again, as a wave's does,
	// does not grow a new array each time.
	spare *runLevel
}

// runLevel is the runs of one priority, in seq order from head on.
type runLevel struct {
	priority int
	runs     []queued
	head     int
}

func (q *runQueue) len() int { return q.n }

// push adds it after the runs of its priority that came before it: after
// all of them but for a run whose pick-up delay kept it back (ready), which
// takes the place its seq gives it.
func (q *runQueue) push(it queued) {
	q.n++
	i := 0
	for i < len(q.levels) && q.levels[i].priority > it.run.Priority {
		i++
	}
	if i == len(q.levels) || q.levels[i].priority != it.run.Priority {
		l := q.spare
		if l == nil {
			l = &runLevel{}
		}
		q.spare, l.priority = nil, it.run.Priority
		q.levels = slices.Insert(q.levels, i, l)
	}
	l := q.levels[i]
	waiting := l.runs[l.head:]
	if len(waiting) == 0 || waiting[len(waiting)-1].seq < it.seq {
		l.runs = append(l.runs, it)
		return
	}
	at, _ := slices.BinarySearchFunc(waiting, it.seq, func(r queued, seq uint64) int { return cmp.Compare(r.seq, seq) })
	l.runs = slices.Insert(l.runs, l.head+at, it)
}

// pop removes and returns the first run; q must not be empty.
func (q *runQueue) pop() queued {
	q.n--
	l := q.levels[0]
	it := l.runs[l.head]
	l.runs[l.head] = queued{}
	l.head++
	switch {
	case l.head == len(l.runs):
		q.levels = slices.Delete(q.levels, 0, 1)
		if q.spare == nil || cap(l.runs) > cap(q.spare.runs) {
			l.runs, l.head = l.runs[:0], 0 // every slot taken was cleared
			q.spare = l
		}
	case l.head >= 1024 && 2*l.head >= len(l.runs):
		// Half of the array is taken: move the rest to its front, so that a
		// level that never empties does not grow without bound.
		n := copy(l.runs, l.runs[l.head:])
		clear(l.runs[n:])
		l.runs, l.head = l.runs[:n], 0
	}
	return it
}
