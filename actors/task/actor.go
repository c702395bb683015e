// Package task is the task actor: one protoactor-go actor per scheduled task,
// its state rebuilt from the task's own event stream. It alone decides what
// happens to the task (package rules) and records every decision.
//
// Its loop, for every command: decide (rules.Decide) → append the events
// with the stream's expected version → evolve the state → only then act:
// reply, put an enqueued run on the queue, tell the shard the new nextRun,
// arm the run's deadline timer. A version conflict (another writer of the
// same stream) reloads the stream and decides again, a bounded number of
// times; so two actors for one task can never both start a run.
//
// Concurrency: the actor processes one message at a time, so decisions for
// one task are serialized (R3).
package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

// ErrConflictRetries: the stream kept changing under the actor.
var ErrConflictRetries = errors.New("task: version conflicts persisted after retries")

// maxConflictRetries bounds reload-and-retry on a version conflict.
const maxConflictRetries = 5

// Command asks the actor to decide cmd; it replies with a Reply.
type Command struct{ Cmd rules.Command }

// Reply is the answer to a Command: the events recorded (none when nothing
// changed), the state after them, or the rejection.
type Reply struct {
	Events []events.Event
	State  rules.State
	Err    error
}

// Get asks for the state without changing it; the reply is a Reply.
type Get struct{}

// deadline is the actor's own timer message for a started run.
type deadline struct{ runID uuid.UUID }

// Config is what a task actor needs.
type Config struct {
	Store events.Store
	Clock clock.Clock
	// Queue receives a worker.Enqueued for each run enqueued or recovered.
	Queue *actor.PID
	// Shard receives a dueindex.Track whenever nextRun or the status changes.
	Shard  *actor.PID
	Logger *slog.Logger
}

// Actor is one task's actor. Build it with New.
type Actor struct {
	cfg    Config
	id     uuid.UUID
	stream string
	state  rules.State
	loaded bool
	self   *actor.PID
	sys    *actor.ActorSystem
	// lost holds runs found started on recovery: their process is gone.
	lost   map[uuid.UUID]bool
	timers map[uuid.UUID]clock.Timer
	// incarnation tells this actor's decisions apart from those of another
	// actor of the same task: event IDs derive from it, so a retry by this
	// actor is recognised as such by the store while the same decision made
	// by another actor at the same instant still conflicts.
	incarnation string
}

// New returns the producer of the actor for task id. With initial nil the
// actor loads its stream when it starts; otherwise initial is the state the
// caller already folded from the log (recovery reads the log once for all).
func New(cfg Config, id uuid.UUID, initial *rules.State) actor.Producer {
	return func() actor.Actor {
		a := &Actor{cfg: cfg, id: id, stream: events.TaskStream(id), lost: map[uuid.UUID]bool{}, timers: map[uuid.UUID]clock.Timer{},
			incarnation: uuid.NewString()}
		if initial != nil {
			a.state, a.loaded = *initial, true
		}
		return a
	}
}

// Receive implements actor.Actor.
func (a *Actor) Receive(ctx actor.Context) {
	if counted.Counted(ctx.Message()) {
		defer a.cfg.Clock.End()
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.self, a.sys = ctx.Self(), ctx.ActorSystem()
		if !a.loaded {
			if err := a.reload(); err != nil {
				a.cfg.Logger.Error("task load failed", "task_id", a.id, "err", err)
			}
		}
		a.recover(ctx)
	case Command:
		evs, err := a.execute(ctx, m.Cmd)
		ctx.Respond(Reply{Events: evs, State: a.state, Err: err})
	case Get:
		ctx.Respond(Reply{State: a.state})
	case dueindex.Tick:
		if _, err := a.execute(ctx, rules.Tick{}); err != nil && !errors.Is(err, rules.ErrNotCreated) {
			a.cfg.Logger.Error("tick failed", "task_id", a.id, "err", err)
		}
		// The shard forgot this task when it sent the tick: always tell it
		// where the task stands now.
		a.track(ctx)
	case deadline:
		delete(a.timers, m.runID)
		reason := events.ForcedTimebox
		if a.lost[m.runID] {
			reason = events.ForcedProcessLost
		}
		_, err := a.execute(ctx, rules.ForceEnd{RunID: m.runID, Reason: reason})
		if err != nil && !errors.Is(err, rules.ErrUnknownRun) {
			a.cfg.Logger.Error("forced end failed", "task_id", a.id, "run_id", m.runID, "err", err)
		}
	}
}

// reload rebuilds the state from the stream.
func (a *Actor) reload() error {
	recs, err := a.cfg.Store.ReadStream(context.Background(), a.stream, 0, 0)
	if errors.Is(err, events.ErrStreamNotFound) {
		a.state, a.loaded = rules.State{}, true
		return nil
	}
	if err != nil {
		return fmt.Errorf("task: load %s: %w", a.stream, err)
	}
	s, err := rules.Replay(recs)
	if err != nil {
		return fmt.Errorf("task: replay %s: %w", a.stream, err)
	}
	a.state, a.loaded = s, true
	return nil
}

