package task_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

// sink is an actor that counts what it is sent, for the queue and shard
// the task actors talk to.
type sink struct {
	clk clock.Clock
	mu  *sync.Mutex
	got *[]any
}

func (s sink) Receive(ctx actor.Context) {
	if counted.Counted(ctx.Message()) {
		defer s.clk.End()
	}
	if _, ok := ctx.Message().(*actor.Started); ok {
		return
	}
	s.mu.Lock()
	*s.got = append(*s.got, ctx.Message())
	s.mu.Unlock()
}

func ask(t *testing.T, clk clock.Clock, sys *actor.ActorSystem, pid *actor.PID, cmd any) task.Reply {
	t.Helper()
	res, err := counted.Request(context.Background(), clk, sys.Root, pid, cmd, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return res.(task.Reply)
}

// TestTwoActorsForOneTaskCannotBothStartARun runs two task actors for the
// same task on one store — as during a hand-over — and has each grant the
// same waiting run: the stream's expected version lets exactly one win; the
// other reloads and finds the run already started.
func TestTwoActorsForOneTaskCannotBothStartARun(t *testing.T) {
	store, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(t0)
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	var mu sync.Mutex
	var got []any
	sinkPID := counted.Spawn(clk, sys.Root, actor.PropsFromProducer(func() actor.Actor { return sink{clk: clk, mu: &mu, got: &got} }))
	cfg := task.Config{Store: store, Archetype: archetype.Archetype{Clock: clk}, Queue: sinkPID, Shard: sinkPID}
	id := uuid.New()

	a := counted.Spawn(clk, sys.Root, actor.PropsFromProducer(task.New(cfg, id, nil)))
	spec := rules.Spec{Name: "A", Owner: "o", Kind: "k", Schedule: events.Schedule{Interval: events.Duration(time.Minute)}}
	if r := ask(t, clk, sys, a, task.Command{Cmd: rules.Create{TaskID: id, Spec: spec, FirstRun: t0}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := ask(t, clk, sys, a, task.Command{Cmd: rules.Tick{}}); r.Err != nil || len(r.Events) != 1 {
		t.Fatalf("tick: %+v", r)
	}
	// The second actor loads the stream as it is now: one run waiting.
	b := counted.Spawn(clk, sys.Root, actor.PropsFromProducer(task.New(cfg, id, nil)))
	run := events.RunID(id, 1)

	var wg sync.WaitGroup
	replies := make([]task.Reply, 2)
	for i, pid := range []*actor.PID{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = ask(t, clk, sys, pid, task.Command{Cmd: rules.RequestStart{RunID: run}})
		}()
	}
	wg.Wait()
	started := 0
	for _, r := range replies {
		switch {
		case r.Err == nil && len(r.Events) == 1:
			if _, ok := r.Events[0].(events.RunStarted); !ok {
				t.Fatalf("unexpected decision %T", r.Events[0])
			}
			started++
		case errors.Is(r.Err, rules.ErrRunNotWaiting):
		default:
			t.Fatalf("reply %+v", r)
		}
	}
	if started != 1 {
		t.Fatalf("%d actors started the run, want exactly 1", started)
	}
	recs, err := store.ReadStream(context.Background(), events.TaskStream(id), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r.Type == "RunStarted" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("stream holds %d RunStarted events, want 1", n)
	}
	clk.Quiesce()
}
