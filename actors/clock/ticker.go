package clock

import (
	"container/heap"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/uuid"
)

// Send counts msg as in flight on c and sends it; the receiving actor ends
// the count when it has processed it (see Counted).
func Send(c Clock, ctx actor.SenderContext, pid *actor.PID, msg any) {
	c.Begin()
	ctx.Send(pid, msg)
}

// Request counts msg as in flight, sends it and waits for the reply.
func Request(c Clock, ctx actor.SenderContext, pid *actor.PID, msg any, timeout time.Duration) (any, error) {
	c.Begin()
	return ctx.RequestFuture(pid, msg, timeout).Result()
}

// Spawn counts the new actor's start as in flight and spawns it; the actor
// ends the count when it has processed *actor.Started.
func Spawn(c Clock, ctx actor.SpawnerContext, props *actor.Props) *actor.PID {
	c.Begin()
	return ctx.Spawn(props)
}

// Counted reports whether msg is one of ours (sent with Send or Request, or
// the *actor.Started of an actor spawned with Spawn) rather than another
// lifecycle message of the actor system. Actors end the count of counted
// messages once processed:
//
//	if clock.Counted(ctx.Message()) { defer c.End() }
func Counted(msg any) bool {
	switch msg.(type) {
	case *actor.Stopping, *actor.Stopped, *actor.Restarting,
		*actor.PoisonPill, *actor.Terminated, *actor.ReceiveTimeout:
		return false
	}
	return true
}

// Tick tells a due task actor that the clock ticked at At.
type Tick struct{ At time.Time }

// Track tells a shard when a task is next due. Active false removes it.
type Track struct {
	TaskID  uuid.UUID
	PID     *actor.PID
	NextRun time.Time
	Active  bool
}

// fire is the ticker's own timer message.
type fire struct{ at time.Time }

// shardTick is a tick broadcast to the shards.
type shardTick struct{ at time.Time }

// Ticker is the clock actor: every interval it broadcasts a tick to the
// shards; the first tick comes one interval after start (R1). Ticks are
// scheduled from the start time, so they do not drift.
type Ticker struct {
	Clock    Clock
	Interval time.Duration
	Shards   []*actor.PID

	start time.Time
	n     int64
	timer Timer
	pid   *actor.PID
	sys   *actor.ActorSystem
}

// StopTicking is sent to the ticker to stop (graceful shutdown).
type StopTicking struct{}

// Receive implements actor.Actor.
func (t *Ticker) Receive(ctx actor.Context) {
	if Counted(ctx.Message()) {
		defer t.Clock.End()
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		t.start, t.pid, t.sys = t.Clock.Now(), ctx.Self(), ctx.ActorSystem()
		t.arm()
	case fire:
		if t.timer == nil {
			return // stopped
		}
		for _, s := range t.Shards {
			Send(t.Clock, ctx, s, shardTick{at: m.at})
		}
		t.arm()
	case StopTicking:
		if t.timer != nil {
			t.timer.Stop()
			t.timer = nil
		}
		if ctx.Sender() != nil {
			ctx.Respond(true)
		}
	}
}

func (t *Ticker) arm() {
	t.n++
	at := t.start.Add(time.Duration(t.n) * t.Interval)
	t.timer = t.Clock.AfterFunc(at.Sub(t.Clock.Now()), func() {
		Send(t.Clock, t.sys.Root, t.pid, fire{at: at})
	})
}

// Shard keeps the due-time index of its tasks and passes a tick only to the
// tasks that are due, so a tick costs work in proportion to the due tasks.
type Shard struct {
	Clock Clock

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
	if Counted(ctx.Message()) {
		defer s.Clock.End()
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
			return
		}
		s.next[m.TaskID] = dueEntry{at: m.NextRun, pid: m.PID}
		heap.Push(&s.due, dueItem{at: m.NextRun, id: m.TaskID})
	case shardTick:
		for len(s.due) > 0 && !s.due[0].at.After(m.at) {
			it := heap.Pop(&s.due).(dueItem)
			cur, ok := s.next[it.id]
			if !ok || !cur.at.Equal(it.at) {
				continue // stale: the task moved or left
			}
			// The task answers with a Track for its new nextRun.
			delete(s.next, it.id)
			Send(s.Clock, ctx, cur.pid, Tick{At: m.at})
		}
	}
}

type dueHeap []dueItem

func (h dueHeap) Len() int { return len(h) }
func (h dueHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].id.String() < h[j].id.String()
}
func (h dueHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *dueHeap) Push(x any)   { *h = append(*h, x.(dueItem)) }
func (h *dueHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
