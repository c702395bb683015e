// Package dueindex turns time into ticks for the tasks that are due.
//
// The Ticker actor ticks every interval (the first tick one interval after
// it starts, R1) and broadcasts each tick to the Shard actors. A Shard keeps
// the due-time index of its tasks — a min-heap of (nextRun, task ID) — and
// hands a Tick only to the tasks whose nextRun is at or before the tick's
// instant, so a tick costs work in proportion to the due tasks, not to all
// tasks. A task answers every Tick with a Track of its new nextRun (or
// inactive); entries made stale by a later Track are skipped lazily.
//
// The index knows tasks by ID, not by actor: a task that is resting has no
// actor in memory and stays in the index. The shard hands each due task's
// Tick to Shard.Deliver, which the scheduler injects: it finds the task's
// actor, or starts one from what the scheduler keeps of the task, and sends
// the Tick to it, ordered with the task's leaving like every other message
// for it (package scheduler, docs/architecture.md).
//
// Every message is sent with package counted, so the virtual clock sees
// ticks in flight (see package clock); Deliver sends the Tick counted while
// the shard's own tick is still counted, so the count never drops to zero
// between the two.
//
// Concurrency: each actor processes one message at a time; the message
// types are values.
package dueindex

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/cronactor/cronactor/internal/heapq"
	"github.com/google/uuid"
)

// Tick tells a due task actor that the clock ticked at At. At is the tick's
// own instant, which may be earlier than the moment the task processes it:
// decisions use At (R1).
type Tick struct{ At time.Time }

// Track tells a shard when a task is next due, and the queue its runs
// wait in (see Shard.Room). Active false removes it.
type Track struct {
	TaskID  uuid.UUID
	NextRun time.Time
	Active  bool
	Queue   string
}

// Entry is a task in the index: due at NextRun; its runs wait in Queue.
type Entry struct {
	TaskID  uuid.UUID
	NextRun time.Time
	Queue   string
}

// DeliverFunc hands task id, whose runs wait in queue, the Tick of a tick
// it is due at, counted (see package counted): to its actor, started if it
// has none.
type DeliverFunc func(id uuid.UUID, queue string, t Tick)

// RoomFunc reports whether the scheduler can take another woken task of
// queue now (see Shard.Room).
type RoomFunc func(queue string) bool

// Resume tells a shard that was out of room (Shard.Room) to go on
// delivering the ticks it held back.
type Resume struct{}

// StopTicking is sent to the ticker to stop (graceful shutdown); a request
// is answered with true.
type StopTicking struct{}

// fire is the ticker's own timer message.
type fire struct{ at time.Time }

// shardTick is a tick broadcast to the shards.
type shardTick struct{ at time.Time }

// Ticker is the clock actor: every Interval it broadcasts a tick to the
// shards. Ticks are scheduled from the start time, so they do not drift.
//
// A tick is decided at its scheduled instant (start + n·Interval) when the
// ticker handles its timer less than StallAfter(Interval) after it: a
// timer a few milliseconds late, or a busy moment (a collector pause, a
// compaction, a loaded machine), changes no decision, and the instants a
// busy moment passed over are still sent, each with its own instant (R1).
// Handled that late or later, the process did not run meanwhile (SIGSTOP,
// a paused VM, a cgroup freeze, a swap storm): the instants passed over
// are gone, and sending them now one after the other would have every due
// task decide at a stale instant — a run "on time" with a next_run already
// past, then the real catch-up dropped as too soon. Such a tick is one
// tick at the instant it is handled, so each task sees the stall as R8
// sees a downtime (one run, counting the intervals it missed), and the
// grid starts again from that instant: the ticks after it are an Interval
// apart. Under the virtual clock timers fire on time (but after
// Virtual.Freeze), so simulations tick on the grid.
type Ticker struct {
	Archetype archetype.Archetype
	Interval  time.Duration
	Shards    []*actor.PID

	start time.Time
	n     int64
	timer clock.Timer
	pid   *actor.PID
	sys   *actor.ActorSystem
}

// Receive implements actor.Actor.
func (t *Ticker) Receive(ctx actor.Context) {
	if counted.Counted(ctx.Message()) {
		defer t.Archetype.Clock.End()
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		t.start, t.pid, t.sys = t.Archetype.Clock.Now(), ctx.Self(), ctx.ActorSystem()
		t.arm()
	case fire:
		if t.timer == nil {
			return // stopped
		}
		at := m.at
		if now := t.Archetype.Clock.Now(); now.Sub(at) >= StallAfter(t.Interval) {
			// A stall: one tick now, and the grid from here (see Ticker).
			at, t.start, t.n = now, now, 0
		}
		for _, s := range t.Shards {
			counted.Send(t.Archetype.Clock, ctx, s, shardTick{at: at})
		}
		t.arm()
	case StopTicking:
		t.stop()
		if ctx.Sender() != nil {
			ctx.Respond(true)
		}
	case *actor.Stopping:
		t.stop()
	}
}

