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
// An append that fails (the store is away, or its answer was lost) leaves
// no run open (R9, without a restart: mend.go). A run's outcome whose
// append failed is kept and decided again once the store answers; a run
// whose start failed is answered as not started (worker.ErrRecordLater)
// and put back on the queue; the actor reads what the store took of its
// failed appends, puts the runs it learns were enqueued on the queue and
// arms the deadline of those it learns were started, and it stays (no
// rest, no record handed over) until it has. Each run so kept is logged at
// WARN once.
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
// Runtime: the scheduler spawns task actors under a taskrt.Runtime
// (NewRuntime, Config.Runtime): their mailbox, and the reuse of a stopped
// actor's object by the next (pool.go). What that leans on in protoactor
// is pinned by taskrt's contract tests, and a message for an object's
// earlier generation is dropped, never handled (decision 0028).
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
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/task/taskrt"
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

// Actor is one task's actor. Build it with New.
//
// Under a Runtime (Config.Runtime) the object is reused once the actor has
// stopped (pool.go): Life is its generation, which the runtime keeps from
// one task to the next; incarnation is all the actor holds of its task,
// reset for the next.
type Actor struct {
	taskrt.Life
	incarnation
}

// incarnation is what a task actor holds, from its start to its Stopped.
type incarnation struct {
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
	// mend is what the actor owes its runs after failed appends: kept
	// outcomes, runs to put back on the queue (mend.go).
	mend mending
	// idScope is the stream, a NUL and a random ID of this actor (its
	// incarnation), which tells its decisions apart from those of another
	// actor of the same task: event IDs derive from it, so a retry by this
	// actor is recognised as such by the store while the same decision made
	// by another actor at the same instant still conflicts.
	idScope string
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
		if m.f != nil || m.refresh != nil || m.mend {
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
		if m.Unpin && !m.Pin {
			a.pinned = false
		}
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
		if _, ok := a.mend.outcomes[m.runID]; ok {
			a.retryKept(ctx, m.runID) // the run's own outcome, kept (mend.go)
			break
		}
		a.execute(ctx, a.newFlight(afterDeadline, rules.ForceEnd{RunID: m.runID, Reason: m.reason}, context.Background(), a.cfg.Archetype.Clock.Now()))
	case heartbeatDue:
		a.checkHeartbeat(ctx, m.runID)
	case compactNow:
		a.compact(ctx)
	case mendNow:
		a.startMend()
	case retryOutcome:
		a.retryKept(ctx, m.run)
	case Refresh:
		a.refresh(ctx, m, sender)
	case passivate:
		a.passivate(ctx)
		return stay
	default:
		return unknown
	}
	return done
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
		err = fmt.Errorf("%w: %v", ErrConflictRetries, err)
		if !stopping {
			// Unsure of its stream: mending reads it again (and decides a
			// kept start or outcome again), so the actor may rest again.
			err = a.keepRun(f, err)
			a.armMend(f.after == afterMend)
		}
		a.finish(ctx, f, nil, err)
		return
	}
	if err != nil {
		err = fmt.Errorf("task: append to %s: %w", a.stream, err)
		if !stopping {
			err = a.keep(f, err) // mend.go
		}
		a.finish(ctx, f, nil, err)
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
	case afterMend:
		a.mendDone(f, evs, err)
	case afterDeadline, afterHeartbeat:
		if err != nil && !errors.Is(err, rules.ErrUnknownRun) && !errors.Is(err, worker.ErrRecordLater) {
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
	a.forget(evs)
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
