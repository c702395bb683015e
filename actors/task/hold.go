package task

import "github.com/asynkron/protoactor-go/actor"

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
