package dueindex_test

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// recorder is a task stand-in: it records what it gets.
type recorder struct {
	clk  clock.Clock
	mu   *sync.Mutex
	name string
	got  *[]string
}

func (r recorder) Receive(ctx actor.Context) {
	if counted.Counted(ctx.Message()) {
		defer r.clk.End()
	}
	var s string
	switch m := ctx.Message().(type) {
	case dueindex.Tick:
		s = r.name + " tick " + m.At.Sub(t0).String()
	case dueindex.Untracked:
		s = r.name + " untracked"
	default:
		return
	}
	r.mu.Lock()
	*r.got = append(*r.got, s)
	r.mu.Unlock()
}

// TestShardTicksDueTasksOnly: ticks reach only the tasks due at the tick's
// instant, carrying that instant; a Track with the same time and a new
// actor moves the task to it; Untrack is answered and ends the ticks.
func TestShardTicksDueTasksOnly(t *testing.T) {
	clk := clock.NewVirtual(t0)
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	counted.Watch(sys, clk)
	arch := archetype.Archetype{Clock: clk}
	var mu sync.Mutex
	var got []string
	spawn := func(name string) *actor.PID {
		return counted.Spawn(clk, sys.Root, actor.PropsFromProducer(func() actor.Actor { return recorder{clk: clk, mu: &mu, name: name, got: &got} }))
	}
	shard := counted.Spawn(clk, sys.Root, actor.PropsFromProducer(func() actor.Actor { return &dueindex.Shard{Archetype: arch} }))
	counted.Spawn(clk, sys.Root, actor.PropsFromProducer(func() actor.Actor {
		return &dueindex.Ticker{Archetype: arch, Interval: 10 * time.Second, Shards: []*actor.PID{shard}}
	}))
	a, b, a2 := spawn("a"), spawn("b"), spawn("a2")
	ida, idb := uuid.New(), uuid.New()
	counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: ida, PID: a, NextRun: t0.Add(10 * time.Second), Active: true})
	counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: idb, PID: b, NextRun: t0.Add(25 * time.Second), Active: true})
	// The same time from a new actor of task a: ticks go to the new one.
	counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: ida, PID: a2, NextRun: t0.Add(10 * time.Second), Active: true})
	clk.RunUntil(t0.Add(15 * time.Second))
	counted.Send(clk, sys.Root, shard, dueindex.Untrack{TaskID: idb, PID: b})
	clk.RunUntil(t0.Add(40 * time.Second))
	want := []string{"a2 tick 10s", "b untracked"}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}
