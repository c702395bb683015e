// Package task is the task actor: one protoactor-go actor per scheduled task,
// its state rebuilt from the task's own event stream. It alone decides what
// happens to the task (package rules) and records every decision.
//
// Its loop, for every command: decide (rules.Decide) → append the events
// with the stream's expected version → evolve the state → only then act on
// the effects the rules name (rules.Effects): put an enqueued run on the
// queue (its task's named queue, with its attempt, retry_of and trigger),
// tell the due-time index when the task is next due (nextRun, or a pending
// retry's time when earlier), arm or stop a run's deadline timer and its
// heartbeat watch — and reply.
//
// Heartbeats (R16) are not recorded: for each running run of a task with a
// heartbeat_timeout the actor keeps the time of its last heartbeat (its
// start, a rules.Heartbeat command, a saved checkpoint) and one timer on
// the virtual or real clock; when the timer finds the timeout passed since
// the last heartbeat it decides rules.ForceEnd with reason
// heartbeat_timeout and that time, else it sets itself again. A new actor
// (after a restart) watches no run: R9 ends the runs it finds started.
//
// A forced end the actor records for a run — its heartbeat watch, or its
// deadline timer before the worker reported the deadline — is also sent
// to the worker that asked to start the run (Command.Runner) as a
// worker.StopRun, counted, once durable: the worker cancels the handler's
// context, so that a hung handler does not run on beside the run's retry.
//
// The append is asynchronous (flight.go): the actor hands the events to
// the store (events.AppendAsync) and its goroutine goes back to the
// dispatcher; the store's answer comes back as a message, and the actor
// then evolves, acts and replies as above. Meanwhile it decides nothing
// for its task: messages that arrive are held, in order, and handled after
// the answer, so decisions stay serialized exactly as with a synchronous
// append. docs/architecture.md, "The append path", has the whole protocol.
//
// A version conflict (another writer of the same stream) reads the
// stream's events after the actor's version and decides again, a bounded
// number of times; so two actors for one task can never both start a run.
//
// Loads are asynchronous too (load.go): an actor started without a state
// hands the read to a goroutine of its own (Config.Load, or a read of the
// whole stream) and holds every message until the state comes back as a
// message; so does the read after a version conflict. No store call runs
// on the dispatcher's goroutines, and a slow store delays one task, not
// the others.
//
// Every store call runs under a deadline (Config.StoreTimeout, within the
// caller's context for commands that carry one), so a hung store cannot
// keep the actor waiting for ever.
//
// Lifecycle: an actor is spawned by the scheduler, with a state it already
// has (recovery's fold, or the record of a resting task) or loading its
// stream itself. A load that fails answers every message with the error and
// passivates, so the next command starts a new actor that loads again; a
// tick it held is handed to the Registry to retry (Retrier). An
// actor whose task needs none (rules.Passivate: deleted, nothing open, no
// timer) leaves the Registry and stops; its timers stop with it. With
// Config.Rest, so does the actor of a task that rests (rules.Rests: no open
// run, no timer), handing the Registry its state to keep as a record until
// a tick or a command needs the task again (docs/architecture.md). The
// due-time index knows tasks by ID, not by actor, so leaving it takes
// nothing: ticks reach the task through the Registry's owner, which orders
// them with the actor's leaving.
//
// Host actors: with Config.Host set, the actor also answers the messages an
// embedder's own actors send it (package scheduler's request messages), as
// HostRequests. Those are not counted on the clock — nobody called
// clock.Begin for them — so the actor ends the count of exactly the
// messages that were counted: its own, sent through internal/counted. A
// message it does not know is ignored and not uncounted either.
//
// Concurrency: the actor processes one message at a time and holds every
// message while an append is in flight, so decisions for one task are
// serialized (R3), whoever sends them.
package task

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

// ErrConflictRetries: the stream kept changing under the actor.
var ErrConflictRetries = errors.New("task: version conflicts persisted after retries")

// ErrLoad: the actor could not load its task's stream; the next command
// tries again.
var ErrLoad = errors.New("task: cannot load the task")

// maxConflictRetries bounds reload-and-retry on a version conflict.
const maxConflictRetries = 5

// DefaultStoreTimeout bounds each store call when Config.StoreTimeout is 0.
const DefaultStoreTimeout = 10 * time.Second

// Command asks the actor to decide Cmd; it replies with a Reply. Ctx, when
// set, bounds the command: one that ended before the actor got to it is
// answered with its error and not decided, and the command's store calls
// run within it.
type Command struct {
	Ctx context.Context
	Cmd rules.Command
	// Runner, on a RequestStart, is the worker that will execute the run
	// if it starts (Ask sets it to the asking actor): should the actor
	// record the run's forced end — its deadline timer, its heartbeat
	// watch — it tells it with a worker.StopRun.
	Runner *actor.PID
	// answer, set by Post, is where the Reply goes instead of the sender.
	answer *answer
}

// Reply is the answer to a Command or Get: the events recorded (none when
// nothing changed), the state after them, or the rejection.
type Reply struct {
	Events []events.Event
	State  rules.State
	// Position is the global log position of the task's latest event: the
	// last event this command recorded, else the latest the actor knows
	// of. A view that has folded the log up to it shows State. Zero when
	// the task has no events.
	Position events.Position
	Err      error
}

// Initial is a task's state as recovery folded it from the global log (or
// as the task's last actor left it, see Registry.Left), and the position of
// its latest event.
type Initial struct {
	State    rules.State
	Position events.Position
	// Tracked says the due-time index holds the task as its state says
	// already (a resting task stays in the index): the actor does not tell
	// it again when it starts.
	Tracked bool
}

// Get asks for the state without changing it; the reply is a Reply.
type Get struct {
	// Pin keeps the actor in memory from now on, resting or not, until its
	// task needs none (deleted, nothing open) or it is stopped: its PID
	// was handed to someone who will send to it directly (a host actor).
	Pin bool
}

// deadline is the actor's own timer message for a started run.
type deadline struct {
	runID  uuid.UUID
	reason string
}

// heartbeatDue is the actor's own timer message for a watched run (R16):
// its heartbeat_timeout may have passed since its last heartbeat.
type heartbeatDue struct{ runID uuid.UUID }

// passivate is the actor's last message to itself before it stops; the
// Registry sends it (see Registry.Leave).
type passivate struct{}

