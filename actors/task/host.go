package task

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

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

// hostRequest recognizes a host actor's message (Config.Host).
func (a *Actor) hostRequest(msg any) (HostRequest, bool) {
	if a.cfg.Host == nil {
		return HostRequest{}, false
	}
	return a.cfg.Host(msg)
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

// respondHost answers a host request that decided cmd with its outcome.
//
//go:noinline
func (a *Actor) respondHost(ctx actor.Context, f *flight, evs []events.Event, err error) {
	if f.sender != nil {
		ctx.Send(f.sender, f.hostReply(a.id, Reply{Events: evs, State: a.state, Position: a.pos, Err: err}))
	}
}
