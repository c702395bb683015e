package scheduler

import (
	"context"
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

// send sends msg to the actor of task id — starting one if the task has
// none in memory — and waits for the reply, no longer than ctx lasts or
// RequestTimeout. An actor that is leaving is waited for.
func (s *Scheduler) send(ctx context.Context, id uuid.UUID, msg any) (task.Reply, error) {
	reply, _, err := s.sendTo(ctx, id, msg)
	return reply, err
}

// sendTo is send that also returns the PID of the actor that answered.
func (s *Scheduler) sendTo(ctx context.Context, id uuid.UUID, msg any) (task.Reply, *actor.PID, error) {
	create := false
	if c, ok := msg.(task.Command); ok {
		_, create = c.Cmd.(rules.Create)
	}
	e, err := s.lockActor(ctx, id, create)
	if err != nil {
		return task.Reply{}, nil, err
	}
	pid := e.pid
	f := counted.RequestFuture(s.cfg.Clock, s.sys.Root, pid, msg, s.cfg.RequestTimeout)
	e.mu.Unlock()
	res, err := counted.Await(ctx, f)
	if err != nil {
		return task.Reply{}, nil, fmt.Errorf("scheduler: ask task %s: %w", id, err)
	}
	reply, ok := res.(task.Reply)
	if !ok {
		return task.Reply{}, nil, fmt.Errorf("scheduler: task %s answered %T", id, res)
	}
	return reply, pid, nil
}

// ask has the actor of task id decide cmd, within ctx.
func (s *Scheduler) ask(ctx context.Context, id uuid.UUID, cmd rules.Command) (task.Reply, error) {
	reply, err := s.send(ctx, id, task.Command{Ctx: ctx, Cmd: cmd})
	if err != nil {
		return reply, err
	}
	if errors.Is(reply.Err, rules.ErrNotCreated) {
		return reply, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	return reply, reply.Err
}

// workerAsk carries a worker's command to a task actor: the one that
// enqueued the run, which stays while the run is open. An actor that is
// gone (a dead letter) left because no run of its task was open any more,
// so the run asked about already has its outcome: that is the answer, as
// the actor would have given it, unless the scheduler is stopping.
func (s *Scheduler) workerAsk(ctx context.Context, from actor.SenderContext, pid *actor.PID, cmd rules.Command) (worker.Decision, error) {
	r, err := task.Ask(ctx, s.cfg.Clock, from, pid, cmd, s.cfg.RequestTimeout)
	d := worker.Decision{Events: r.Events}
	if start, ok := cmd.(rules.RequestStart); ok && err == nil && len(r.Events) > 0 {
		d = worker.StartDecision(r.Events, &r.State, start.RunID)
	}
	return d, s.deadLetter(err)
}

// deadLetter is err, or the answer to a command that reached no actor
// because the task's actor had left (see workerAsk).
func (s *Scheduler) deadLetter(err error) error {
	if errors.Is(err, actor.ErrDeadLetter) && !s.stopping() {
		return fmt.Errorf("%w (its task's actor has left: %v)", rules.ErrUnknownRun, err)
	}
	return err
}

// workerPost is the workers' worker.PostFunc: task.Post, with a gone
// actor's dead letter answered as workerAsk answers it. Workers post only
// runs' outcomes, and read only the events of the decision (Worker.report),
// so the decision carries only those: a copy of the task's state for every
// outcome was a tenth of the bytes a wave allocated.
func (s *Scheduler) workerPost(from actor.SenderContext, pid *actor.PID, cmd rules.Command) func() (worker.Decision, error) {
	p := task.PostCommand(context.Background(), s.cfg.Clock, from, pid, cmd, s.cfg.RequestTimeout)
	return func() (worker.Decision, error) {
		r, err := p.Wait()
		return worker.Decision{Events: r.Events}, s.deadLetter(err)
	}
}

// stopping reports whether Stop has begun.
func (s *Scheduler) stopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// workerTell carries a run's heartbeat to its task actor without waiting:
// the answer goes to a future nobody reads. (A plain send would have the
// actor answer to nobody, a dead letter the clock's counting would take
// for an undelivered message.)
func (s *Scheduler) workerTell(from actor.SenderContext, pid *actor.PID, cmd rules.Command) {
	counted.RequestFuture(s.cfg.Clock, from, pid, task.Command{Cmd: cmd}, s.cfg.RequestTimeout)
}
