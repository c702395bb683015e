package dueindex_test

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/actors/task/rules"
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

// newSystem is an actor system on a virtual clock at t0, with the clock
// watching its dead letters, and the archetype of that clock.
func newSystem() (*clock.Virtual, *actor.ActorSystem, archetype.Archetype) {
	clk := clock.NewVirtual(t0)
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	counted.Watch(sys, clk)
	return clk, sys, archetype.Archetype{Clock: clk}
}

// startShard spawns a shard with deliver, room and initial, and a ticker
// that ticks it every 10 s; it returns the shard.
func startShard(clk *clock.Virtual, sys *actor.ActorSystem, arch archetype.Archetype, deliver dueindex.DeliverFunc, room dueindex.RoomFunc, initial []dueindex.Entry) *actor.PID {
	shard := counted.Spawn(clk, sys.Root, actor.PropsFromProducer(func() actor.Actor {
		return &dueindex.Shard{Archetype: arch, Deliver: deliver, Room: room, Initial: initial}
	}))
	counted.Spawn(clk, sys.Root, actor.PropsFromProducer(func() actor.Actor {
		return &dueindex.Ticker{Archetype: arch, Interval: 10 * time.Second, Shards: []*actor.PID{shard}}
	}))
	return shard
}

// orderedID is the i-th (0–9) of IDs that a shard delivers in the order
// of i when they fall due at one instant.
func orderedID(i int) uuid.UUID {
	return uuid.MustParse(fmt.Sprintf("0000000%d-0000-0000-0000-000000000000", i))
}

// TestShardTicksDueTasksOnly: ticks reach only the tasks due at the tick's
// instant, carrying that instant, through Deliver; tasks the shard starts
// with are in the index; a Track at the same time changes nothing, one at a
// new time moves the task, an inactive one takes it out.
func TestShardTicksDueTasksOnly(t *testing.T) {
	clk, sys, arch := newSystem()
	var mu sync.Mutex
	var got []string
	spawn := func(name string) *actor.PID {
		return counted.Spawn(clk, sys.Root, actor.PropsFromProducer(func() actor.Actor { return recorder{clk: clk, mu: &mu, name: name, got: &got} }))
	}
	ida, idb, idc := uuid.New(), uuid.New(), uuid.New()
	pids := map[uuid.UUID]*actor.PID{ida: spawn("a"), idb: spawn("b"), idc: spawn("c")}
	deliver := func(id uuid.UUID, _ string, tk dueindex.Tick) { counted.Send(clk, sys.Root, pids[id], tk) }
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

// TestShardHoldsDueTasksBackWithoutRoom: while Room says no, due tasks
// stay in the index; a Resume delivers them with the instant of the tick
// they fell due at, and so does the next tick, before its own due tasks.
func TestShardHoldsDueTasksBackWithoutRoom(t *testing.T) {
	clk, sys, arch := newSystem()
	var mu sync.Mutex
	var got []string
	names := map[uuid.UUID]string{}
	ids := make([]uuid.UUID, 5)
	for i := range ids {
		ids[i] = orderedID(i)
		names[ids[i]] = string(rune('a' + i))
	}
	room := 2 // deliveries allowed until the test gives more
	deliver := func(id uuid.UUID, _ string, tk dueindex.Tick) {
		mu.Lock()
		defer mu.Unlock()
		room--
		got = append(got, names[id]+" tick "+tk.At.Sub(t0).String())
	}
	hasRoom := func(string) bool {
		mu.Lock()
		defer mu.Unlock()
		return room > 0
	}
	setRoom := func(n int) {
		mu.Lock()
		room = n
		mu.Unlock()
	}
	var initial []dueindex.Entry
	for _, id := range ids[:4] {
		initial = append(initial, dueindex.Entry{TaskID: id, NextRun: t0.Add(10 * time.Second)})
	}
	initial = append(initial, dueindex.Entry{TaskID: ids[4], NextRun: t0.Add(15 * time.Second)})
	shard := startShard(clk, sys, arch, deliver, hasRoom, initial)
	clk.RunUntil(t0.Add(12 * time.Second))
	check := func(when string, want ...string) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(got, want) {
			t.Fatalf("%s: got %q, want %q", when, got, want)
		}
	}
	check("at 12s, room for two", "a tick 10s", "b tick 10s")
	setRoom(1)
	counted.Send(clk, sys.Root, shard, dueindex.Resume{})
	clk.Quiesce()
	check("after a Resume with room for one", "a tick 10s", "b tick 10s", "c tick 10s")
	setRoom(10)
	clk.RunUntil(t0.Add(25 * time.Second))
	check("at the next tick", "a tick 10s", "b tick 10s", "c tick 10s", "d tick 10s", "e tick 20s")
}

