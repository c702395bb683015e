package task

import (
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/task/taskrt"
	"github.com/google/uuid"
)

// NewRuntime is the runtime of task actors (package taskrt) whose mailboxes
// run on d (nil: protoactor's default dispatcher), logging a violation of
// its assumptions to log (nil: counted only): set it as every task
// actor's Config.Runtime and spawn them with its Props. The Actors of
// stopped task actors are reused by new ones (on *actor.Stopped): the
// actor of a resting task is started and stopped for every run, and each
// was ~1 KiB, its two maps and its slices made anew (docs/performance.md,
// decision 0028).
func NewRuntime(d actor.Dispatcher, log *slog.Logger) *taskrt.Runtime {
	return taskrt.New(taskrt.Config{New: func() taskrt.Pooled { return newBlank() }, Reuse: poolActors, Dispatcher: d, Logger: log})
}

// newBlank is an Actor with nothing set but its empty maps and its leave
// function.
func newBlank() *Actor {
	a := &Actor{incarnation: incarnation{timers: map[uuid.UUID]clock.Timer{}, runners: map[uuid.UUID]*actor.PID{}}}
	a.leaveFn = a.leaveSend
	return a
}

// reuseActor returns an Actor with nothing set but its empty maps and
// slices and its leave function: from rt, or a new one when rt is nil.
func reuseActor(rt *taskrt.Runtime) *Actor {
	if rt == nil {
		return newBlank()
	}
	return rt.Get().(*Actor)
}

// recycle gives a, which has stopped, back to its runtime once the actor
// system is done with it: it handles *actor.Stopped last (taskrt's
// contract tests), and nothing of ours holds it (its timers' functions
// and its flights hold its PID, not a; the Registry got its state for the
// length of a call). Its maps and slices are kept, emptied, and its leave
// function; the runtime ends its generation. Without a runtime the
// generation ends all the same (the runtime's mailbox, under which it may
// run, tells its stop by it).
func (a *Actor) recycle() {
	rt := a.cfg.Runtime
	timers, runners, effs, held, leaveFn := a.timers, a.runners, a.effs, a.held, a.leaveFn
	clear(timers)
	clear(runners)
	clear(effs[:cap(effs)])
	clear(held[:cap(held)])
	a.incarnation = incarnation{timers: timers, runners: runners, effs: effs[:0], held: held[:0], leaveFn: leaveFn}
	rt.Put(a)
}