// Registry is where the scheduler finds task actors. An idle actor leaves
// it before it stops, so that nobody sends it anything after its last
// message: every message for a task that may find it leaving (commands,
// ticks) goes through the Registry.
type Registry interface {
	// Leave stops handing out self for task id to new callers and, while no
	// caller can send to self, calls send (which queues the actor's last
	// message to itself). Callers that arrive meanwhile wait for Left.
	Leave(id uuid.UUID, self *actor.PID, send func())
	// Left ends a Leave: stopped true removes self; false (the task needed
	// its actor again in the meantime) hands out self again. rest, when
	// stopped, is the resting task's state and pos the position of its
	// latest event (rest nil: never created, or its load failed): the
	// Registry keeps them and starts the next actor of the task from them
	// (Initial.Tracked), with no store read. A task deleted with nothing
	// open (rules.Idle) needs no actor again, but its state is handed over
	// too: it is the last word on the task (snapshots). rest is the
	// stopping actor's own, valid only during the call: the Registry
	// copies what it keeps.
	//
	// An actor stopped from outside (the scheduler stopping) calls Left
	// too, without a Leave, stopped true: rest is then its state whatever
	// it is — open runs and all (rules.Rests false) — and is handed over
	// only when it holds every event of the stream the actor appended or
	// loaded; an actor that cannot say so (an append that failed as it
	// stopped) calls nothing.
	Left(id uuid.UUID, self *actor.PID, stopped bool, rest *rules.State, pos events.Position)
}

// Recorder is a Registry that keeps the record of a task's state while its
// actor lives (snapshots): an actor that has recorded Config.RecordEvery
// events since its state was last recorded hands it over, on its
// goroutine. st is the actor's own, valid only during the call; it is the
// exact fold of the task's stream up to st.Version, and pos the position
// of that event.
type Recorder interface {
	Record(id uuid.UUID, st *rules.State, pos events.Position)
}

// Retrier is a Registry told of a tick the actor could not decide because
// its task's load failed: the due-time index forgot the task when it sent
// the tick, so the Registry keeps the task scheduled (it sends a tick
// again later). Called on the actor's goroutine.
type Retrier interface {
	RetryTick(id uuid.UUID, err error)
}

// Pinner is a Registry told when an actor is pinned (Get.Pin), once per
// actor, on the actor's goroutine: the scheduler leaves pinned actors out
// of its bound on a wave's actors.
type Pinner interface {
	Pinned(id uuid.UUID, self *actor.PID)
}

// Config is what a task actor needs.
type Config struct {
	Store events.Store
	// Archetype is the clock and logger; a Virtual clock makes the actor
	// deterministic.
	Archetype archetype.Archetype
	// Queue receives a worker.Enqueued for each run enqueued or recovered.
	Queue *actor.PID
	// Enqueue, if set, puts such a run on the queue directly instead
	// (worker.Queue.Enqueue, the queue of the actor at Queue); when it
	// reports false the run is sent to Queue.
	Enqueue func(worker.Enqueued) bool
	// Shard receives a dueindex.Track whenever nextRun or the status changes.
	Shard *actor.PID
	// Registry, if set, is told when the actor stops (see Registry). Nil: the
	// actor stops without telling anyone.
	Registry Registry
	// StoreTimeout bounds each store call (a read or an append). Default
	// DefaultStoreTimeout. It is measured on the wall clock: it guards real
	// I/O, which virtual time does not see.
	StoreTimeout time.Duration
	// Host, if set, recognizes a message a host actor sent (one that no
	// cronactor component sends) and says how to answer it. Nil: the
	// actor answers only cronactor's own messages.
	Host func(msg any) (HostRequest, bool)
	// Load, if set, loads the task's state: the state and the position of
	// its latest event, or an error matching events.ErrStreamNotFound when
	// the task has no stream. It runs on a goroutine of its own, within a
	// context bounded by StoreTimeout. Nil: the actor reads its whole
	// stream.
	Load func(ctx context.Context, id uuid.UUID) (rules.State, events.Position, error)
	// RecordEvery is how many events the actor may record before it hands
	// its state to the Registry (Recorder) again, so that a later load
	// reads at most about that many events after a snapshot. 0: never.
	RecordEvery int
	// HistoryRetention is the history retention of tasks that set none of
	// their own (DESIGN §8.3); zero keeps everything. Retention needs a
	// store that implements events.Truncater; with another, tasks keep
	// their whole history (see retain.go).
	HistoryRetention time.Duration
	// Rest makes the actor of a resting task (rules.Rests, no timer, not
	// pinned by Get.Pin) leave and stop after each message, its state
	// handed to Registry.Left. False: only an actor whose task needs none
	// stops.
	Rest bool
}

// HostRequest is a host actor's message as the actor serves it. It is not
// counted on the clock.
type HostRequest struct {
	// Command returns what to decide given the task's current state (nil:
	// nothing, the host reads the state); an error is the answer instead.
	// It runs in the actor, between two of its messages.
	Command func(rules.State) (rules.Command, error)
	// Reply turns the outcome for task id into the message the host gets
	// back.
	Reply func(id uuid.UUID, r Reply) any
}

// leave is where the actor is in leaving the registry.
type leave int

const (
	staying leave = iota
	leaving       // passivate queued, waiting for it
	left          // handed to Registry.Left, stopping
)