// TestShardHoldsBackOnlyTheQueueWithoutRoom: Room says no for queue
// "slow" only. Its due tasks are held back, in their order and each with
// its tick's instant, over two ticks; the due tasks of queue "fast" behind
// them go on. A held task that leaves is not delivered, nor is one that
// moves to a later time; one whose Track moves it to another time and to
// "fast" is delivered there, at the tick that finds it due; one whose
// Track changes only its queue stays held back in "slow", with the
// instant of the tick it fell due at (R1).
func TestShardHoldsBackOnlyTheQueueWithoutRoom(t *testing.T) {
	clk, sys, arch := newSystem()
	var mu sync.Mutex
	var got []string
	slowRoom := 1
	names := map[uuid.UUID]string{}
	id := func(i int, name string) uuid.UUID {
		u := orderedID(i)
		names[u] = name
		return u
	}
	deliver := func(id uuid.UUID, queue string, tk dueindex.Tick) {
		mu.Lock()
		defer mu.Unlock()
		if queue == "slow" {
			slowRoom--
		}
		got = append(got, names[id]+"@"+queue+" "+tk.At.Sub(t0).String())
	}
	room := func(queue string) bool {
		mu.Lock()
		defer mu.Unlock()
		return queue != "slow" || slowRoom > 0
	}
	setSlowRoom := func(n int) {
		mu.Lock()
		slowRoom = n
		mu.Unlock()
	}
	s1, s2, s3, s4, s5 := id(1, "s1"), id(2, "s2"), id(3, "s3"), id(4, "s4"), id(5, "s5")
	f1, f2, s6 := id(6, "f1"), id(7, "f2"), id(8, "s6")
	initial := []dueindex.Entry{
		{TaskID: s6, NextRun: t0.Add(10 * time.Second), Queue: "slow"},
		{TaskID: s1, NextRun: t0.Add(10 * time.Second), Queue: "slow"},
		{TaskID: s2, NextRun: t0.Add(10 * time.Second), Queue: "slow"},
		{TaskID: s3, NextRun: t0.Add(10 * time.Second), Queue: "slow"},
		{TaskID: s5, NextRun: t0.Add(10 * time.Second), Queue: "slow"},
		{TaskID: f1, NextRun: t0.Add(10 * time.Second), Queue: "fast"},
		{TaskID: s4, NextRun: t0.Add(20 * time.Second), Queue: "slow"},
		{TaskID: f2, NextRun: t0.Add(20 * time.Second), Queue: "fast"},
	}
	shard := startShard(clk, sys, arch, deliver, room, initial)
	check := func(when string, want ...string) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(got, want) {
			t.Fatalf("%s:\ngot  %q\nwant %q", when, got, want)
		}
	}
	clk.RunUntil(t0.Add(12 * time.Second))
	check("at 12s, room for one slow task", "s1@slow 10s", "f1@fast 10s")
	// Held back: s2 leaves; s3 changes only its queue; s5 moves to 15s
	// and to the fast queue; s6 moves to 40s.
	counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: s2, Active: false})
	counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: s3, NextRun: t0.Add(10 * time.Second), Active: true, Queue: "fast"})
	counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: s5, NextRun: t0.Add(15 * time.Second), Active: true, Queue: "fast"})
	counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: s6, NextRun: t0.Add(40 * time.Second), Active: true, Queue: "slow"})
	setSlowRoom(0)
	clk.RunUntil(t0.Add(22 * time.Second))
	check("at 22s, no room for slow tasks",
		"s1@slow 10s", "f1@fast 10s", "s5@fast 20s", "f2@fast 20s")
	setSlowRoom(5)
	counted.Send(clk, sys.Root, shard, dueindex.Resume{})
	clk.Quiesce()
	check("after a Resume with room",
		"s1@slow 10s", "f1@fast 10s", "s5@fast 20s", "f2@fast 20s", "s3@slow 10s", "s4@slow 20s")
}

