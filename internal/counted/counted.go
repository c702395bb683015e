// Package counted sends messages between actors so that a virtual clock can
// tell when the actor system is quiescent.
//
// Every message sent with Send or Request is counted in flight on the clock
// (clock.Clock.Begin) before it leaves; the receiving actor ends the count
// once it has processed it:
//
//	func (a *Actor) Receive(ctx actor.Context) {
//		if counted.Counted(ctx.Message()) {
//			defer a.clock.End()
//		}
//		…
//	}
//
// Spawn counts the new actor's *actor.Started the same way. A message that
// can no longer be delivered (its actor stopped, even with the message
// already in its mailbox: see Spawn) is uncounted by the dead-letter
// watcher that Watch installs, so a stopped actor never holds the clock
// back. Under the wall clock (clock.Real) counting costs nothing.
//
// It is internal: the counting protocol is a detail of how cronactor's own
// actors cooperate with the virtual clock, not an API for embedders.
//
// Concurrency: every function is safe for concurrent use.
package counted

import (
	"context"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/eventstream"
	"github.com/cronactor/cronactor/actors/clock"
)

// Send counts msg as in flight on c and sends it; the receiving actor ends
// the count when it has processed it (see Counted).
func Send(c clock.Clock, ctx actor.SenderContext, pid *actor.PID, msg any) {
	c.Begin()
	ctx.Send(pid, msg)
}

// Request counts msg as in flight, sends it and waits for the reply, at most
// timeout, and no longer than ctx lasts: when ctx ends first, Request
// returns ctx.Err() at once (the actor still processes the message; its
// reply is discarded). A ctx that has already ended sends nothing.
func Request(ctx context.Context, c clock.Clock, from actor.SenderContext, pid *actor.PID, msg any, timeout time.Duration) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return Await(ctx, RequestFuture(c, from, pid, msg, timeout))
}

// RequestFuture counts msg as in flight and sends it; the reply (or a
// timeout after timeout) completes the future. With Await it is Request
// split in two, for callers that must send while holding a lock and wait
// without it.
func RequestFuture(c clock.Clock, from actor.SenderContext, pid *actor.PID, msg any, timeout time.Duration) *actor.Future {
	c.Begin()
	return from.RequestFuture(pid, msg, timeout)
}

// Await waits for f's result, no longer than ctx lasts.
func Await(ctx context.Context, f *actor.Future) (any, error) {
	if ctx.Done() == nil { // never ends: no need to watch it
		return f.Result()
	}
	type result struct {
		v   any
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f.Result()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Spawn counts the new actor's start as in flight and spawns it; the actor
// ends the count when it has processed *actor.Started. It gives the actor
// its mailbox (replacing any the props set): one that hands the messages
// left in it when the actor stops to the dead letters (see mailbox).
func Spawn(c clock.Clock, ctx actor.SpawnerContext, props *actor.Props) *actor.PID {
	c.Begin()
	return ctx.Spawn(props.Configure(actor.WithMailbox(newMailbox)))
}

// mailbox is protoactor's unbounded mailbox, except for the user messages
// it holds when its actor has stopped. Protoactor drops those silently: a
// stopped actor's context ignores them, no dead letter is published. Such
// a message may have been sent before the actor decided to stop (it was
// behind the message that made it stop) or even after (the sender found
// the actor still registered). Dropped, a counted message would stay in
// flight forever and the virtual clock would never move again; a request
// would wait for its timeout. So once its actor is gone from the process
// registry, the mailbox gives such messages to the dead letters, as a send
// after the stop would have been: Watch uncounts them and a requester is
// answered with a dead-letter response.
type mailbox struct {
	actor.Mailbox
}

func newMailbox() actor.Mailbox { return &mailbox{Mailbox: actor.Unbounded()()} }

func (m *mailbox) RegisterHandlers(inv actor.MessageInvoker, d actor.Dispatcher) {
	m.Mailbox.RegisterHandlers(&invoker{MessageInvoker: inv}, d)
}

// invoker stands between the mailbox and the actor's context. The mailbox
// calls it from one goroutine at a time.
type invoker struct {
	actor.MessageInvoker
	gone bool // the actor has stopped
}

// InvokeSystemMessage passes msg on; an actor stops (leaves the registry)
// only while handling a system message (*actor.Stop, or the *actor.Terminated
// of its last child), so that is when to look.
func (i *invoker) InvokeSystemMessage(msg any) {
	i.MessageInvoker.InvokeSystemMessage(msg)
	if i.gone {
		return
	}
	if ctx, ok := i.MessageInvoker.(actor.Context); ok {
		if _, alive := ctx.ActorSystem().ProcessRegistry.Get(ctx.Self()); !alive {
			i.gone = true
		}
	}
}

// InvokeUserMessage passes msg on, or to the dead letters once the actor
// has stopped.
func (i *invoker) InvokeUserMessage(msg any) {
	if i.gone {
		ctx := i.MessageInvoker.(actor.Context)
		ctx.ActorSystem().DeadLetter.SendUserMessage(ctx.Self(), msg)
		return
	}
	i.MessageInvoker.InvokeUserMessage(msg)
}

// SpawnPrefix is Spawn with the actor named prefix followed by a unique
// id (see WatchPrefix); its children's names start with its own.
func SpawnPrefix(c clock.Clock, ctx actor.SpawnerContext, props *actor.Props, prefix string) *actor.PID {
	c.Begin()
	return ctx.SpawnPrefix(props, prefix)
}

// Counted reports whether msg is one of ours (sent with Send or Request, or
// the *actor.Started of an actor spawned with Spawn) rather than another
// lifecycle or system message of the actor system.
func Counted(msg any) bool {
	switch msg.(type) {
	case *actor.Started:
		return true // counted by Spawn
	case actor.SystemMessage, actor.AutoReceiveMessage, *actor.ReceiveTimeout,
		*actor.DeadLetterResponse, *actor.DeadLetterEvent:
		return false
	}
	return true
}

// Watch installs, on sys, the watcher that uncounts messages sent to an
// actor that has stopped (they end as dead letters, never processed).
// Call it once per actor system, before the first Send. It is WatchPrefix
// for every actor of sys.
func Watch(sys *actor.ActorSystem, c clock.Clock) {
	WatchPrefix(sys, c, "", nil)
}

// WatchPrefix installs, on sys, the watcher that uncounts the messages sent
// to a stopped actor whose name starts with prefix (spawned with
// SpawnPrefix, or a child of one), but for those skip reports (nil: none).
// Counted messages are only ever sent to such actors; a dead letter to any
// other process — another component's actor on a shared actor system, a
// future that timed out before its reply came, the nobody a plain send is
// answered to — was never counted here, so it never ends a count. Call it
// before the first Send; Unsubscribe the subscription from sys.EventStream
// once the actors are stopped. The watcher runs on the goroutine of whoever
// sends the dead letter, so it only counts.
func WatchPrefix(sys *actor.ActorSystem, c clock.Clock, prefix string, skip func(msg any) bool) *eventstream.Subscription {
	return sys.EventStream.Subscribe(func(evt any) {
		dl, ok := evt.(*actor.DeadLetterEvent)
		if !ok || dl.PID == nil || !strings.HasPrefix(dl.PID.Id, prefix) || !Counted(dl.Message) {
			return
		}
		if skip != nil && skip(dl.Message) {
			return
		}
		c.End()
	})
}
