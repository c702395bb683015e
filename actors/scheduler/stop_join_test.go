package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// hangStore is a store whose task stream reads hang, once armed, until
// released: a store that stopped answering.
type hangStore struct {
	events.Store
	armed   atomic.Bool
	entered chan struct{} // closed by the first hung read
	once    sync.Once
	release chan struct{}
}

func (h *hangStore) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	if h.armed.Load() && strings.HasPrefix(stream, events.TaskStreamPrefix) {
		h.once.Do(func() { close(h.entered) })
		<-h.release
	}
	return h.Store.ReadStream(ctx, stream, from, limit)
}

// Stop of a scheduler hosted in an actor system that outlives it waits for
// its actors within its context: an actor stuck in a hung store read does
// not hold Stop past the context's end, and Stop says so in its error.
func TestHostedStopReturnsWithinItsContext(t *testing.T) {
	st := memStore(t)
	ctx := context.Background()
	s1, err := scheduler.New(scheduler.Config{Store: st, Clock: clock.NewVirtual(t0), Tick: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for k, h := range noop() {
		if err := s1.Register(k, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := s1.Start(ctx); err != nil {
		t.Fatal(err)
	}
	task, _, err := s1.CreateTask(ctx, spec("a", time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := s1.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}

	hs := &hangStore{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	defer close(hs.release)
	s2, err := scheduler.New(scheduler.Config{Store: hs, Clock: clock.NewVirtual(t0), Tick: 30 * time.Second, ActorSystem: sys})
	if err != nil {
		t.Fatal(err)
	}
	for k, h := range noop() {
		if err := s2.Register(k, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := s2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Task(ctx, task.ID); err != nil { // its actor is up
		t.Fatal(err)
	}
	// Another writer pauses the task behind the actor's back: the actor's
	// next append conflicts, and it reloads the stream, which hangs.
	p, err := events.Propose(events.TaskPaused{}, uuid.New(), t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, events.TaskStream(task.ID), events.AnyVersion, p); err != nil {
		t.Fatal(err)
	}
	hs.armed.Store(true)
	pauseCtx, cancelPause := context.WithCancel(ctx)
	defer cancelPause()
	go s2.PauseTask(pauseCtx, task.ID)
	within(t, hs.entered, "the task's load to reach the store")

	stopCtx, cancel := context.WithCancel(ctx)
	cancel() // no time to wait for anything
	stopped := make(chan error, 1)
	go func() { stopped <- s2.Stop(stopCtx) }()
	select {
	case err := <-stopped:
		// The actor may have stopped after all (a load that does not block
		// its actor); if not, the error says so.
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("Stop: %v, want nil or the context's error", err)
		}
		if err != nil && !strings.Contains(err.Error(), "still stopping") {
			t.Fatalf("Stop: %v, want it to say actors are still stopping", err)
		}
	case <-time.After(5 * time.Second): // a bound on a hang, not a wait
		t.Fatal("Stop with an ended context is still waiting for an actor stuck in a store read")
	}
}