// recover puts the state's open runs back to work (R9): waiting runs go back
// on the queue; started runs belong to a process that is gone and are forced
// to end once their deadline has passed.
func (a *Actor) recover(ctx actor.Context) {
	for _, r := range a.state.Open {
		if r.Started {
			a.lost[r.ID] = true
			a.armDeadline(r)
		} else {
			a.enqueue(ctx, r)
		}
	}
	a.track(ctx)
}

func (a *Actor) enqueue(ctx actor.Context, r rules.Run) {
	counted.Send(a.cfg.Clock, ctx, a.cfg.Queue, worker.Enqueued{TaskID: a.id, Task: a.self, RunID: r.ID, Run: r.Number,
		Priority: r.Priority, Due: r.Due, EnqueuedAt: r.EnqueuedAt})
}

func (a *Actor) track(ctx actor.Context) {
	if !a.state.Exists() {
		return
	}
	counted.Send(a.cfg.Clock, ctx, a.cfg.Shard, dueindex.Track{TaskID: a.id, PID: a.self,
		NextRun: a.state.NextRun, Active: a.state.Status == rules.StatusActive})
}

func (a *Actor) armDeadline(r rules.Run) {
	if t, ok := a.timers[r.ID]; ok {
		t.Stop()
	}
	c, sys, self, id := a.cfg.Clock, a.sys, a.self, r.ID
	a.timers[r.ID] = c.AfterFunc(r.Deadline.Sub(c.Now()), func() {
		counted.Send(c, sys.Root, self, deadline{runID: id})
	})
}

// execute is the actor loop for one command.
func (a *Actor) execute(ctx actor.Context, cmd rules.Command) ([]events.Event, error) {
	for attempt := 0; ; attempt++ {
		now := a.cfg.Clock.Now()
		evs, err := rules.Decide(a.state, cmd, now)
		if err != nil || len(evs) == 0 {
			return nil, err
		}
		expected := events.NoStream
		if a.state.Exists() {
			expected = events.Exactly(a.state.Version)
		}
		proposed := make([]events.Proposed, len(evs))
		for i, e := range evs {
			p, err := events.Propose(e, uuid.Nil, now)
			if err != nil {
				return nil, err
			}
			p.ID = events.ContentID(a.stream+"\x00"+a.incarnation, expected, i, p.Type, p.Data)
			proposed[i] = p
		}
		res, err := a.cfg.Store.Append(context.Background(), a.stream, expected, proposed...)
		if errors.Is(err, events.ErrVersionConflict) && attempt < maxConflictRetries {
			a.cfg.Logger.Warn("version conflict, reloading", "task_id", a.id, "stream", a.stream, "err", err)
			if err := a.reload(); err != nil {
				return nil, err
			}
			continue
		}
		if errors.Is(err, events.ErrVersionConflict) {
			return nil, fmt.Errorf("%w: %v", ErrConflictRetries, err)
		}
		if err != nil {
			return nil, fmt.Errorf("task: append to %s: %w", a.stream, err)
		}
		first := res.Version + 1 - uint64(len(evs))
		for i, e := range evs {
			a.state = rules.Evolve(a.state, events.Metadata{Stream: a.stream, Version: first + uint64(i), At: now}, e)
		}
		a.act(ctx, evs)
		return evs, nil
	}
}

// act does what recorded events call for, after they are durable.
func (a *Actor) act(ctx actor.Context, evs []events.Event) {
	moved := false
	for _, e := range evs {
		switch e := e.(type) {
		case events.RunEnqueued:
			if r, ok := a.state.Run(e.RunID); ok {
				a.enqueue(ctx, r)
			}
		case events.RunStarted:
			if r, ok := a.state.Run(e.RunID); ok {
				a.armDeadline(r)
			}
		case events.RunCompleted:
			a.stopTimer(e.RunID)
		case events.RunFailed:
			a.stopTimer(e.RunID)
		case events.RunForcedEnd:
			a.stopTimer(e.RunID)
		case events.TaskCreated, events.TaskUpdated, events.TaskPaused, events.TaskResumed, events.TaskDeleted:
			moved = true
		}
	}
	// A tick's Track is sent by the tick handler itself.
	if moved {
		a.track(ctx)
	}
}

func (a *Actor) stopTimer(id uuid.UUID) {
	if t, ok := a.timers[id]; ok {
		t.Stop()
		delete(a.timers, id)
	}
	delete(a.lost, id)
}

// Ask sends cmd to the task actor at pid and waits for its Reply, at most
// timeout and no longer than ctx lasts. The error is the transport's, or
// else the reply's rejection.
func Ask(ctx context.Context, c clock.Clock, from actor.SenderContext, pid *actor.PID, cmd rules.Command, timeout time.Duration) (Reply, error) {
	res, err := counted.Request(ctx, c, from, pid, Command{Cmd: cmd}, timeout)
	if err != nil {
		return Reply{}, fmt.Errorf("task: ask: %w", err)
	}
	reply, ok := res.(Reply)
	if !ok {
		return Reply{}, fmt.Errorf("task: ask: answered %T", res)
	}
	return reply, reply.Err
}
