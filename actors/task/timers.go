package task

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

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
	if _, ok := a.mend.outcomes[id]; ok {
		delete(a.beats, id) // the run has ended: its outcome is kept (mend.go)
		a.retryKept(ctx, id)
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
	if a.mend.timer != nil {
		a.mend.timer.Stop()
		a.mend.timer = nil
	}
}
