package task

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

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
		case rules.Listed:
			if l, ok := a.cfg.Registry.(Lister); ok {
				l.Listed(a.id, e.Owner, e.Name, e.Listed)
			}
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