// MinStall is the least lateness of a tick taken for a stall (see
// Ticker): below it, a tick decided at its own instant leaves every task a
// next run after the moment it is decided — no task may run more often
// than once a second (rules.MinInterval) — and the busy moments of a
// loaded machine (bench lag's 25 ms ticks have seen 130–480 ms,
// docs/performance.md) keep their ticks on the grid.
const MinStall = time.Second

// StallAfter is how late a tick of a ticker ticking every interval must
// be handled to be taken for a stall: an interval, and at least MinStall.
// Less late, the tick keeps its instant, and the instants of the grid
// that have passed meanwhile too (a busy moment longer than a short
// interval) follow at once, each with its own.
func StallAfter(interval time.Duration) time.Duration { return max(interval, MinStall) }

func (t *Ticker) stop() {
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
}

func (t *Ticker) arm() {
	t.n++
	at := t.start.Add(time.Duration(t.n) * t.Interval)
	t.timer = t.Archetype.Clock.AfterFunc(at.Sub(t.Archetype.Clock.Now()), func() {
		counted.Send(t.Archetype.Clock, t.sys.Root, t.pid, fire{at: at})
	})
}

// Shard keeps the due-time index of its tasks and passes a tick only to the
// tasks that are due.
type Shard struct {
	Archetype archetype.Archetype
	// Deliver hands a due task its Tick. Required. It is called on the
	// shard's goroutine, one task at a time, in the order the tasks fall
	// due (ties in the order of their IDs' text), but for those Room held
	// back.
	Deliver DeliverFunc
	// Room, if set, is asked before each delivery, with the task's queue:
	// false holds that task back, and every later due task of the same
	// queue behind it, each with the instant of the tick it fell due at,
	// until a Resume or the next tick, which deliver them first, in their
	// order (a task whose queue changes while it is held back stays in the
	// queue it was held back in). Tasks of other queues go on. So a wave
	// of due tasks wakes no more actors at once than the scheduler has
	// room for in each queue (back-pressure), a slow queue's backlog holds
	// back no other queue, and every task still decides at the instant of
	// the tick it fell due at (R1). Nil: always room.
	Room RoomFunc
	// Initial are the tasks in the index when the shard starts (recovery
	// puts them there without a message each). The shard drops the slice
	// once it has read it.
	Initial []Entry

	due  dueHeap
	next map[uuid.UUID]tracked // current nextRun and queue per tracked task
	// queues are the queues' names by number, and queueNum their
	// numbers by name (numbered as the shard first meets them).
	queues   []string
	queueNum map[string]uint32
	// held are the due tasks Room held back, by queue number: each
	// queue's in the order they fell due, with their tick's instant.
	held []heldQueue
}

type dueItem struct {
	at int64
	id uuid.UUID
}

// tracked is a task in the index: its nextRun as nanos (see nanos) and its
// queue's number.
type tracked struct {
	at int64
	q  uint32
}

// heldQueue is one queue's held-back due tasks, oldest tick first.
type heldQueue []heldBatch

// heldBatch are the due tasks of one tick that Room held back: items[head:]
// are still to deliver.
type heldBatch struct {
	tick  time.Time
	items []dueItem
	head  int
}

// nanos is t as Unix nanoseconds, clamped to what an int64 holds: a time
// past 2262 sorts last and is never due, which is all the index needs.
// Both the heap and the map hold the same clamped value, so the staleness
// check stays exact.
func nanos(t time.Time) int64 {
	switch {
	case t.Year() >= 2262:
		return math.MaxInt64
	case t.Year() < 1678:
		return math.MinInt64
	}
	return t.UnixNano()
}

