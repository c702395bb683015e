package task

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/internal/counted"
)

// Ask sends cmd to the task actor at pid and waits for its Reply, at most
// timeout and no longer than ctx lasts. The error is the transport's, or
// else the reply's rejection. A RequestStart names from's actor (a worker)
// as the run's Runner.
func Ask(ctx context.Context, c clock.Clock, from actor.SenderContext, pid *actor.PID, cmd rules.Command, timeout time.Duration) (reply Reply, err error) {
	if err := ctx.Err(); err != nil {
		return Reply{}, fmt.Errorf("task: ask: %w", err)
	}
	return post(ctx, c, from, pid, cmd).await(ctx, timeout)
}

// Post sends cmd to the task actor at pid as Ask does, and returns once
// the command is in the actor's mailbox — so that whatever from sends
// after it reaches the actor after it — with the function that waits for
// the Reply. The wait must be called once. The actor answers through a
// reusable slot (answer), not a protoactor future.
func Post(ctx context.Context, c clock.Clock, from actor.SenderContext, pid *actor.PID, cmd rules.Command, timeout time.Duration) (wait func() (Reply, error)) {
	return PostCommand(ctx, c, from, pid, cmd, timeout).Wait
}

// Pending is a command sent by PostCommand; Wait waits for its Reply.
type Pending struct {
	w       *answer
	ctx     context.Context
	timeout time.Duration
}

// PostCommand is Post, returning the command sent as a Pending rather than
// a function: a caller that wraps the wait in a function of its own (a
// worker.PostFunc) makes one closure per command, not two.
func PostCommand(ctx context.Context, c clock.Clock, from actor.SenderContext, pid *actor.PID, cmd rules.Command, timeout time.Duration) Pending {
	return Pending{w: post(ctx, c, from, pid, cmd), ctx: ctx, timeout: timeout}
}

// Wait waits for the Reply as Post's wait does; call it once.
func (p Pending) Wait() (Reply, error) { return p.w.await(p.ctx, p.timeout) }

// post sends cmd to the task actor at pid with an answer, which it returns
// (see Post).
func post(ctx context.Context, c clock.Clock, from actor.SenderContext, pid *actor.PID, cmd rules.Command) *answer {
	msg := Command{Ctx: ctx, Cmd: cmd}
	if _, start := cmd.(rules.RequestStart); start {
		msg.Runner = from.Self() // a worker: told if the actor forces the run to end
	}
	watchDeadLetters(from.ActorSystem())
	w := answers.Get().(*answer)
	msg.answer = w
	counted.Send(c, from, pid, msg)
	return w
}

// await waits for the Reply to the command w was sent with (see Post), at
// most timeout and no longer than ctx lasts, and gives w back.
func (w *answer) await(ctx context.Context, timeout time.Duration) (reply Reply, err error) {
	lost, err := w.wait(ctx, timeout)
	if err == nil && lost {
		w.take(nil)
		err = actor.ErrDeadLetter
	}
	if err != nil {
		return Reply{}, fmt.Errorf("task: ask: %w", err)
	}
	w.take(&reply)
	return reply, reply.Err
}
