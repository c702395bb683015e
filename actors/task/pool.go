package task

import (
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/google/uuid"
)

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
