package task_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

// stuck is a store whose reads of one stream wait until released.
type stuck struct {
	events.Store
	stream  string
	begun   chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *stuck) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	if stream == s.stream {
		s.once.Do(func() { close(s.begun) })
		select {
		case <-s.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Store.ReadStream(ctx, stream, from, limit)
}

// A load runs off the dispatcher's goroutines (issue 32, item 2): with a
// dispatcher of one goroutine, an actor whose load hangs in the store
// holds its own messages back, and another task's actor on the same
// dispatcher goes on answering; once the read returns, the held message
// is answered with the loaded state.
func TestLoadHoldsNoDispatcherGoroutine(t *testing.T) {
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r := newRig(t, st)
	a := r.spawn()
	r.create(a, time.Minute, t0.Add(time.Minute))

	s := &stuck{Store: st, stream: events.TaskStream(r.id), begun: make(chan struct{}), release: make(chan struct{})}
	cfg := r.cfg
	cfg.Store = s
	d := task.NewDispatcher(1)
	spawn := func(id uuid.UUID) *actor.PID {
		return counted.Spawn(r.clk, r.sys.Root, actor.PropsFromProducer(task.New(cfg, id, nil), actor.WithDispatcher(d)))
	}
	loading := spawn(r.id) // its load hangs
	<-s.begun
	held := counted.RequestFuture(r.clk, r.sys.Root, loading, task.Get{}, time.Minute)

	other := spawn(uuid.New()) // an unknown task: its load finds no stream
	answered := make(chan task.Reply, 1)
	go func() {
		res, err := counted.Request(context.Background(), r.clk, r.sys.Root, other, task.Get{}, time.Minute)
		if err != nil {
			t.Error(err)
		}
		rep, _ := res.(task.Reply)
		answered <- rep
	}()
	select {
	case rep := <-answered:
		if rep.Err != nil || rep.State.Exists() {
			t.Fatalf("the other actor: %+v", rep)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an actor whose load hangs holds the dispatcher's goroutine: another task's actor cannot answer")
	}
	close(s.release)
	res, err := held.Result()
	if err != nil {
		t.Fatal(err)
	}
	if rep := res.(task.Reply); rep.Err != nil || rep.State.Status != rules.StatusActive {
		t.Fatalf("the held Get, once loaded: %+v", rep)
	}
}