// Actor is one task's actor. Build it with New.
type Actor struct {
	cfg     Config
	id      uuid.UUID
	stream  string
	state   rules.State
	pos     events.Position // of the task's latest event known
	loaded  bool
	loadErr error
	// loading is set while the actor's first load is in flight (load.go):
	// messages are held meanwhile. recorded is the version of the state
	// last recorded (Recorder).
	loading  bool
	recorded uint64
	self     *actor.PID
	sys      *actor.ActorSystem
	timers   map[uuid.UUID]clock.Timer
	// beats holds, for each running run watched for heartbeats (R16), the
	// time of its last heartbeat; beatTimers the timer that checks it.
	// Heartbeats are not recorded: a new actor (a restart) watches no run,
	// and R9 ends the runs it finds started at their deadline.
	beats      map[uuid.UUID]time.Time
	beatTimers map[uuid.UUID]clock.Timer
	// runners holds, for each running run, the worker executing it (the
	// Runner of its RequestStart), to be told of its forced end.
	runners map[uuid.UUID]*actor.PID
	// buffered is the waiting run held until the running run of the task
	// has its outcome (overlap buffer_one, rules.Buffer), if any; it is
	// put back on the queue then. Not recorded: a restarted actor puts
	// every waiting run back on the queue (R9).
	buffered uuid.UUID
	leave    leave
	// recovered is set once the open runs of the loaded state were put
	// back to work; tracked says the due-time index needs no Track for
	// that (Initial.Tracked); pinned that the actor stays (Get.Pin).
	recovered bool
	tracked   bool
	pinned    bool
	// unsure is set once an append failed: the store may have taken it
	// (an answer that came too late, say), so the stream may hold events
	// the state lacks, until a reload reads it again. An unsure actor
	// stopped from outside hands nothing over (handOver).
	unsure bool
	// truncated is the version before which this actor last asked the
	// store to remove the task's events; compacting is set while a
	// compactNow message it sent itself is on its way (retain.go).
	truncated  uint64
	compacting bool
	// fl is the append in flight, if any; held the messages that arrived
	// meanwhile, from held[heldNext] on (see Receive).
	fl       *flight
	effs     []rules.Effect // the last decision's effects (apply)
	held     []held
	heldNext int
	// leaveFn is a.leaveSend, made once for each Actor (they are reused);
	// leaveNow is set by it when the actor may passivate at once.
	leaveFn  func()
	leaveNow bool
	// mb is the actor's mailbox (set by it, see mailbox.RegisterHandlers),
	// nil under another: maybeLeave reads whether a message waits in it.
	mb *mailbox
	// idScope is the stream, a NUL and a random ID of this actor (its
	// incarnation), which tells its decisions apart from those of another
	// actor of the same task: event IDs derive from it, so a retry by this
	// actor is recognised as such by the store while the same decision made
	// by another actor at the same instant still conflicts.
	idScope string
}

// New returns the producer of the actor for task id. With initial nil the
// actor loads its stream when it starts; otherwise initial is the state the
// caller already folded from the log (recovery reads the log once for all).
func New(cfg Config, id uuid.UUID, initial *Initial) actor.Producer {
	cfg = cfg.withDefaults()
	return func() actor.Actor { return newActor(&cfg, id, initial) }
}

// withDefaults is cfg with its defaults filled in.
func (cfg Config) withDefaults() Config {
	if cfg.StoreTimeout <= 0 {
		cfg.StoreTimeout = DefaultStoreTimeout
	}
	cfg.Archetype = cfg.Archetype.WithDefaults()
	return cfg
}

// newActor is an Actor for task id, from the pool (see reuseActor), with
// cfg (defaults filled in) and, unless nil, initial.
func newActor(cfg *Config, id uuid.UUID, initial *Initial) *Actor {
	stream := events.TaskStream(id)
	scope := newScope(stream)
	// stream is a string of its own, not a prefix of scope: the store may
	// keep it (the embedded store's head versions do) long after the actor
	// rested, and it is the shorter one.
	// beats and beatTimers are made by the first run watched for
	// heartbeats: most tasks have none, and an actor is started for every
	// run of a resting task.
	a := reuseActor()
	a.cfg, a.id, a.stream, a.idScope = *cfg, id, stream, scope
	if initial != nil {
		a.state, a.pos, a.loaded, a.tracked = initial.State, initial.Position, true, initial.Tracked
		a.recorded = a.state.Version
	}
	return a
}

// actors keeps the Actors of stopped task actors for new ones (see
// recycle): the actor of a resting task is started and stopped for every
// run, and each was ~1 KiB, its two maps and its slices made anew.
var actors = sync.Pool{New: func() any {
	a := &Actor{timers: map[uuid.UUID]clock.Timer{}, runners: map[uuid.UUID]*actor.PID{}}
	a.leaveFn = a.leaveSend
	return a
}}

// reuseActor returns an Actor with nothing set but its empty maps and
// slices and its leave function, from actors.
func reuseActor() *Actor { return actors.Get().(*Actor) }

// recycle puts a, which has stopped, back in actors once the actor system
// is done with it: it handles *actor.Stopped last, and nothing of ours
// holds it (its timers' functions and its flights hold its PID, not a;
// the Registry got its state for the length of a call). Its maps and
// slices are kept, emptied, and its leave function.
func (a *Actor) recycle() {
	timers, runners, effs, held, leaveFn := a.timers, a.runners, a.effs, a.held, a.leaveFn
	clear(timers)
	clear(runners)
	clear(effs[:cap(effs)])
	clear(held[:cap(held)])
	*a = Actor{timers: timers, runners: runners, effs: effs[:0], held: held[:0], leaveFn: leaveFn}
	actors.Put(a)
}

// newScope is stream, a NUL and a new random ID (Actor.idScope), made in
// one allocation.
func newScope(stream string) string {
	// Unique, not secret: math/rand/v2's generator (seeded at random per
	// process) rather than uuid.New's read of crypto/rand, which puts the
	// ID on the heap.
	var id uuid.UUID
	binary.LittleEndian.PutUint64(id[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(id[8:], rand.Uint64())
	id[6] = (id[6] & 0x0f) | 0x40 // version 4
	id[8] = (id[8] & 0x3f) | 0x80 // RFC 4122 variant
	var text [36]byte
	var b strings.Builder
	b.Grow(len(stream) + 1 + len(text))
	b.WriteString(stream)
	b.WriteByte(0)
	b.Write(events.AppendUUID(text[:0], id))
	return b.String()
}

// NewFrom returns the producer of the actor for task id whose state read
// fills in, with the position of its latest event: a resting task's
// record, decoded straight into the new actor (New would copy it there
// from an Initial of its own). The due-time index holds the task already
// (Initial.Tracked). When read fails, the actor loads its stream when it
// starts, as New(cfg, id, nil) does.
func NewFrom(cfg Config, id uuid.UUID, read func(*rules.State, *events.Position) error) actor.Producer {
	cfg = cfg.withDefaults()
	// One closure, not New's inside another: an actor is started from its
	// record for every run of a resting task.
	return func() actor.Actor {
		a := newActor(&cfg, id, nil)
		if err := read(&a.state, &a.pos); err != nil {
			a.state, a.pos = rules.State{}, events.Position{}
			return a
		}
		a.loaded, a.tracked, a.recorded = true, true, a.state.Version
		return a
	}
}

// Receive implements actor.Actor.
//
// While an append is in flight (see flight) the actor decides nothing: what
// arrives meanwhile is held, in order, and handled once the store has
// answered and the effects of the answered append are done.
func (a *Actor) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Stopped); ok {
		a.recycle() // the last message an actor gets
		return
	}
	if a.cfg.Host != nil {
		if req, ok := a.cfg.Host(ctx.Message()); ok {
			if a.fl != nil || a.loading {
				a.hold(ctx, false)
				return
			}
			a.serveHost(ctx, req, ctx.Sender())
			a.settle(ctx)
			return
		}
	}
	// end is whether this message was counted: one of ours (or our start);
	// not a system message, not a stranger's.
	end := counted.Counted(ctx.Message())
	defer func() {
		if end {
			a.cfg.Archetype.Clock.End()
		}
	}()
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.self, a.sys = ctx.Self(), ctx.ActorSystem()
		if !a.loaded {
			a.startLoad()
			return
		}
		a.ensureLoaded(ctx)
		return // the message that made us start says whether we may stop
	case *actor.Stopping:
		a.stopping(ctx)
		a.stopTimers()
		a.handOver()
		return
	case appended:
		if m.f != a.fl {
			return // answered already, while the actor stopped
		}
		a.acked(ctx, m.f, false)
		a.settle(ctx)
		a.replay(ctx)
		return
	case *loaded:
		if !a.loadedMsg(ctx, m) {
			return // not for this actor's load in flight
		}
		if m.f != nil {
			a.settle(ctx)
		} // else: as after Started, the message that made us start says whether we may stop
		a.replay(ctx)
		return
	default:
		if a.fl != nil || a.loading {
			a.hold(ctx, end)
			end = false // counted still: it is handled later
			return
		}
		switch a.handle(ctx, ctx.Message(), ctx.Sender()) {
		case stay:
			return
		case unknown:
			end = false // none of ours sends it, so nobody counted it
			return
		}
	}
	a.settle(ctx)
}

