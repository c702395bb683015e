package task_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

var errGone = errors.New("store: server gone")

// failingReads fails the stream reads while fail is set, with what fail
// returns for the read's context.
type failingReads struct {
	events.Store
	mu   sync.Mutex
	fail func(ctx context.Context) error
}

func (s *failingReads) failWith(f func(ctx context.Context) error) {
	s.mu.Lock()
	s.fail = f
	s.mu.Unlock()
}

func (s *failingReads) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail != nil {
		return nil, fail(ctx)
	}
	return s.Store.ReadStream(ctx, stream, from, limit)
}

// conflicting answers its next n appends with a version conflict, as if
// another writer kept appending, writing nothing.
type conflicting struct {
	events.Store
	n atomic.Int32
}

func (s *conflicting) Append(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	if s.n.Add(-1) >= 0 {
		return events.AppendResult{}, &events.VersionConflictError{Stream: stream, Expected: exp}
	}
	return s.Store.Append(ctx, stream, exp, evs...)
}

// leaveCounter is a Registry that counts the actors' Leave calls.
type leaveCounter struct {
	mu     sync.Mutex
	leaves int
}

func (r *leaveCounter) Leave(_ uuid.UUID, _ *actor.PID, send func()) {
	r.mu.Lock()
	r.leaves++
	r.mu.Unlock()
	send()
}

func (r *leaveCounter) Left(uuid.UUID, *actor.PID, bool, *rules.State, events.Position) {}

func (r *leaveCounter) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leaves
}

// mendRig is a task actor on an embedded store behind store, with a
// virtual clock and a sink for the queue and the shard.
func mendRig(t *testing.T, wrap func(events.Store) events.Store, reg task.Registry) (events.Store, *clock.Virtual, *actor.ActorSystem, task.Config) {
	t.Helper()
	mem, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return quiet }))
	var mu sync.Mutex
	var got []any
	sinkPID := counted.Spawn(clk, sys.Root, actor.PropsFromProducer(func() actor.Actor { return sink{clk: clk, mu: &mu, got: &got} }))
	cfg := task.Config{Store: wrap(mem), Archetype: archetype.Archetype{Clock: clk, Logger: quiet}, Queue: sinkPID, Shard: sinkPID, Registry: reg}
	return mem, clk, sys, cfg
}

