package worker

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
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
// (none when nothing changed) and the task's state after them.
type Decision struct {
	Events []events.Event
	State  rules.State
}

// AskFunc sends cmd to the task actor at task, from from, and waits for its
// decision, no longer than ctx lasts. A rejection is returned as the error,
// with the decision's state.
type AskFunc func(ctx context.Context, from actor.SenderContext, task *actor.PID, cmd rules.Command) (Decision, error)

// PoolConfig configures the queue and its workers.
type PoolConfig struct {
	// Archetype is the clock (handlers' deadlines, pick-up delays) and the
	// logger.
	Archetype archetype.Archetype
	// Workers is the number of worker actors (runs executing at once).
	Workers int
	// Handlers maps a task kind to its handler; read-only once started.
	Handlers map[string]Handler
	// PickupDelay, if set, says how long a queued run waits before a worker
	// may take it (simulation scripts pick-up times with it).
	PickupDelay func(QueuedRun) time.Duration
	// Ask carries the worker's commands to the task actors. Required.
	Ask AskFunc
	// Base is the parent of every handler's context; cancelling it abandons
	// running handlers (their outcomes are then not recorded).
	Base context.Context
	// Stats is updated as runs are queued and executed.
	Stats *Stats
	// TracerProvider, if set, gets a span per run (trace.go); the handler's
	// context carries it. Nil: no spans.
	TracerProvider trace.TracerProvider
}

// Stats are live counters of the pool, and the gate runs start through:
// once Close is called no run starts any more, and Wait waits for those
// started to end. (A sync.WaitGroup cannot serve: a run may start while
// Wait is waiting, and WaitGroup forbids an Add from zero concurrent with
// Wait.)
type Stats struct {
	Queued atomic.Int64 // runs waiting for a worker
	Busy   atomic.Int64 // workers executing a run

	mu      sync.Mutex
	running int           // runs admitted and not ended
	closed  bool          // no run is admitted any more
	drained chan struct{} // closed once closed and running == 0
}

// enter admits one run; false once Close was called.
func (s *Stats) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.running++
	return true
}

// exit ends an admitted run.
func (s *Stats) exit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
	if s.closed && s.running == 0 && s.drained != nil {
		close(s.drained)
		s.drained = nil
	}
}

// Close admits no more runs: a worker that takes a run from the queue
// leaves it waiting (in the log: the next start takes it).
func (s *Stats) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
}

