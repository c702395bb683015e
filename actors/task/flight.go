package task

import (
	"context"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// flight is one decision of the actor from its append to its end: the
// command, what the message that asked for it needs once the events are
// recorded (after), and the store's answer. The actor hands the append to
// the store (events.AppendAsync) and goes on processing messages — holding
// them, since it decides nothing for its task until the answer — instead of
// parking its goroutine until the append is durable. The store's callback
// (done) stores the answer and sends the actor an appended message, which
// the actor handles as it handled the return of a synchronous append:
// evolve the state, do the effects, answer.
//
// The clock counts a flight from the hand-off (Actor.append) until its
// appended message is handled, so a virtual clock does not move while an
// append is in flight. Flights are reused (flights).
type flight struct {
	after  after
	cmd    rules.Command
	cctx   context.Context // the message's context: the appends and a reload run within it
	at     time.Time       // the instant the command is decided at
	now    time.Time       // when the events were decided: their At
	evs    []events.Event
	sender *actor.PID // answered once done (a command, a host request)
	answer *answer    // a Command's answer (Post), in place of a sender
	// runner is a RequestStart's Command.Runner; hostReply a host
	// request's HostRequest.Reply.
	runner    *actor.PID
	hostReply func(uuid.UUID, Reply) any
	attempt   int // version conflicts reloaded so far
	// reloading is set while the stream's events after a version conflict
	// are read (Actor.startReload); the flight stays the actor's a.fl.
	reloading bool

	// For the store's callback.
	cancel context.CancelFunc // ends the append's store context
	// sd is the append's store context when the command has none of its
	// own (Actor.appendCtx), and sdCancel its cancel: both made once per
	// flight and reused.
	sd       *storeDeadline
	sdCancel context.CancelFunc
	self     *actor.PID
	sys      *actor.ActorSystem
	res      events.AppendResult
	err      error
	// acked receives a token once res and err are set: the actor takes it
	// when it handles the appended message, or waits for it when it is
	// stopped with the append in flight (Actor.stopping).
	acked chan struct{}
	done  func(events.AppendResult, error) // f.answered, made once
	// proposed holds the events the flight appends, encoded (Actor.append):
	// reused by the flights that follow, since the store lets go of them
	// once it has answered (a new slice was ~390 bytes a run).
	proposed []events.Proposed
}

// after says what finishing a flight does (Actor.finish).
type after uint8

const (
	afterCommand   after = iota // answer the Command's sender with a Reply
	afterHost                   // answer the host request's sender
	afterTick                   // report a failed tick
	afterDeadline               // log a failed forced end (deadline timer)
	afterHeartbeat              // log a failed forced end (heartbeat watch)
	afterCompact                // log a failed TaskCompacted (retain.go)
	afterMend                   // a kept outcome decided again (mend.go)
)

// appended is the store's answer to a flight, sent by its callback to the
// actor. It is counted: the clock's Begin is the actor's, at the hand-off.
type appended struct{ f *flight }

var flights = sync.Pool{New: func() any {
	f := &flight{acked: make(chan struct{}, 1), sd: &storeDeadline{}}
	f.done, f.sdCancel = f.answered, f.sd.cancel
	return f
}}

// newFlight returns a flight for cmd decided at at, within cctx.
func (a *Actor) newFlight(after after, cmd rules.Command, cctx context.Context, at time.Time) *flight {
	f := flights.Get().(*flight)
	f.after, f.cmd, f.cctx, f.at = after, cmd, cctx, at
	return f
}

// answered is the store's callback: it runs on a goroutine of the store's
// (or the caller's, for an append refused at once) and must not block.
func (f *flight) answered(res events.AppendResult, err error) {
	f.res, f.err = res, err
	self, sys := f.self, f.sys
	f.acked <- struct{}{}
	sys.Root.Send(self, appended{f})
}

// maxKeptProposed bounds the proposed events a released flight keeps room
// for: a decision records a few events (a run's enqueue, a drop and the
// next enqueue…); a larger one's slice goes to the collector.
const maxKeptProposed = 16

// release returns f to the pool once finished.
func (f *flight) release() {
	proposed := f.proposed[:0]
	if cap(proposed) > maxKeptProposed {
		proposed = nil // a rare large decision's slice is not kept
	}
	clear(proposed[:cap(proposed)]) // their data go with the flight, a retry's shorter decision too
	*f = flight{acked: f.acked, done: f.done, sd: f.sd, sdCancel: f.sdCancel, proposed: proposed}
	flights.Put(f)
}
