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
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

// Mending after a failed append (R9 without a restart).
//
// A run's start or outcome whose append fails — the store is away, or its
// answer was lost — would leave the run open until a restart's recovery
// ended it. Instead the actor keeps what it owes the run and mends once
// the store answers again:
//
//   - a run's outcome (a worker's Complete or Fail, a forced end) is kept
//     and decided again, against the state then, until it is recorded; a
//     run whose end is recorded meanwhile (the append had landed after
//     all) is not ended twice: the new decision finds it ended, or its
//     append meets a version conflict and the reload shows it ended, or —
//     decided the same, at the same version — its events have the IDs of
//     those that landed (events.ContentID), which every store answers as
//     the retry of what it took (storetest's IdempotentRetry). While
//     kept, the run's deadline and heartbeat watch decide nothing of their
//     own: they try the kept outcome again, which is what the run did.
//   - a run whose start failed is answered as not started (the worker
//     drops it, with worker.ErrRecordLater) and put back on the queue
//     once the store answers; a worker then asks again, and the rules
//     decide its start as for any run (R3, R7, R12, R14).
//
// The same holds when the append met a version conflict and the read of
// the stream after it failed (the actor then lost its state, and mending
// reads it whole), within the command's own context or not, or when the
// conflicts persisted (ErrConflictRetries).
//
// Mending begins after every failed append, at a timer (mendFirst, doubled
// at each failure up to mendMax): the actor reads the stream's events
// after its version — the store may hold some it lacks, its failed append
// included — then puts back on the queue its runs whose start failed and
// the runs it learns were enqueued, arms the deadline (process_lost, as
// recovery does) of a run it learns was started, which no worker of its
// executes, tells the due-time index when the task is due, and decides
// its kept outcomes again, one after the other. A read or an append that
// fails sets the timer again. Each run so kept is logged at WARN once,
// and at INFO when what was kept is recorded.
//
// Nothing of this survives the actor: a restart's recovery (R9) ends what
// is left.
const (
	mendFirst = 500 * time.Millisecond
	mendMax   = 15 * time.Second
)

// mending is what the actor owes its runs after failed appends.
type mending struct {
	// outcomes are the kept outcomes, by run.
	outcomes map[uuid.UUID]rules.Command
	// requeue are the runs to put back on the queue: their start failed,
	// or a read after a failed append found them enqueued.
	requeue []uuid.UUID
	// warned are the runs logged at WARN.
	warned map[uuid.UUID]struct{}
	timer  clock.Timer
	delay  time.Duration
}

// mendNow is the mending timer's message to the actor.
type mendNow struct{}

// retryOutcome asks the actor to decide run's kept outcome again.
type retryOutcome struct{ run uuid.UUID }

// kept is the error a command's sender gets for a start or an outcome the
// actor keeps (worker.ErrRecordLater, and the store's error).
func kept(err error) error { return fmt.Errorf("%w: %w", worker.ErrRecordLater, err) }

// keep notes what f, whose append failed with err, owes its run (see
// mending), and arms the mending timer; it returns the error f's sender
// gets.
func (a *Actor) keep(f *flight, err error) error {
	defer a.armMend(f.after == afterMend)
	switch c := f.cmd.(type) {
	case rules.RequestStart:
		a.requeueRun(c.RunID)
		a.warnKept(c.RunID, "run start not recorded: the run goes back on the queue once the store answers", "start", err)
		return kept(err)
	case rules.Complete, rules.Fail, rules.ForceEnd:
		id := runOf(c)
		old, ok := a.mend.outcomes[id]
		_, oldForced := old.(rules.ForceEnd)
		_, forced := c.(rules.ForceEnd)
		if !ok || (oldForced && !forced) {
			// A worker's outcome says more than a forced end the actor
			// decided while the worker's was on its way.
			if a.mend.outcomes == nil {
				a.mend.outcomes = map[uuid.UUID]rules.Command{}
			}
			a.mend.outcomes[id] = c
		}
		a.warnKept(id, "run outcome not recorded: kept, to be recorded once the store takes appends", outcomeName(c), err)
		return kept(err)
	}
	return err
}

// keepRun keeps f's start or outcome, not recorded for err though the
// store may answer again — the read after a version conflict failed, or
// the conflicts persisted — as keep does after a failed append; another
// command's err is returned as is.
func (a *Actor) keepRun(f *flight, err error) error {
	switch f.cmd.(type) {
	case rules.RequestStart, rules.Complete, rules.Fail, rules.ForceEnd:
		return a.keep(f, err)
	}
	return err
}

// warnKept logs, once for run id, that the actor keeps what it owes it.
func (a *Actor) warnKept(id uuid.UUID, msg, what string, err error) {
	if _, ok := a.mend.warned[id]; ok {
		return
	}
	if a.mend.warned == nil {
		a.mend.warned = map[uuid.UUID]struct{}{}
	}
	a.mend.warned[id] = struct{}{}
	attrs := []any{"task_id", a.id, "run_id", id, "kept", what, "err", err}
	if r, ok := a.state.Run(id); ok {
		attrs = append(attrs, "run", r.Number)
	}
	a.cfg.Archetype.Logger.Warn(msg, attrs...)
}

