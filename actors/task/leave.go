package task

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/internal/counted"
)

// leave is where the actor is in leaving the registry.
type leave int

const (
	staying leave = iota
	leaving       // passivate queued, waiting for it
	left          // handed to Registry.Left, stopping
)

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

// idle reports whether the actor may stop: its task needs no actor, or its
// load failed (the next command starts a new actor that tries again), or —
// with Config.Rest — the task rests and the actor is not pinned; never
// while it mends after a failed append (mend.go), even with its state
// lost. Not
// inlined: rules.Idle takes a copy of the state (see respond).
//
//go:noinline
func (a *Actor) idle() bool {
	if a.unsure || a.mend.timer != nil || a.owes() {
		// Mending (mend.go): its stream may hold a run nobody put on the
		// queue, and its state is not one to hand over as a record. An
		// actor that lost its state (its read after a version conflict
		// failed) stays too while it keeps a start or an outcome: nothing
		// else would record it.
		return false
	}
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
//
// It is made once per object (Actor.leaveFn), so it cannot carry the
// generation it was handed out for: a call after the object was reused
// (the Registry keeping it past Leave) finds the next task's actor, which
// is not leaving, and is a stale delivery (taskrt), dropped.
func (a *Actor) leaveSend() {
	if a.leave != leaving {
		a.cfg.Runtime.Stale(passivate{}, a.Generation(), a.Generation())
		return
	}
	if n, ok := a.Waiting(); ok && n == 0 && a.heldNext == len(a.held) {
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
