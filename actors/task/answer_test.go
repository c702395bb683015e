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

type answerFixture struct {
	clk   *clock.Virtual
	sys   *actor.ActorSystem
	cfg   task.Config
	store *embedded.Store
	t0    time.Time
}

func newAnswerFixture(t testing.TB) *answerFixture {
	t.Helper()
	store, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(t0)
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	t.Cleanup(sys.Shutdown)
	counted.Watch(sys, clk)
	var mu sync.Mutex
	var got []any
	sinkPID := counted.Spawn(clk, sys.Root, actor.PropsFromProducer(func() actor.Actor { return sink{clk: clk, mu: &mu, got: &got} }))
	return &answerFixture{clk: clk, sys: sys, store: store, t0: t0,
		cfg: task.Config{Store: store, Archetype: archetype.Archetype{Clock: clk}, Queue: sinkPID, Shard: sinkPID}}
}

// created spawns a task actor and has it create an interval task, due now.
func (f *answerFixture) created(t testing.TB, id uuid.UUID) *actor.PID {
	t.Helper()
	pid := counted.Spawn(f.clk, f.sys.Root, actor.PropsFromProducer(task.New(f.cfg, id, nil)))
	spec := rules.Spec{Name: "A", Owner: "o", Kind: "k", Schedule: events.Schedule{Interval: events.Duration(time.Minute)}}
	if _, err := task.Ask(context.Background(), f.clk, f.sys.Root, pid, rules.Create{TaskID: id, Spec: spec, FirstRun: f.t0}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestAskIsAnsweredWithTheDecision: Ask and Post get the actor's Reply —
// the events recorded, the state after them, a rejection as the error —
// through the answer slot, many times in a row (the slots are reused).
func TestAskIsAnsweredWithTheDecision(t *testing.T) {
	f := newAnswerFixture(t)
	id := uuid.New()
	pid := f.created(t, id)
	r, err := task.Ask(context.Background(), f.clk, f.sys.Root, pid, rules.Tick{}, 10*time.Second)
	if err != nil || len(r.Events) != 1 {
		t.Fatalf("tick: %+v, %v", r, err)
	}
	run := events.RunID(id, 1)
	wait := task.Post(context.Background(), f.clk, f.sys.Root, pid, rules.RequestStart{RunID: run}, 10*time.Second)
	r, err = wait()
	if err != nil || len(r.Events) != 1 {
		t.Fatalf("start: %+v, %v", r, err)
	}
	if _, ok := r.Events[0].(events.RunStarted); !ok || r.State.ID != id {
		t.Fatalf("start answered %T, state of %s", r.Events[0], r.State.ID)
	}
	for i := 0; i < 50; i++ {
		r, err = task.Ask(context.Background(), f.clk, f.sys.Root, pid, rules.RequestStart{RunID: run}, 10*time.Second)
		if !errors.Is(err, rules.ErrRunNotWaiting) || r.State.ID != id {
			t.Fatalf("second start %d: %+v, %v; want %v with the state", i, r, err, rules.ErrRunNotWaiting)
		}
	}
	f.clk.Quiesce()
}

// TestAskOfAGoneActorIsADeadLetter: a command to an actor that has
// stopped is answered with actor.ErrDeadLetter, as a future was — not left
// to time out — and the clock does not count it in flight.
func TestAskOfAGoneActorIsADeadLetter(t *testing.T) {
	f := newAnswerFixture(t)
	pid := f.created(t, uuid.New())
	if err := f.sys.Root.StopFuture(pid).Wait(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		_, err := task.Ask(context.Background(), f.clk, f.sys.Root, pid, rules.Tick{}, 5*time.Second)
		if !errors.Is(err, actor.ErrDeadLetter) {
			t.Fatalf("ask %d of a stopped actor: %v, want %v", i, err, actor.ErrDeadLetter)
		}
	}
	f.clk.Quiesce()
}

// TestAskOfAnActorThatDoesNotAnswer ends at the timeout, or with the
// caller's context.
func TestAskOfAnActorThatDoesNotAnswer(t *testing.T) {
	f := newAnswerFixture(t)
	silent := f.cfg.Queue // the sink: takes every message, answers none
	if _, err := task.Ask(context.Background(), f.clk, f.sys.Root, silent, rules.Tick{}, time.Millisecond); !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("ask of a silent actor: %v, want %v", err, actor.ErrTimeout)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait := task.Post(ctx, f.clk, f.sys.Root, silent, rules.Tick{}, time.Hour)
	cancel()
	if _, err := wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("ask cancelled: %v, want %v", err, context.Canceled)
	}
}

// BenchmarkAsk compares a worker's round trip to its task actor through
// an answer (task.Ask) with the same command through a protoactor future:
// a start the rules reject at once (no append), so the figure is the
// transport's.
func BenchmarkAsk(b *testing.B) {
	for _, via := range []string{"answer", "future"} {
		b.Run(via, func(b *testing.B) {
			f := newAnswerFixture(b)
			id := uuid.New()
			pid := f.created(b, id)
			cmd := rules.RequestStart{RunID: events.RunID(id, 1)}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				var err error
				if via == "answer" {
					_, err = task.Ask(context.Background(), f.clk, f.sys.Root, pid, cmd, 10*time.Second)
				} else {
					var res any
					res, err = counted.Request(context.Background(), f.clk, f.sys.Root, pid, task.Command{Cmd: cmd}, 10*time.Second)
					if err == nil {
						err = res.(task.Reply).Err
					}
				}
				if !errors.Is(err, rules.ErrUnknownRun) {
					b.Fatal(err)
				}
			}
		})
	}
}