// settle ends the handling of a message: the actor may leave if it is idle
// (maybeLeave), but never with an append or a load in flight.
func (a *Actor) settle(ctx actor.Context) {
	if a.fl == nil && !a.loading {
		a.maybeLeave(ctx)
	}
}

// handled is what handle did with a message.
type handled int

const (
	done    handled = iota // handled; the actor may leave now if idle
	stay                   // handled; not a moment to leave
	unknown                // not a message of ours
)

// handle handles one message that is neither a lifecycle message nor an
// append's answer, with the sender it came from (it may be handled after
// being held, when ctx.Sender() is another's).
func (a *Actor) handle(ctx actor.Context, msg any, sender *actor.PID) handled {
	switch m := msg.(type) {
	case Command:
		a.command(ctx, m, sender)
	case Get:
		if m.Pin && !a.pinned {
			a.pinned = true
			if p, ok := a.cfg.Registry.(Pinner); ok {
				p.Pinned(a.id, a.self)
			}
		}
		if !a.ensureLoaded(ctx) {
			a.respondLoadErr(ctx, sender, nil)
			break
		}
		a.respond(ctx, sender, nil, nil, nil)
	case dueindex.Tick:
		a.tick(ctx, m.At)
	case deadline:
		delete(a.timers, m.runID)
		a.execute(ctx, a.newFlight(afterDeadline, rules.ForceEnd{RunID: m.runID, Reason: m.reason}, context.Background(), a.cfg.Archetype.Clock.Now()))
	case heartbeatDue:
		a.checkHeartbeat(ctx, m.runID)
	case compactNow:
		a.compact(ctx)
	case passivate:
		a.passivate(ctx)
		return stay
	default:
		return unknown
	}
	return done
}

// held is a message that arrived while an append was in flight.
type held struct {
	msg    any
	sender *actor.PID
	end    bool // counted: the clock's End is due once it is handled
}

// hold keeps the message being processed for later (see replay). A counted
// message stays counted on the clock until it is handled.
func (a *Actor) hold(ctx actor.Context, end bool) {
	a.held = append(a.held, held{msg: ctx.Message(), sender: ctx.Sender(), end: end})
}

// replay handles the held messages, in the order they arrived, until one
// of them starts an append (the rest wait for its answer) or none is left.
// Each ends as a message handled in Receive does: its count on the clock
// ends, and the actor may leave.
func (a *Actor) replay(ctx actor.Context) {
	for a.fl == nil && !a.loading && a.heldNext < len(a.held) {
		h := a.held[a.heldNext]
		a.held[a.heldNext] = held{}
		a.heldNext++
		r := done
		if req, ok := a.hostRequest(h.msg); ok {
			a.serveHost(ctx, req, h.sender)
		} else {
			r = a.handle(ctx, h.msg, h.sender)
		}
		if r == done {
			a.settle(ctx)
		}
		if h.end && r != unknown {
			a.cfg.Archetype.Clock.End()
		}
	}
	if a.heldNext == len(a.held) {
		a.held, a.heldNext = a.held[:0], 0
	}
}

// hostRequest recognizes a host actor's message (Config.Host).
func (a *Actor) hostRequest(msg any) (HostRequest, bool) {
	if a.cfg.Host == nil {
		return HostRequest{}, false
	}
	return a.cfg.Host(msg)
}

// stopping is the actor being stopped (the scheduler stops) with an append
// in flight: it waits for the store's answer and does what the answer
// calls for, as the actor would have done before stopping had its append
// been synchronous, but starts no other append (a version conflict is
// answered as an error). The held messages go to the dead letters, as those
// left in the mailbox do (package counted): a requester is answered, a
// counted message uncounted.
func (a *Actor) stopping(ctx actor.Context) {
	if f := a.fl; f != nil {
		if f.reloading {
			// Its read's answer goes to the dead letters.
			a.fl, f.reloading = nil, false
			a.finish(ctx, f, nil, fmt.Errorf("%w: %v", ErrConflictRetries, f.err))
		} else {
			a.acked(ctx, f, true)
		}
	}
	for _, h := range a.held[a.heldNext:] {
		ctx.ActorSystem().DeadLetter.SendUserMessage(a.self, &actor.MessageEnvelope{Message: h.msg, Sender: h.sender})
	}
	a.held, a.heldNext = nil, 0
}

// handOver is the end of an actor stopped from outside (Scheduler.Stop
// stops every task actor, resting or not, before its last snapshot): it
// hands the Registry its state, open runs and all, as a resting actor
// does when it leaves (Registry.Left), so that the snapshot can hold it
// and the next start need not read the task's stream. Only a state known
// to hold the whole stream is handed over: loaded, and no append failed
// since (unsure) — the one in flight as it stopped included, which
// stopping waited for. Otherwise, or when the actor handed its state over
// already (passivate), it tells nothing, and the Registry still counts it
// as an actor whose stream it does not know the end of.
func (a *Actor) handOver() {
	if a.cfg.Registry == nil || a.leave == left || !a.loaded || a.unsure {
		return
	}
	a.leave = left
	a.cfg.Registry.Left(a.id, a.self, true, a.rest(true), a.pos)
}

