package scheduler_test

import (
	"context"
	"io"
	"log/slog"
	"runtime/debug"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
)

// TestStopRemovesItsSubscribers starts and stops schedulers in one host
// actor system, each creating and triggering a task (so that every
// dead-letter watcher a scheduler needs is installed): once each has
// stopped, the system's event stream has exactly the subscribers it had
// before, so a host that starts schedulers again and again does not
// accumulate them.
func TestStopRemovesItsSubscribers(t *testing.T) {
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	t.Cleanup(sys.Shutdown)
	before := sys.EventStream.Length()
	for i := range 5 {
		clk := clock.NewVirtual(t0)
		s := hostScheduler(t, sys, clk)
		ctx := context.Background()
		tk, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: "n", Owner: "o", Kind: "noop", Interval: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Trigger(ctx, tk.ID); err != nil {
			t.Fatal(err)
		}
		clk.Quiesce()
		if during := sys.EventStream.Length(); during <= before {
			t.Fatalf("round %d: %d subscribers while running, %d before: the scheduler watches no dead letters?", i, during, before)
		}
		if err := s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
		if after := sys.EventStream.Length(); after != before {
			t.Fatalf("round %d: %d subscribers after Stop, %d before Start", i, after, before)
		}
	}
}

// gcSpy is a store that notes the GC target in force while the scheduler
// reads the log (recovery).
type gcSpy struct {
	events.Store
	seen []int
}

func (g *gcSpy) ReadAll(ctx context.Context, after events.Position, limit int) ([]events.Recorded, error) {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	g.seen = append(g.seen, p)
	return g.Store.ReadAll(ctx, after, limit)
}

// TestStartLeavesTheGCAlone: without Config.RecoveryGC, Start reads the
// log at the process's own GC target; with it, the hook is called before
// the log is read and its restore once Start is done.
func TestStartLeavesTheGCAlone(t *testing.T) {
	const own = 137
	prev := debug.SetGCPercent(own)
	defer debug.SetGCPercent(prev)
	for _, hooked := range []bool{false, true} {
		spy := &gcSpy{Store: memStore(t)}
		cfg := scheduler.Config{Store: spy, Clock: clock.NewVirtual(t0)}
		var called, restored int
		if hooked {
			cfg.RecoveryGC = func() func() {
				called++
				p := debug.SetGCPercent(400)
				return func() { restored++; debug.SetGCPercent(p) }
			}
		}
		s, err := scheduler.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := own
		if hooked {
			want = 400
		}
		if len(spy.seen) == 0 {
			t.Fatal("Start read no log")
		}
		for _, p := range spy.seen {
			if p != want {
				t.Errorf("hooked %v: the log was read at GC target %d, want %d", hooked, p, want)
			}
		}
		if hooked && (called != 1 || restored != 1) {
			t.Errorf("RecoveryGC called %d times, its restore %d; want 1 and 1", called, restored)
		}
		if p := debug.SetGCPercent(own); p != own {
			t.Errorf("hooked %v: after Start the GC target is %d, want the process's %d", hooked, p, own)
		}
		if err := s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