// runOf is the run an outcome command is about.
func runOf(c rules.Command) uuid.UUID {
	switch c := c.(type) {
	case rules.Complete:
		return c.RunID
	case rules.Fail:
		return c.RunID
	case rules.ForceEnd:
		return c.RunID
	}
	return uuid.Nil
}

// outcomeName names an outcome command for the log.
func outcomeName(c rules.Command) string {
	switch c := c.(type) {
	case rules.Complete:
		return "completed"
	case rules.Fail:
		return "failed"
	case rules.ForceEnd:
		return "forced_end:" + c.Reason
	}
	return fmt.Sprintf("%T", c)
}

// armMend sets the mending timer unless it is set: at mendFirst after a
// success, else at twice the last delay (at most mendMax) when again.
func (a *Actor) armMend(again bool) {
	if a.mend.timer != nil || a.self == nil {
		return
	}
	switch {
	case !again || a.mend.delay == 0:
		a.mend.delay = mendFirst
	default:
		a.mend.delay = min(2*a.mend.delay, mendMax)
	}
	c, sys, self := a.cfg.Archetype.Clock, a.sys, a.self
	a.mend.timer = c.AfterFunc(a.mend.delay, func() { counted.Send(c, sys.Root, self, mendNow{}) })
}

// owes reports whether the actor keeps something for a run.
func (a *Actor) owes() bool { return len(a.mend.outcomes) > 0 || len(a.mend.requeue) > 0 }

// startMend reads the stream's events after the actor's version (the
// whole stream when the actor lost its state), holding messages until the
// answer (mended).
func (a *Actor) startMend() {
	a.mend.timer = nil
	a.loading = true
	c := a.cfg.Archetype.Clock
	c.Begin() // ended when the loaded message is handled (or dead-lettered)
	var from uint64
	whole := !a.loaded
	if !whole && a.state.Exists() {
		from = a.state.Version + 1
	}
	store, stream, timeout, self, sys := a.cfg.Store, a.stream, a.cfg.StoreTimeout, a.self, a.sys
	go func() {
		rctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		m := &loaded{mend: true}
		if whole {
			m.st, m.pos, m.err = readWhole(rctx, store, stream)
			if errors.Is(m.err, events.ErrStreamNotFound) {
				m.st, m.pos, m.err = rules.State{}, events.Position{}, nil
			}
			sys.Root.Send(self, m)
			return
		}
		m.recs, m.err = store.ReadStream(rctx, stream, from, 0)
		if errors.Is(m.err, events.ErrStreamNotFound) {
			m.recs, m.err = nil, nil
		}
		if m.err == nil {
			m.evs = make([]events.Event, len(m.recs))
			for i, r := range m.recs {
				if m.evs[i], m.err = events.Decode(r); m.err != nil {
					break
				}
			}
		}
		if m.err != nil {
			m.err = fmt.Errorf("task: mend %s after version %d: %w", stream, from, m.err)
		}
		sys.Root.Send(self, m)
	}()
}