// serveHost answers a host actor's request: like a Command (or a Get),
// but its outcome is shaped by req.Reply, and a request sent without a
// sender is decided and not answered.
func (a *Actor) serveHost(ctx actor.Context, req HostRequest, sender *actor.PID) {
	var r Reply
	if !a.ensureLoaded(ctx) {
		r = Reply{Err: a.loadErr}
	} else {
		r = Reply{State: a.state, Position: a.pos}
		var cmd rules.Command
		if req.Command != nil {
			cmd, r.Err = req.Command(a.state)
		}
		if cmd != nil && r.Err == nil {
			f := a.newFlight(afterHost, cmd, context.Background(), a.cfg.Archetype.Clock.Now())
			f.sender, f.hostReply = sender, req.Reply
			a.execute(ctx, f)
			return
		}
	}
	if sender != nil {
		ctx.Send(sender, req.Reply(a.id, r))
	}
}

// command decides m.Cmd and answers sender.
func (a *Actor) command(ctx actor.Context, m Command, sender *actor.PID) {
	cctx := m.Ctx
	if cctx == nil {
		cctx = context.Background()
	}
	if err := cctx.Err(); err != nil {
		a.respond(ctx, sender, m.answer, nil, err)
		return // an actor started for this command may leave again
	}
	if !a.ensureLoaded(ctx) {
		a.respondLoadErr(ctx, sender, m.answer)
		return
	}
	if rs, ok := m.Cmd.(rules.RequestStart); ok {
		rs.Buffered = a.buffered // at most one run waits so (rules.Buffer)
		m.Cmd = rs
	}
	f := a.newFlight(afterCommand, m.Cmd, cctx, a.cfg.Archetype.Clock.Now())
	f.sender, f.answer, f.runner = sender, m.answer, m.Runner
	a.execute(ctx, f)
}

// tick decides a tick of the due-time index at its instant.
func (a *Actor) tick(ctx actor.Context, at time.Time) {
	if !a.ensureLoaded(ctx) {
		a.retryTick(a.loadErr)
		return
	}
	// R1: the decision is taken at the tick's own instant, whenever this
	// message is processed.
	a.execute(ctx, a.newFlight(afterTick, rules.Tick{}, context.Background(), at))
}

// tickFailed logs a tick's failure and tells the index when the task is
// due, since the index forgot the task when it sent the tick. An actor
// that lost its state (its read after a version conflict failed) hands
// the tick to the Registry to retry instead.
func (a *Actor) tickFailed(ctx actor.Context, err error) {
	if !a.loaded {
		a.retryTick(err)
		return
	}
	a.cfg.Archetype.Failed(slog.LevelError, "tick failed", err, "task_id", a.id)
	a.doEffects(ctx, rules.Tick{}, nil)
}

// retryTick hands a tick the actor cannot decide, for want of its task's
// state, to the Registry to retry (Retrier); without one it is logged and
// lost, the task unscheduled until a restart.
func (a *Actor) retryTick(err error) {
	if r, ok := a.cfg.Registry.(Retrier); ok {
		r.RetryTick(a.id, err)
		return
	}
	a.cfg.Archetype.Logger.Error("tick failed", "task_id", a.id, "err", err)
}

// respond answers sender with the events recorded, the state after them
// and the error. (Not ctx.Respond: the message answered may be one held
// while an append was in flight, or the append's own answer.) Like every function that copies the
// whole State, it is kept out of the frames the actor decides under: a
// Reply built there would sit on the stack through every decision, and
// the goroutine processing the mailbox would outgrow its stack for it
// (docs/performance.md).
//
//go:noinline
func (a *Actor) respond(ctx actor.Context, sender *actor.PID, ans *answer, evs []events.Event, err error) {
	switch {
	case ans != nil: // sent by Post
		ans.reply = Reply{Events: evs, State: a.state, Position: a.pos, Err: err}
		ans.answer(false)
	case sender != nil: // sent without a sender: nobody to answer
		ctx.Send(sender, Reply{Events: evs, State: a.state, Position: a.pos, Err: err})
	}
}

// respondLoadErr answers sender with the error of the failed load.
//
//go:noinline
func (a *Actor) respondLoadErr(ctx actor.Context, sender *actor.PID, ans *answer) {
	switch {
	case ans != nil:
		ans.reply = Reply{Err: a.loadErr}
		ans.answer(false)
	case sender != nil:
		ctx.Send(sender, Reply{Err: a.loadErr})
	}
}

// respondHost answers a host request that decided cmd with its outcome.
//
//go:noinline
func (a *Actor) respondHost(ctx actor.Context, f *flight, evs []events.Event, err error) {
	if f.sender != nil {
		ctx.Send(f.sender, f.hostReply(a.id, Reply{Events: evs, State: a.state, Position: a.pos, Err: err}))
	}
}

// idle reports whether the actor may stop: its task needs no actor, or its
// load failed (the next command starts a new actor that tries again), or —
// with Config.Rest — the task rests and the actor is not pinned. Not
// inlined: rules.Idle takes a copy of the state (see respond).
//
//go:noinline
func (a *Actor) idle() bool {
	if !a.loaded {
		return true
	}
	if len(a.timers) != 0 || len(a.beatTimers) != 0 {
		return false
	}
	return rules.Idle(&a.state) || (a.cfg.Rest && !a.pinned && rules.Rests(&a.state))
}

// rest is what the actor hands the Registry when it stops: the state of a
// resting task, or of one deleted with nothing open; nil when there is no
// task or its load failed (see Registry.Left). Its own state, not a copy:
// a copy for every run was 5% of the bytes a wave allocated.
func (a *Actor) rest(stop bool) *rules.State {
	if !stop || !a.loaded || a.state.Status == rules.StatusNone {
		return nil
	}
	return &a.state
}

// maybeLeave starts leaving once the actor is idle. Ticks reach a task
// through the Registry as commands do, so the Leave protocol orders them
// all with the actor's last message.
//
// That last message is needed only when a message waits in the mailbox
// (or among the held ones), sent before the Registry stopped handing the
// actor out: the actor must handle it first. When none waits — the
// Registry's callers send while holding what Leave holds, so none can
// come meanwhile — the actor passivates at once, without the message:
// for a resting task, one message fewer for every run.
func (a *Actor) maybeLeave(ctx actor.Context) {
	if a.leave != staying || !a.idle() {
		return
	}
	a.leave = leaving
	if a.cfg.Registry == nil {
		a.leaveSend()
	} else {
		a.cfg.Registry.Leave(a.id, a.self, a.leaveFn)
	}
	if a.leaveNow {
		a.leaveNow = false
		a.passivate(ctx)
	}
}