// A worker's outcome whose append meets a version conflict, and whose read
// of the stream after it then fails, is kept (worker.ErrRecordLater) and
// recorded once the store answers reads again (mend.go), whether the read
// failed in the store or because the worker's own ask ended meanwhile.
func TestOutcomeKeptWhenReadAfterConflictFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		// fail is the failed read, given the command's cancel.
		fail func(cancel context.CancelFunc) func(ctx context.Context) error
	}{
		{"store fails", func(context.CancelFunc) func(context.Context) error {
			return func(context.Context) error { return errGone }
		}},
		{"ask ends", func(cancel context.CancelFunc) func(context.Context) error {
			return func(ctx context.Context) error { cancel(); <-ctx.Done(); return ctx.Err() }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reads := &failingReads{}
			mem, clk, sys, cfg := mendRig(t, func(s events.Store) events.Store { reads.Store = s; return reads }, nil)
			t0 := clk.Now()
			id := uuid.New()
			a := counted.Spawn(clk, sys.Root, actor.PropsFromProducer(task.New(cfg, id, nil)))
			spec := rules.Spec{Name: "A", Owner: "o", Kind: "k", Schedule: events.Schedule{Interval: events.Duration(time.Hour)}, Timebox: 10 * time.Minute}
			if r := ask(t, clk, sys, a, task.Command{Cmd: rules.Create{TaskID: id, Spec: spec, FirstRun: t0}}); r.Err != nil {
				t.Fatal(r.Err)
			}
			if r := ask(t, clk, sys, a, task.Command{Cmd: rules.Tick{}}); r.Err != nil || len(r.Events) != 1 {
				t.Fatalf("tick: %+v", r)
			}
			run := events.RunID(id, 1)
			if r := ask(t, clk, sys, a, task.Command{Cmd: rules.RequestStart{RunID: run}}); r.Err != nil {
				t.Fatalf("start: %+v", r)
			}
			// Another writer appends to the stream: a second actor's trigger.
			b := counted.Spawn(clk, sys.Root, actor.PropsFromProducer(task.New(cfg, id, nil)))
			if r := ask(t, clk, sys, b, task.Command{Cmd: rules.Trigger{}}); r.Err != nil {
				t.Fatalf("trigger: %+v", r)
			}
			sys.Root.Stop(b)
			cctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			reads.failWith(tc.fail(cancel))
			r := ask(t, clk, sys, a, task.Command{Cmd: rules.Complete{RunID: run}, Ctx: cctx})
			if !errors.Is(r.Err, worker.ErrRecordLater) {
				t.Fatalf("the worker's Complete is answered %v, want worker.ErrRecordLater (kept)", r.Err)
			}
			reads.failWith(nil)
			clk.RunUntil(t0.Add(time.Minute)) // well before the run's timebox
			recs, err := mem.ReadStream(context.Background(), events.TaskStream(id), 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			var ends []string
			for _, rec := range recs {
				e, _ := events.Decode(rec)
				switch e := e.(type) {
				case events.RunCompleted:
					if e.RunID == run {
						ends = append(ends, "completed")
					}
				case events.RunForcedEnd:
					if e.RunID == run {
						ends = append(ends, "forced_end:"+e.Reason)
					}
				}
			}
			if len(ends) != 1 || ends[0] != "completed" {
				t.Fatalf("run 1's ends in the stream: %v, want [completed]", ends)
			}
		})
	}
}

// An actor whose append met version conflicts more times than it retries
// (task.ErrConflictRetries) is unsure of its stream; mending reads it
// again, so the actor rests once its task does.
func TestRestsAgainAfterConflictRetries(t *testing.T) {
	store := &conflicting{}
	reg := &leaveCounter{}
	_, clk, sys, cfg := mendRig(t, func(s events.Store) events.Store { store.Store = s; return store }, reg)
	cfg.Rest = true
	t0 := clk.Now()
	id := uuid.New()
	spec := rules.Spec{Name: "A", Owner: "o", Kind: "k", Schedule: events.Schedule{Interval: events.Duration(time.Hour)}}
	a := counted.Spawn(clk, sys.Root, actor.PropsFromProducer(task.New(cfg, id, nil)))
	if r := ask(t, clk, sys, a, task.Command{Cmd: rules.Create{TaskID: id, Spec: spec, FirstRun: t0.Add(time.Hour)}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	clk.Quiesce()
	base := reg.count()
	// A new actor, pinned so as not to rest, meets a conflict at every
	// attempt of its Pause, then none.
	b := counted.Spawn(clk, sys.Root, actor.PropsFromProducer(task.New(cfg, id, nil)))
	if r := ask(t, clk, sys, b, task.Get{Pin: true}); r.Err != nil {
		t.Fatal(r.Err)
	}
	store.n.Store(6) // the first attempt and maxConflictRetries (5) more
	if r := ask(t, clk, sys, b, task.Command{Cmd: rules.Pause{}}); !errors.Is(r.Err, task.ErrConflictRetries) {
		t.Fatalf("pause: %v, want task.ErrConflictRetries", r.Err)
	}
	if r := ask(t, clk, sys, b, task.Command{Cmd: rules.Pause{}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := ask(t, clk, sys, b, task.Get{Unpin: true}); r.Err != nil {
		t.Fatal(r.Err)
	}
	clk.RunUntil(t0.Add(24 * time.Hour))
	if reg.count() == base {
		t.Fatalf("the paused task's actor never rested (Leave calls %d, as before the conflicts)", reg.count())
	}
}