// Receive implements actor.Actor.
func (s *Shard) Receive(ctx actor.Context) {
	if counted.Counted(ctx.Message()) {
		defer s.Archetype.Clock.End()
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		s.next = make(map[uuid.UUID]tracked, len(s.Initial))
		s.due = make(dueHeap, 0, len(s.Initial))
		for _, e := range s.Initial {
			at := nanos(e.NextRun)
			s.next[e.TaskID] = tracked{at: at, q: s.queueOf(e.Queue)}
			s.due = append(s.due, dueItem{at: at, id: e.TaskID})
		}
		s.Initial = nil
		heapq.Init(s.due, dueBefore)
	case Track:
		if !m.Active {
			delete(s.next, m.TaskID)
			return
		}
		t := tracked{at: nanos(m.NextRun), q: s.queueOf(m.Queue)}
		cur, ok := s.next[m.TaskID]
		s.next[m.TaskID] = t
		if ok && cur.at == t.at {
			// The same time, at most another queue: the task's item in
			// the heap stands (it is delivered in the queue it then
			// has), or the one held back does, in the queue it was held
			// back in, with the instant of the tick it fell due at.
			return
		}
		s.due = heapq.Push(s.due, dueItem{at: t.at, id: m.TaskID}, dueBefore)
	case shardTick:
		s.drainHeld()
		s.deliver(m.at)
	case Resume:
		s.drainHeld()
	}
}

// queueOf is the number of the queue named name.
func (s *Shard) queueOf(name string) uint32 {
	if q, ok := s.queueNum[name]; ok {
		return q
	}
	if s.queueNum == nil {
		s.queueNum = map[string]uint32{}
	}
	q := uint32(len(s.queues))
	s.queues = append(s.queues, name)
	s.queueNum[name] = q
	return q
}

// deliver hands every task due at or before tick its Tick with the tick's
// instant, but those whose queue has no room (Room) or has tasks held back
// already: those are held back.
func (s *Shard) deliver(tick time.Time) {
	at := nanos(tick)
	for len(s.due) > 0 && s.due[0].at <= at {
		var it dueItem
		s.due, it = heapq.Pop(s.due, dueBefore)
		cur, ok := s.next[it.id]
		if !ok || cur.at != it.at {
			continue // stale: the task moved or left
		}
		if s.isHolding(cur.q) || (s.Room != nil && !s.Room(s.queues[cur.q])) {
			s.hold(cur.q, tick, it)
			continue
		}
		// The task answers with a Track for its new nextRun.
		delete(s.next, it.id)
		s.Deliver(it.id, s.queues[cur.q], Tick{At: tick})
	}
}

// isHolding reports whether queue q has tasks held back.
func (s *Shard) isHolding(q uint32) bool { return int(q) < len(s.held) && len(s.held[q]) > 0 }

// hold holds the due task it of queue q back, due at tick.
func (s *Shard) hold(q uint32, tick time.Time, it dueItem) {
	for int(q) >= len(s.held) {
		s.held = append(s.held, nil)
	}
	h := s.held[q]
	if n := len(h); n == 0 || !h[n-1].tick.Equal(tick) {
		h = append(h, heldBatch{tick: tick})
	}
	b := &h[len(h)-1]
	b.items = append(b.items, it)
	s.held[q] = h
}

// drainHeld delivers the tasks held back, queue by queue, while their
// queue has room.
func (s *Shard) drainHeld() {
	for q := range s.held {
		if len(s.held[q]) > 0 {
			s.drain(uint32(q))
		}
	}
}

// drain delivers queue q's held-back tasks in their order, each with the
// instant of its tick, while q has room. A task that moved or left since
// is stale here and skipped; one whose queue changed since is still
// delivered here.
func (s *Shard) drain(q uint32) {
	name := s.queues[q]
	h := s.held[q]
	for len(h) > 0 {
		b := &h[0]
		for b.head < len(b.items) {
			it := b.items[b.head]
			if cur, ok := s.next[it.id]; !ok || cur.at != it.at {
				b.head++
				continue
			}
			if s.Room != nil && !s.Room(name) {
				s.held[q] = h
				return
			}
			b.head++
			delete(s.next, it.id)
			s.Deliver(it.id, name, Tick{At: b.tick})
		}
		h[0] = heldBatch{} // let its items go
		h = h[1:]
	}
	s.held[q] = nil
}

type dueHeap []dueItem

// dueBefore orders the due-time heap: the earliest first, then by ID.
func dueBefore(a, b *dueItem) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	// The bytes in order sort as the IDs' text does (fixed-width lowercase
	// hex), without formatting two strings per comparison: all tasks due
	// at one instant compare here. As two big-endian words: the bytes'
	// order, without a call to bytes.Compare for each comparison.
	if x, y := binary.BigEndian.Uint64(a.id[:8]), binary.BigEndian.Uint64(b.id[:8]); x != y {
		return x < y
	}
	return binary.BigEndian.Uint64(a.id[8:]) < binary.BigEndian.Uint64(b.id[8:])
}