// leaveSend is Leave's send (a.leaveFn): it queues the actor's last
// message, or notes that none is needed (see maybeLeave).
func (a *Actor) leaveSend() {
	if a.mb != nil && a.mb.userN.Load() == 0 && a.heldNext == len(a.held) {
		a.leaveNow = true
		return
	}
	counted.Send(a.cfg.Archetype.Clock, a.sys.Root, a.self, passivate{})
}

// passivate is the actor's last message handled (or its equivalent, see
// maybeLeave): it stops if it is still idle, handing the Registry the
// resting task's state; else it stays.
func (a *Actor) passivate(ctx actor.Context) {
	if a.leave != leaving {
		return
	}
	stop := a.idle()
	if a.cfg.Registry != nil {
		a.cfg.Registry.Left(a.id, a.self, stop, a.rest(stop), a.pos)
	}
	a.leave = staying
	if stop {
		a.leave = left
		a.stopTimers()
		ctx.Stop(a.self)
	}
}

// ensureLoaded reports whether the state is loaded (a load in flight, or
// one that failed, is not: a.loadErr says why) and, once it is, recovers
// its open runs (once).
func (a *Actor) ensureLoaded(ctx actor.Context) bool {
	if a.recovered {
		return true
	}
	if !a.loaded {
		return false
	}
	a.loadErr, a.recovered = nil, true
	if a.tracked && len(a.state.Open) == 0 {
		return true // nothing to recover, and the index holds the task
	}
	eff := rules.Recover(a.state)
	if a.tracked {
		eff = untracked(eff)
	}
	a.do(ctx, eff)
	return true
}

// untracked is effects without their Track: the index holds the task as
// the state says already.
func untracked(effects []rules.Effect) []rules.Effect {
	out := effects[:0]
	for _, e := range effects {
		if _, ok := e.(rules.Track); !ok {
			out = append(out, e)
		}
	}
	return out
}

// execute is the actor loop for f's command: decide at f's instant, then
// append with the stream's expected version. The rest — evolve the state,
// do the effects, finish what f is for — happens when the store answers
// (acked); a decision that records nothing finishes at once.
func (a *Actor) execute(ctx actor.Context, f *flight) {
	now := a.cfg.Archetype.Clock.Now()
	evs, err := rules.Decide(a.state, f.cmd, f.at)
	if err != nil || len(evs) == 0 {
		if err == nil {
			a.doEffects(ctx, f.cmd, nil)
		}
		a.finish(ctx, f, nil, err)
		return
	}
	f.evs, f.now = evs, now
	if err := a.append(f); err != nil {
		a.finish(ctx, f, nil, fmt.Errorf("task: append to %s: %w", a.stream, err))
	}
}

// acked is the store's answer to f's append: apply the events and finish,
// or after a version conflict reload the stream and decide again (a bounded
// number of times; not while stopping). An append that failed leaves the
// actor unsure of its stream until it reloads it.
func (a *Actor) acked(ctx actor.Context, f *flight, stopping bool) {
	<-f.acked
	a.fl = nil
	f.cancel()
	f.cancel = nil
	res, err := f.res, f.err
	if errors.Is(err, events.ErrVersionConflict) && f.attempt < maxConflictRetries && !stopping {
		a.cfg.Archetype.Logger.Warn("version conflict, reloading", "task_id", a.id, "stream", a.stream, "err", err)
		a.startReload(f) // decided again once the stream's new events are read
		return
	}
	if err != nil {
		a.unsure = true
	}
	if errors.Is(err, events.ErrVersionConflict) {
		a.finish(ctx, f, nil, fmt.Errorf("%w: %v", ErrConflictRetries, err))
		return
	}
	if err != nil {
		a.finish(ctx, f, nil, fmt.Errorf("task: append to %s: %w", a.stream, err))
		return
	}
	a.apply(ctx, f.cmd, f.evs, res, f.now)
	a.finish(ctx, f, f.evs, nil)
}

// finish ends f with the events it recorded or its error, as the message
// that decided it asks: answer the command's sender, report a failed tick,
// log a failed forced end.
func (a *Actor) finish(ctx actor.Context, f *flight, evs []events.Event, err error) {
	switch f.after {
	case afterCommand:
		a.noteRunner(f.cmd, f.runner, evs)
		a.respond(ctx, f.sender, f.answer, evs, err)
	case afterHost:
		a.respondHost(ctx, f, evs, err)
	case afterTick:
		if err != nil && !errors.Is(err, rules.ErrNotCreated) {
			a.tickFailed(ctx, err)
		}
	case afterCompact:
		if err != nil {
			a.cfg.Archetype.Logger.Warn("history compaction failed", "task_id", a.id, "stream", a.stream, "err", err)
		}
	case afterDeadline, afterHeartbeat:
		if err != nil && !errors.Is(err, rules.ErrUnknownRun) {
			fe := f.cmd.(rules.ForceEnd)
			a.cfg.Archetype.Failed(slog.LevelError, "forced end failed", err, "task_id", a.id, "run_id", fe.RunID, "reason", fe.Reason)
		}
	}
	f.release()
}

// append hands f's events, decided at f.now, to the store with the
// stream's expected version, and marks f in flight: counted on the clock
// until its answer (an appended message) is handled.
func (a *Actor) append(f *flight) error {
	expected := events.NoStream
	if a.state.Exists() {
		expected = events.Exactly(a.state.Version)
	}
	// The store holds proposed until it answers f (f.answered), and f is
	// released, for another flight to reuse it, only after that.
	proposed := slices.Grow(f.proposed[:0], len(f.evs))[:len(f.evs)]
	f.proposed = proposed
	for i, e := range f.evs {
		// events.Propose, with the ID derived rather than random.
		typ, schema, data, err := events.Default.Encode(e)
		if err != nil {
			return err
		}
		proposed[i] = events.Proposed{ID: events.ContentID(a.idScope, expected, i, typ, data), Type: typ, Schema: schema,
			At: f.now.UTC(), Data: data}
	}
	actx, cancel := a.appendCtx(f)
	f.cancel, f.self, f.sys = cancel, a.self, a.sys
	a.fl = f
	a.cfg.Archetype.Clock.Begin()
	events.AppendAsync(actx, a.cfg.Store, a.stream, expected, proposed, f.done)
	return nil
}