// Wait waits until Close was called and every admitted run has ended, or
// ctx ends (returning its error).
func (s *Stats) Wait(ctx context.Context) error {
	s.mu.Lock()
	if s.closed && s.running == 0 {
		s.mu.Unlock()
		return nil
	}
	if s.drained == nil {
		s.drained = make(chan struct{})
	}
	ch := s.drained
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

// idle is a worker telling the queue it is free.
type idle struct{ pid *actor.PID }

// work hands a run to a worker.
type work struct{ run QueuedRun }

// Queue is the run queue: priority order, then enqueue order; it hands runs
// to idle workers. Several runs of one task may wait at once (R2).
type Queue struct {
	cfg     PoolConfig
	seq     uint64
	waiting runHeap
	idle    []*actor.PID
	sys     *actor.ActorSystem
	self    *actor.PID
}

// NewQueue returns the producer of the queue actor; it spawns its workers.
func NewQueue(cfg PoolConfig) actor.Producer {
	cfg.Archetype = cfg.Archetype.WithDefaults()
	return func() actor.Actor { return &Queue{cfg: cfg} }
}

// Receive implements actor.Actor.
func (q *Queue) Receive(ctx actor.Context) {
	c := q.cfg.Archetype.Clock
	if counted.Counted(ctx.Message()) {
		defer c.End()
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		q.sys, q.self = ctx.ActorSystem(), ctx.Self()
		for i := 0; i < q.cfg.Workers; i++ {
			w := &Worker{cfg: q.cfg, queue: ctx.Self(), trace: newRunTracer(q.cfg.TracerProvider)}
			q.idle = append(q.idle, counted.Spawn(c, ctx, actor.PropsFromProducer(func() actor.Actor { return w })))
		}
	case Enqueued:
		q.seq++
		it := queued{run: m, seq: q.seq}
		q.cfg.Stats.Queued.Add(1)
		if q.cfg.PickupDelay != nil {
			if d := q.cfg.PickupDelay(m); d > 0 {
				sys, self := q.sys, q.self
				c.AfterFunc(d, func() { counted.Send(c, sys.Root, self, ready{q: it}) })
				return
			}
		}
		heap.Push(&q.waiting, it)
		q.dispatch(ctx)
	case ready:
		heap.Push(&q.waiting, m.q)
		q.dispatch(ctx)
	case idle:
		q.idle = append(q.idle, m.pid)
		q.dispatch(ctx)
	}
}

func (q *Queue) dispatch(ctx actor.Context) {
	for len(q.idle) > 0 && len(q.waiting) > 0 {
		it := heap.Pop(&q.waiting).(queued)
		w := q.idle[0]
		q.idle = q.idle[1:]
		q.cfg.Stats.Queued.Add(-1)
		counted.Send(q.cfg.Archetype.Clock, ctx, w, work{run: it.run})
	}
}

// Worker takes one run at a time: it asks the task actor for permission,
// runs the handler until it returns or its deadline passes, and reports the
// outcome.
type Worker struct {
	cfg   PoolConfig
	queue *actor.PID
	trace runTracer
}

// Receive implements actor.Actor.
func (w *Worker) Receive(ctx actor.Context) {
	c := w.cfg.Archetype.Clock
	if counted.Counted(ctx.Message()) {
		defer c.End()
	}
	m, ok := ctx.Message().(work)
	if !ok {
		return
	}
	if !w.cfg.Stats.enter() {
		// Shutting down: the run stays waiting in the log.
		counted.Send(c, ctx, w.queue, idle{pid: ctx.Self()})
		return
	}
	reply, err := w.ask(ctx, m.run, rules.RequestStart{RunID: m.run.RunID})
	if err != nil || len(reply.Events) == 0 {
		w.cfg.Stats.exit()
		if err != nil && !errors.Is(err, rules.ErrUnknownRun) && !errors.Is(err, rules.ErrRunNotWaiting) {
			w.cfg.Archetype.Logger.Error("request start failed", "task_id", m.run.TaskID, "run_id", m.run.RunID, "err", err)
		}
		counted.Send(c, ctx, w.queue, idle{pid: ctx.Self()})
		return
	}
	if _, started := reply.Events[0].(events.RunStarted); !started {
		w.trace.dropped(m.run, reply, c.Now())
		w.cfg.Stats.exit()
		counted.Send(c, ctx, w.queue, idle{pid: ctx.Self()}) // dropped, and recorded as such
		return
	}
	st := reply.State
	r, _ := st.Run(m.run.RunID)
	run := NewRun(Run{TaskID: st.ID, TaskName: st.Spec.Name, Owner: st.Spec.Owner, Kind: st.Spec.Kind,
		RunID: r.ID, Number: r.Number, Payload: st.Spec.Payload, Checkpoint: st.Checkpoint, Deadline: r.Deadline}, nil)
	root, self := ctx.ActorSystem().Root, ctx.Self()
	run.save = func(_ context.Context, cp json.RawMessage) error {
		_, err := w.askFrom(root, m.run, rules.SaveCheckpoint{RunID: r.ID, Checkpoint: cp})
		return err
	}
	h := w.cfg.Handlers[st.Spec.Kind]
	taskID := st.ID // not st itself: the goroutine would keep the whole state on the heap
	span := w.trace.start(m.run, st)
	w.trace.started(span, c.Now(), r.Deadline)
	w.cfg.Stats.Busy.Add(1)
	c.Begin() // the handler goroutine is work in flight
	go func() {
		defer c.End()
		defer w.cfg.Stats.exit()
		defer w.cfg.Stats.Busy.Add(-1)
		hctx, cancel := clock.WithDeadline(w.trace.inContext(w.cfg.Base, span), c, r.Deadline)
		cp, herr := call(hctx, h, run)
		cancel()
		if w.cfg.Base.Err() != nil {
			w.trace.abandoned(span, c.Now())
			return // abandoned at shutdown: recovery will force it to end
		}
		var cmd rules.Command
		switch {
		case !c.Now().Before(r.Deadline):
			cmd = rules.ForceEnd{RunID: r.ID, Reason: events.ForcedTimebox}
		case herr != nil:
			cmd = rules.Fail{RunID: r.ID, Error: herr.Error(), Checkpoint: cp}
			w.cfg.Archetype.Logger.Warn("run failed", "task_id", taskID, "run_id", r.ID, "run", r.Number, "attempt", 1, "error", herr.Error())
		default:
			cmd = rules.Complete{RunID: r.ID, Checkpoint: cp}
		}
		d, err := w.askFrom(root, m.run, cmd)
		if err != nil && !errors.Is(err, rules.ErrUnknownRun) {
			w.cfg.Archetype.Logger.Error("report outcome failed", "task_id", m.run.TaskID, "run_id", r.ID, "err", err)
		}
		w.trace.ended(span, cmd, d, herr, err, r.Deadline, c.Now())
		counted.Send(c, root, w.queue, idle{pid: self})
	}()
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

func (w *Worker) askFrom(from actor.SenderContext, run QueuedRun, cmd rules.Command) (Decision, error) {
	d, err := w.cfg.Ask(context.Background(), from, run.Task, cmd)
	if err != nil {
		return d, fmt.Errorf("worker: task %s: %w", run.TaskID, err)
	}
	return d, nil
}

type runHeap []queued

func (h runHeap) Len() int { return len(h) }
func (h runHeap) Less(i, j int) bool {
	if h[i].run.Priority != h[j].run.Priority {
		return h[i].run.Priority > h[j].run.Priority
	}
	return h[i].seq < h[j].seq
}
func (h runHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)   { *h = append(*h, x.(queued)) }
func (h *runHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
