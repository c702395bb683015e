// Package dueindex turns time into ticks for the tasks that are due.
//
// The Ticker actor ticks every interval (the first tick one interval after
// it starts, R1) and broadcasts each tick to the Shard actors. A Shard keeps
// the due-time index of its tasks — a min-heap of (nextRun, task) — and
// sends a Tick only to the tasks whose nextRun is at or before the tick's
// instant, so a tick costs work in proportion to the due tasks, not to all
// tasks. A task answers every Tick with a Track of its new nextRun (or
// inactive); entries made stale by a later Track are skipped lazily.
//
// A task actor that is about to stop sends Untrack; the shard answers
// Untracked once the task is out of its index, and since messages between
// two actors arrive in order, no Tick from that shard can reach the task
// after the answer.
//
// Every message is sent with package counted, so the virtual clock sees
// ticks in flight (see package clock).
//
// Concurrency: each actor processes one message at a time; the message
// types are values.
package dueindex

import (
	"bytes"
	"container/heap"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

// Tick tells a due task actor that the clock ticked at At. At is the tick's
// own instant, which may be earlier than the moment the task processes it:
// decisions use At (R1).
type Tick struct{ At time.Time }

// Track tells a shard when a task is next due. Active false removes it.
type Track struct {
	TaskID  uuid.UUID
	PID     *actor.PID
	NextRun time.Time
	Active  bool
}

// Untrack removes a task from the index; the shard answers the sender with
// Untracked.
type Untrack struct {
	TaskID uuid.UUID
	PID    *actor.PID
}

// Untracked answers Untrack: no Tick for that task follows it.
type Untracked struct{ TaskID uuid.UUID }

// StopTicking is sent to the ticker to stop (graceful shutdown); a request
// is answered with true.
type StopTicking struct{}

// fire is the ticker's own timer message.
type fire struct{ at time.Time }

// shardTick is a tick broadcast to the shards.
type shardTick struct{ at time.Time }

// Ticker is the clock actor: every Interval it broadcasts a tick to the
// shards. Ticks are scheduled from the start time, so they do not drift.
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
		for _, s := range t.Shards {
			counted.Send(t.Archetype.Clock, ctx, s, shardTick(m))
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

	due  dueHeap
	next map[uuid.UUID]dueEntry // current nextRun per tracked task
}

type dueEntry struct {
	at  time.Time
	pid *actor.PID
}

type dueItem struct {
	at time.Time
	id uuid.UUID
}

// Receive implements actor.Actor.
func (s *Shard) Receive(ctx actor.Context) {
	if counted.Counted(ctx.Message()) {
		defer s.Archetype.Clock.End()
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		s.next = map[uuid.UUID]dueEntry{}
	case Track:
		if !m.Active {
			delete(s.next, m.TaskID)
			return
		}
		if cur, ok := s.next[m.TaskID]; ok && cur.at.Equal(m.NextRun) {
			cur.pid = m.PID // the same time, perhaps a new actor
			s.next[m.TaskID] = cur
			return
		}
		s.next[m.TaskID] = dueEntry{at: m.NextRun, pid: m.PID}
		heap.Push(&s.due, dueItem{at: m.NextRun, id: m.TaskID})
	case Untrack:
		if cur, ok := s.next[m.TaskID]; ok && cur.pid.Equal(m.PID) {
			delete(s.next, m.TaskID)
		}
		counted.Send(s.Archetype.Clock, ctx, m.PID, Untracked{TaskID: m.TaskID})
	case shardTick:
		for len(s.due) > 0 && !s.due[0].at.After(m.at) {
			it := heap.Pop(&s.due).(dueItem)
			cur, ok := s.next[it.id]
			if !ok || !cur.at.Equal(it.at) {
				continue // stale: the task moved or left
			}
			// The task answers with a Track for its new nextRun.
			delete(s.next, it.id)
			counted.Send(s.Archetype.Clock, ctx, cur.pid, Tick{At: m.at})
		}
	}
}

type dueHeap []dueItem

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	// The bytes in order sort as the IDs' text does (fixed-width lowercase
	// hex), without formatting two strings per comparison: all tasks due
	// at one instant compare here.
	return bytes.Compare(h[i].id[:], h[j].id[:]) < 0
}
func (h dueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)   { *h = append(*h, x.(dueItem)) }
func (h *dueHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