// apply evolves the state by evs, recorded as res says, then does the
// effects cmd and evs call for.
func (a *Actor) apply(ctx actor.Context, cmd rules.Command, evs []events.Event, res events.AppendResult, now time.Time) {
	first := res.Version + 1 - uint64(len(evs))
	for i, e := range evs {
		a.state.Apply(events.Metadata{Stream: a.stream, Version: first + uint64(i), At: now}, e) // rules.Evolve in place
	}
	a.pos = res.Position
	a.logEnds(evs)
	if a.cfg.RecordEvery > 0 && a.state.Version-a.recorded >= uint64(a.cfg.RecordEvery) {
		a.record()
	}
	a.stopRunners(ctx, evs)
	a.doEffects(ctx, cmd, evs)
	a.retain(now)
}

// logEnds logs, at WARN, each run the actor has just recorded forced to
// end (timebox, heartbeat, process lost) or dropped, with the numbers the
// event carries: an operator tailing the log learns that a job keeps
// timing out or being refused. This is the one place the actor learns its
// own durable decisions, so each such event is logged exactly once by the
// actor that appended it (a reload, which reads events, logs nothing).
func (a *Actor) logEnds(evs []events.Event) {
	log := a.cfg.Archetype.Logger
	for _, e := range evs {
		switch e := e.(type) {
		case events.RunForcedEnd:
			attrs := []any{"task_id", a.id, "run_id", e.RunID, "run", e.Run, "reason", e.Reason,
				"deadline", e.Deadline.UTC(), "detail", e.Detail}
			if e.RetryAt != nil {
				attrs = append(attrs, "retry_at", e.RetryAt.UTC())
			}
			if e.Reason == events.ForcedReplaced {
				// The task's own overlap policy (cancel_other) chose it:
				// nothing for an operator to act on.
				log.Info("run forced to end", attrs...)
				continue
			}
			log.Warn("run forced to end", attrs...)
		case events.RunDropped:
			attrs := []any{"task_id", a.id, "run_id", e.RunID, "run", e.Run, "reason", e.Reason, "detail", e.Detail}
			if e.LastRun != nil {
				attrs = append(attrs, "last_run", e.LastRun.UTC(),
					"since_last_start", time.Duration(e.SinceLastStart), "needed", time.Duration(e.Needed))
			}
			log.Warn("run dropped", attrs...)
		}
	}
}

// doEffects does the effects of cmd and evs on the state (see do).
func (a *Actor) doEffects(ctx actor.Context, cmd rules.Command, evs []events.Event) {
	a.do(ctx, a.effects(cmd, evs))
	clear(a.effs) // what the effects carried goes with them
	a.release(ctx)
}

// release puts the buffered run back on the queue once no run of the task
// is running (overlap buffer_one), and forgets it once it is no longer
// waiting.
func (a *Actor) release(ctx actor.Context) {
	if a.buffered == uuid.Nil {
		return
	}
	r, ok := a.state.Run(a.buffered)
	if !ok || r.Started {
		a.buffered = uuid.Nil
		return
	}
	for _, o := range a.state.Open {
		if o.Started && a.state.Current(o) {
			return
		}
	}
	a.buffered = uuid.Nil
	a.enqueue(ctx, r)
}

// enqueue puts waiting run r on its queue.
func (a *Actor) enqueue(ctx actor.Context, r rules.Run) {
	m := worker.Enqueued{TaskID: a.id, Task: a.self, RunID: r.ID, Run: r.Number,
		Priority: r.Priority, Due: r.Due, EnqueuedAt: r.EnqueuedAt, Queue: a.state.Spec.Policy.QueueName(),
		Attempt: r.Attempt, RetryOf: r.RetryOf, Trigger: r.Trigger}
	if a.cfg.Enqueue == nil || !a.cfg.Enqueue(m) {
		counted.Send(a.cfg.Archetype.Clock, ctx, a.cfg.Queue, m)
	}
}

// effects is rules.Effects of cmd and evs on the state, in a frame of its
// own (see respond), in the actor's one slice of effects.
//
//go:noinline
func (a *Actor) effects(cmd rules.Command, evs []events.Event) []rules.Effect {
	a.effs = rules.AppendEffects(a.effs[:0], cmd, &a.state, evs)
	return a.effs
}

// do carries out effects, in order, once the events that call for them are
// durable. Passivate is left to maybeLeave, which every message ends with.
func (a *Actor) do(ctx actor.Context, effects []rules.Effect) {
	for _, e := range effects {
		switch e := e.(type) {
		case rules.Enqueue:
			r, ok := a.state.Run(e.RunID)
			if !ok {
				continue // not open: the rules name only open runs
			}
			a.enqueue(ctx, r)
		case rules.Buffer:
			a.buffered = e.RunID
		case rules.ArmDeadline:
			a.armDeadline(e.RunID, e.Deadline, e.Reason)
		case rules.ArmHeartbeat:
			// The start counts as the first heartbeat.
			if a.beats == nil {
				a.beats = map[uuid.UUID]time.Time{}
			}
			a.beats[e.RunID] = e.StartedAt
			a.armHeartbeat(e.RunID, e.StartedAt.Add(e.Timeout))
		case rules.NoteHeartbeat:
			if _, ok := a.beats[e.RunID]; ok {
				a.beats[e.RunID] = a.cfg.Archetype.Clock.Now()
			}
		case rules.StopTimer:
			a.stopTimer(e.RunID)
		case rules.Track:
			counted.Send(a.cfg.Archetype.Clock, ctx, a.cfg.Shard, dueindex.Track{TaskID: a.id, NextRun: e.NextRun, Active: e.Active,
				Queue: a.state.Spec.Policy.QueueName()})
		case rules.Passivate:
		}
	}
}

// noteRunner remembers the worker that asked to start a run that started.
func (a *Actor) noteRunner(cmd rules.Command, runner *actor.PID, evs []events.Event) {
	start, ok := cmd.(rules.RequestStart)
	if !ok || runner == nil {
		return
	}
	for _, e := range evs {
		if s, ok := e.(events.RunStarted); ok && s.RunID == start.RunID {
			a.runners[s.RunID] = runner
		}
	}
}