// mended takes in a mending read (see mending): apply what the store held
// that the actor lacked, put runs back on the queue, arm the deadlines of
// runs started with no timer, tell the index, and decide the kept outcomes
// again.
func (a *Actor) mended(ctx actor.Context, m *loaded) {
	a.loading = false
	if m.err != nil {
		a.armMend(true)
		return
	}
	if !a.loaded {
		a.state, a.pos, a.loaded, a.recorded = m.st, m.pos, true, m.st.Version
		a.loadErr = nil
		for _, r := range a.state.Open {
			if !r.Started {
				a.requeueRun(r.ID) // it may be on the queue already: a second ask finds it started
			}
		}
	} else {
		a.learn(ctx, m.recs, m.evs)
	}
	a.unsure = false // the state is the stream's fold again
	if !a.state.Exists() {
		clear(a.mend.outcomes)
		a.mend.requeue = a.mend.requeue[:0]
		return
	}
	var eff []rules.Effect
	for _, id := range a.mend.requeue {
		if r, ok := a.state.Run(id); ok && !r.Started && a.buffered != id {
			eff = append(eff, rules.Enqueue{RunID: id})
		}
	}
	a.mend.requeue = a.mend.requeue[:0]
	for _, r := range a.state.Open {
		if _, ok := a.mend.outcomes[r.ID]; ok || !r.Started {
			continue
		}
		if _, armed := a.timers[r.ID]; !armed {
			// Started in the log, and no worker of this actor's runs it:
			// its start's answer was lost (the worker dropped the run).
			eff = append(eff, rules.ArmDeadline{RunID: r.ID, Deadline: r.Deadline, Reason: events.ForcedProcessLost})
		}
	}
	for _, e := range rules.Recover(a.state) {
		if t, ok := e.(rules.Track); ok {
			eff = append(eff, t)
		}
	}
	a.do(ctx, eff)
	ids := make([]uuid.UUID, 0, len(a.mend.outcomes))
	for id := range a.mend.outcomes {
		if r, ok := a.state.Run(id); !ok || !r.Started {
			delete(a.mend.outcomes, id) // ended meanwhile (its append landed)
			delete(a.mend.warned, id)
			continue
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		a.mend.delay = 0 // nothing owed: a later failure starts again from mendFirst
	}
	slices.SortFunc(ids, func(x, y uuid.UUID) int { return slices.Compare(x[:], y[:]) })
	c := a.cfg.Archetype.Clock
	for _, id := range ids {
		counted.Send(c, ctx, a.self, retryOutcome{run: id})
	}
}

// requeueRun notes run id to be put back on the queue.
func (a *Actor) requeueRun(id uuid.UUID) {
	if !slices.Contains(a.mend.requeue, id) {
		a.mend.requeue = append(a.mend.requeue, id)
	}
}

// learn applies events read from the stream after the actor's version.
// The runs they end (another writer's outcome, or one of the actor's own
// appends that failed but landed) lose their deadline timer and heartbeat
// watch, and the worker running a run forced to end is told (StopRun), as
// after the actor's own appends. An actor unsure of its stream (an append
// of its failed) may learn of runs enqueued that nobody put on the queue,
// or started that no worker of its executes: it notes them, and mends.
func (a *Actor) learn(ctx actor.Context, recs []events.Recorded, evs []events.Event) {
	unsure := a.unsure
	for i, e := range evs {
		if r := &recs[i]; a.state.Exists() && r.Version <= a.state.Version {
			continue
		}
		a.state.Apply(recs[i].Metadata, e)
		a.pos = recs[i].Position
		if id, ok := endedRun(e); ok {
			a.stopRunners(ctx, evs[i:i+1])
			a.stopTimer(id)
		}
		if !unsure {
			continue
		}
		switch e := e.(type) {
		case events.RunEnqueued:
			a.requeueRun(e.RunID)
			a.armMend(false)
		case events.RunStarted:
			a.armMend(false) // its deadline is armed by mended
		}
	}
}

// retryKept decides run id's kept outcome again, if it still has one.
func (a *Actor) retryKept(ctx actor.Context, id uuid.UUID) {
	cmd, ok := a.mend.outcomes[id]
	if !ok {
		return
	}
	a.execute(ctx, a.newFlight(afterMend, cmd, context.Background(), a.cfg.Archetype.Clock.Now()))
}

// mendDone ends the flight of a kept outcome decided again: recorded, or
// found ended already, it is no longer kept; a store that failed again
// keeps it (keep, in acked).
func (a *Actor) mendDone(f *flight, evs []events.Event, err error) {
	id := runOf(f.cmd)
	switch {
	case err == nil:
		if len(a.mend.outcomes) == 1 && len(a.mend.requeue) == 0 {
			a.mend.delay = 0 // the store takes appends again
		}
		a.cfg.Archetype.Logger.Info("kept run outcome recorded", "task_id", a.id, "run_id", id, "kept", outcomeName(f.cmd), "events", len(evs))
	case errors.Is(err, worker.ErrRecordLater):
		return // kept again
	case errors.Is(err, rules.ErrUnknownRun), errors.Is(err, rules.ErrRunNotStarted):
		// Ended already: the failed append had landed, or another end came first.
	default:
		a.cfg.Archetype.Failed(slog.LevelError, "kept run outcome not recorded", err, "task_id", a.id, "run_id", id, "kept", outcomeName(f.cmd))
	}
	delete(a.mend.outcomes, id)
	delete(a.mend.warned, id)
}

// forget drops what the actor keeps for the runs evs end.
func (a *Actor) forget(evs []events.Event) {
	if len(a.mend.outcomes) == 0 && len(a.mend.warned) == 0 {
		return
	}
	for _, e := range evs {
		var id uuid.UUID
		switch e := e.(type) {
		case events.RunCompleted:
			id = e.RunID
		case events.RunFailed:
			id = e.RunID
		case events.RunForcedEnd:
			id = e.RunID
		case events.RunDropped:
			id = e.RunID
		case events.RunStarted:
			delete(a.mend.warned, e.RunID) // its start is recorded: warn again if its outcome is kept
			continue
		default:
			continue
		}
		delete(a.mend.outcomes, id)
		delete(a.mend.warned, id)
	}
}

// endedRun is the run e ends, if it ends one.
func endedRun(e events.Event) (uuid.UUID, bool) {
	switch e := e.(type) {
	case events.RunCompleted:
		return e.RunID, true
	case events.RunFailed:
		return e.RunID, true
	case events.RunForcedEnd:
		return e.RunID, true
	case events.RunDropped:
		return e.RunID, true
	}
	return uuid.Nil, false
}
