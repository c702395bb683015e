package counted_test

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/internal/counted"
)

// stopper stops itself on "stop", once the test has put more messages
// behind that one in its mailbox (release).
type stopper struct {
	c       clock.Clock
	release chan struct{}
	got     chan any
}

func (s *stopper) Receive(ctx actor.Context) {
	if counted.Counted(ctx.Message()) {
		defer s.c.End()
	}
	switch m := ctx.Message().(type) {
	case string:
		s.got <- m
		if m == "stop" {
			<-s.release
			ctx.Stop(ctx.Self())
		}
	}
}

// quiesced reports whether c reaches quiescence within a few seconds.
func quiesced(c *clock.Virtual) bool {
	done := make(chan struct{})
	go func() {
		c.Quiesce()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

// A message still in an actor's mailbox when the actor stops is never
// processed; protoactor drops it without a dead letter. Spawn's mailbox
// hands it to the dead letters instead, so it is uncounted (and a request
// among them is answered at once rather than at its timeout).
func TestMessagesLeftInMailboxOfStoppedActorAreUncounted(t *testing.T) {
	c := clock.NewVirtual(time.Unix(0, 0))
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
	defer sys.Shutdown()
	counted.Watch(sys, c)
	s := &stopper{c: c, release: make(chan struct{}), got: make(chan any, 8)}
	pid := counted.Spawn(c, sys.Root, actor.PropsFromProducer(func() actor.Actor { return s }))
	counted.Send(c, sys.Root, pid, "stop")
	if m := <-s.got; m != "stop" {
		t.Fatalf("got %v first", m)
	}
	// The actor is inside Receive("stop"): these wait behind it.
	counted.Send(c, sys.Root, pid, "left behind")
	f := counted.RequestFuture(c, sys.Root, pid, "asked too late", 30*time.Second)
	close(s.release)

	start := time.Now()
	if _, err := f.Result(); !errors.Is(err, actor.ErrDeadLetter) {
		t.Errorf("request to a stopped actor: err %v, want %v", err, actor.ErrDeadLetter)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("request to a stopped actor answered after %s", d)
	}
	if !quiesced(c) {
		t.Fatal("messages left in the mailbox of a stopped actor stay counted in flight")
	}
	select {
	case m := <-s.got:
		t.Errorf("the stopped actor processed %v", m)
	default:
	}
}
