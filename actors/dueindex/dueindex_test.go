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
	default:
		return
	}
	r.mu.Lock()
	*r.got = append(*r.got, s)
	r.mu.Unlock()
}

// TestShardTicksDueTasksOnly: ticks reach only the tasks due at the tick's
// instant, carrying that instant, through Deliver; tasks the shard starts
// with are in the index; a Track at the same time changes nothing, one at a
// new time moves the task, an inactive one takes it out.
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
	ida, idb, idc := uuid.New(), uuid.New(), uuid.New()
	pids := map[uuid.UUID]*actor.PID{ida: spawn("a"), idb: spawn("b"), idc: spawn("c")}
	deliver := func(id uuid.UUID, tk dueindex.Tick) { counted.Send(clk, sys.Root, pids[id], tk) }
	shard := counted.Spawn(clk, sys.Root, actor.PropsFromProducer(func() actor.Actor {
		return &dueindex.Shard{Archetype: arch, Deliver: deliver,
			Initial: []dueindex.Entry{{TaskID: idc, NextRun: t0.Add(20 * time.Second)}}}
	}))
	counted.Spawn(clk, sys.Root, actor.PropsFromProducer(func() actor.Actor {
		return &dueindex.Ticker{Archetype: arch, Interval: 10 * time.Second, Shards: []*actor.PID{shard}}
	}))
	counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: ida, NextRun: t0.Add(10 * time.Second), Active: true})
	counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: idb, NextRun: t0.Add(25 * time.Second), Active: true})
	// The same time again: still one tick.
	counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: ida, NextRun: t0.Add(10 * time.Second), Active: true})
	clk.RunUntil(t0.Add(15 * time.Second))
	counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: idb, Active: false})
	counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: ida, NextRun: t0.Add(40 * time.Second), Active: true})
	counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: ida, NextRun: t0.Add(35 * time.Second), Active: true})
	clk.RunUntil(t0.Add(50 * time.Second))
	want := []string{"a tick 10s", "c tick 20s", "a tick 40s"}
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