// TestShardKeepsAQueuesOrderWhenRoomComesBack: Room says no once, then
// yes. The task it refused is held back, and the one due at the same tick
// behind it waits behind it, though there is room by then: both are
// delivered at the next tick, in their order, with their tick's instant.
func TestShardKeepsAQueuesOrderWhenRoomComesBack(t *testing.T) {
	clk, sys, arch := newSystem()
	var mu sync.Mutex
	var got []string
	refuse := 1
	names := map[uuid.UUID]string{}
	var initial []dueindex.Entry
	for i, name := range []string{"a", "b"} {
		u := orderedID(i)
		names[u] = name
		initial = append(initial, dueindex.Entry{TaskID: u, NextRun: t0.Add(10 * time.Second), Queue: "q"})
	}
	deliver := func(id uuid.UUID, queue string, tk dueindex.Tick) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, names[id]+" "+tk.At.Sub(t0).String())
	}
	room := func(string) bool {
		mu.Lock()
		defer mu.Unlock()
		refuse--
		return refuse < 0
	}
	startShard(clk, sys, arch, deliver, room, initial)
	clk.RunUntil(t0.Add(25 * time.Second))
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"a 10s", "b 10s"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestTickerDecidesALateTickWhenItFires: a tick whose timer fires less
// than an interval late keeps its own instant, and the grid stands; one
// that fires an interval or more late (the process was frozen) is one tick
// at the instant it fires — not one tick per instant passed over, at
// instants already gone — and the ticks after it go on an interval apart
// from it.
func TestTickerDecidesALateTickWhenItFires(t *testing.T) {
	clk, sys, arch := newSystem()
	var mu sync.Mutex
	var got []string
	id := uuid.New()
	var shard *actor.PID
	// The task is due again as soon as it has had a tick (a 1 s task on a
	// 10 s tick), so every tick the shard gets reaches it.
	deliver := func(id uuid.UUID, _ string, tk dueindex.Tick) {
		mu.Lock()
		got = append(got, tk.At.Sub(t0).String())
		mu.Unlock()
		counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: id, NextRun: tk.At.Add(time.Second), Active: true})
	}
	shard = startShard(clk, sys, arch, deliver, nil, []dueindex.Entry{{TaskID: id, NextRun: t0}})
	clk.RunUntil(t0.Add(10 * time.Second)) // tick 10s, on time
	clk.Freeze(15 * time.Second)           // 25s: the 20s tick is 5 s late
	clk.RunUntil(t0.Add(25 * time.Second))
	clk.Freeze(45 * time.Second) // 70s: the 30s tick is 40 s late
	clk.RunUntil(t0.Add(85 * time.Second))
	mu.Lock()
	defer mu.Unlock()
	want := []string{"10s", "20s", "1m10s", "1m20s"}
	if !slices.Equal(got, want) {
		t.Fatalf("ticks at %v, want %v", got, want)
	}
}

// TestTickerKeepsTheGridThroughABusyMoment: with a tick shorter than
// MinStall, a tick handled later than an interval but less than MinStall
// late is no stall: it and the instants passed over meanwhile are sent,
// each with its own instant, on the grid. MinStall late or more is a
// stall: one tick when handled, the grid from there.
func TestTickerKeepsTheGridThroughABusyMoment(t *testing.T) {
	clk, sys, arch := newSystem()
	var mu sync.Mutex
	var got []string
	id := uuid.New()
	var shard *actor.PID
	deliver := func(id uuid.UUID, _ string, tk dueindex.Tick) {
		mu.Lock()
		got = append(got, tk.At.Sub(t0).String())
		mu.Unlock()
		counted.Send(clk, sys.Root, shard, dueindex.Track{TaskID: id, NextRun: tk.At.Add(time.Millisecond), Active: true})
	}
	shard = counted.Spawn(clk, sys.Root, actor.PropsFromProducer(func() actor.Actor {
		return &dueindex.Shard{Archetype: arch, Deliver: deliver, Initial: []dueindex.Entry{{TaskID: id, NextRun: t0}}}
	}))
	counted.Spawn(clk, sys.Root, actor.PropsFromProducer(func() actor.Actor {
		return &dueindex.Ticker{Archetype: arch, Interval: 100 * time.Millisecond, Shards: []*actor.PID{shard}}
	}))
	clk.RunUntil(t0.Add(100 * time.Millisecond))
	clk.Freeze(450 * time.Millisecond) // 550ms: the 200ms tick is 350 ms late
	clk.RunUntil(t0.Add(600 * time.Millisecond))
	clk.Freeze(dueindex.MinStall + 400*time.Millisecond) // 2s: the 700ms tick is 1.3 s late
	clk.RunUntil(t0.Add(2100 * time.Millisecond))
	mu.Lock()
	defer mu.Unlock()
	want := []string{"100ms", "200ms", "300ms", "400ms", "500ms", "600ms", "2s", "2.1s"}
	if !slices.Equal(got, want) {
		t.Fatalf("ticks at %v, want %v", got, want)
	}
	if dueindex.MinStall > rules.MinInterval {
		t.Fatalf("MinStall %s is above rules.MinInterval %s: a tick less late than a stall could leave a task a next run already past", dueindex.MinStall, rules.MinInterval)
	}
}