// stopRunners tells the worker executing each run forced to end by evs
// that its outcome is recorded, so that it cancels the handler's context
// (worker.StopRun). Whoever decided the forced end — the actor's deadline
// timer or heartbeat watch — the worker's handler would otherwise run on,
// holding its slot, alongside the run's retry (R13). A worker that
// reported the forced end itself ignores it.
func (a *Actor) stopRunners(ctx actor.Context, evs []events.Event) {
	for _, e := range evs {
		f, ok := e.(events.RunForcedEnd)
		if !ok {
			continue
		}
		if pid := a.runners[f.RunID]; pid != nil {
			delete(a.runners, f.RunID)
			counted.Send(a.cfg.Archetype.Clock, ctx, pid, worker.StopRun{RunID: f.RunID, Reason: f.Reason})
		}
	}
}

func (a *Actor) armDeadline(id uuid.UUID, at time.Time, reason string) {
	if t, ok := a.timers[id]; ok {
		t.Stop()
	}
	c, sys, self := a.cfg.Archetype.Clock, a.sys, a.self
	a.timers[id] = c.AfterFunc(at.Sub(c.Now()), func() {
		counted.Send(c, sys.Root, self, deadline{runID: id, reason: reason})
	})
}

// armHeartbeat sets the timer that checks run id's heartbeats at at. The
// timer is not moved by every heartbeat (they are frequent): when it fires,
// checkHeartbeat sets it again from the last one.
func (a *Actor) armHeartbeat(id uuid.UUID, at time.Time) {
	if t, ok := a.beatTimers[id]; ok {
		t.Stop()
	}
	c, sys, self := a.cfg.Archetype.Clock, a.sys, a.self
	if a.beatTimers == nil {
		a.beatTimers = map[uuid.UUID]clock.Timer{}
	}
	a.beatTimers[id] = c.AfterFunc(at.Sub(c.Now()), func() {
		counted.Send(c, sys.Root, self, heartbeatDue{runID: id})
	})
}

// checkHeartbeat is R16 when run id's heartbeat timer fires: a run whose
// last heartbeat is heartbeat_timeout ago (the task's timeout now: an
// update may have changed it) is forced to end — the rules check it again
// against the time given — and R13 decides its retry; one that heartbeated
// since is checked again a timeout after that heartbeat.
func (a *Actor) checkHeartbeat(ctx actor.Context, id uuid.UUID) {
	delete(a.beatTimers, id)
	last, ok := a.beats[id]
	if !ok {
		return
	}
	timeout := a.state.Spec.Policy.HeartbeatTimeout.D()
	if r, open := a.state.Run(id); !open || !r.Started || timeout <= 0 {
		delete(a.beats, id) // ended, or no longer watched
		return
	}
	now := a.cfg.Archetype.Clock.Now()
	if due := last.Add(timeout); now.Before(due) {
		a.armHeartbeat(id, due)
		return
	}
	a.execute(ctx, a.newFlight(afterHeartbeat, rules.ForceEnd{RunID: id, Reason: events.ForcedHeartbeat, LastHeartbeat: last}, context.Background(), now))
}

func (a *Actor) stopTimer(id uuid.UUID) {
	if t, ok := a.timers[id]; ok {
		t.Stop()
		delete(a.timers, id)
	}
	if t, ok := a.beatTimers[id]; ok {
		t.Stop()
		delete(a.beatTimers, id)
	}
	delete(a.beats, id)
	delete(a.runners, id)
}

// stopTimers stops every timer: the actor is stopping.
func (a *Actor) stopTimers() {
	for id, t := range a.timers {
		t.Stop()
		delete(a.timers, id)
	}
	for id, t := range a.beatTimers {
		t.Stop()
		delete(a.beatTimers, id)
	}
	clear(a.beats)
	clear(a.runners)
}

// Ask sends cmd to the task actor at pid and waits for its Reply, at most
// timeout and no longer than ctx lasts. The error is the transport's, or
// else the reply's rejection. A RequestStart names from's actor (a worker)
// as the run's Runner.
func Ask(ctx context.Context, c clock.Clock, from actor.SenderContext, pid *actor.PID, cmd rules.Command, timeout time.Duration) (reply Reply, err error) {
	if err := ctx.Err(); err != nil {
		return Reply{}, fmt.Errorf("task: ask: %w", err)
	}
	return post(ctx, c, from, pid, cmd).await(ctx, timeout)
}

// Post sends cmd to the task actor at pid as Ask does, and returns once
// the command is in the actor's mailbox — so that whatever from sends
// after it reaches the actor after it — with the function that waits for
// the Reply. The wait must be called once. The actor answers through a
// reusable slot (answer), not a protoactor future.
func Post(ctx context.Context, c clock.Clock, from actor.SenderContext, pid *actor.PID, cmd rules.Command, timeout time.Duration) (wait func() (Reply, error)) {
	return PostCommand(ctx, c, from, pid, cmd, timeout).Wait
}

// Pending is a command sent by PostCommand; Wait waits for its Reply.
type Pending struct {
	w       *answer
	ctx     context.Context
	timeout time.Duration
}

// PostCommand is Post, returning the command sent as a Pending rather than
// a function: a caller that wraps the wait in a function of its own (a
// worker.PostFunc) makes one closure per command, not two.
func PostCommand(ctx context.Context, c clock.Clock, from actor.SenderContext, pid *actor.PID, cmd rules.Command, timeout time.Duration) Pending {
	return Pending{w: post(ctx, c, from, pid, cmd), ctx: ctx, timeout: timeout}
}

// Wait waits for the Reply as Post's wait does; call it once.
func (p Pending) Wait() (Reply, error) { return p.w.await(p.ctx, p.timeout) }

// post sends cmd to the task actor at pid with an answer, which it returns
// (see Post).
func post(ctx context.Context, c clock.Clock, from actor.SenderContext, pid *actor.PID, cmd rules.Command) *answer {
	msg := Command{Ctx: ctx, Cmd: cmd}
	if _, start := cmd.(rules.RequestStart); start {
		msg.Runner = from.Self() // a worker: told if the actor forces the run to end
	}
	watchDeadLetters(from.ActorSystem())
	w := answers.Get().(*answer)
	msg.answer = w
	counted.Send(c, from, pid, msg)
	return w
}

// await waits for the Reply to the command w was sent with (see Post), at
// most timeout and no longer than ctx lasts, and gives w back.
func (w *answer) await(ctx context.Context, timeout time.Duration) (reply Reply, err error) {
	lost, err := w.wait(ctx, timeout)
	if err == nil && lost {
		w.take(nil)
		err = actor.ErrDeadLetter
	}
	if err != nil {
		return Reply{}, fmt.Errorf("task: ask: %w", err)
	}
	w.take(&reply)
	return reply, reply.Err
}
