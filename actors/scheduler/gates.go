package scheduler

import (
	"sync/atomic"

	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/internal/counted"
)

// DefaultMaxActiveTasks is Config.MaxActiveTasks when unset: a wave of due
// tasks keeps at most this many task actors (each with its open run, a few
// KiB) in memory at once per queue; 64 workers drain far fewer. A larger
// bound made a 100,000-task wave dearer (at 65,536: 60 µs of CPU per run
// against 46, the collector marking more live actors; docs/performance.md,
// "How many task actors a wave keeps").
const DefaultMaxActiveTasks = 4096

// gate is one queue's share of Config.MaxActiveTasks (see Scheduler.room).
type gate struct {
	// taken counts the places taken: by the queue's task actors that take
	// one (see entry.gate) and by the reservations room made for ticks
	// being delivered. One counter, so that room's check and its
	// reservation are one compare-and-swap: with the actors and the
	// reservations counted apart, another shard's whole delivery could
	// fit between the reads and the swap, and a place was given twice.
	taken atomic.Int64
	// actors counts the actors alone (maybeResume); starved is set while a
	// shard holds the queue's due tasks back for want of room.
	actors  atomic.Int64
	starved atomic.Bool
}

// room is the shards' dueindex.Shard.Room: whether a tick may wake one more
// task actor for queue (Config.MaxActiveTasks, per queue). A yes reserves
// a place, which the delivery that follows gives back once the actor
// counts (the shards ask on goroutines of their own). When it says no, the
// first of the queue's actors to leave once its count is down to resumeAt
// tells the shards to go on.
func (s *Scheduler) room(queue string) bool {
	g := s.gateOf(queue)
	for {
		n := g.taken.Load()
		if n >= int64(s.cfg.MaxActiveTasks) {
			g.starved.Store(true)
			// A place given back between the read and the flag would
			// not have seen it: look again.
			if g.taken.Load() >= int64(s.cfg.MaxActiveTasks) {
				return false
			}
			continue
		}
		if g.taken.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// gateOf is queue's gate, made on first use.
func (s *Scheduler) gateOf(queue string) *gate {
	if g, ok := s.gates.Load(queue); ok {
		return g.(*gate)
	}
	g, _ := s.gates.LoadOrStore(queue, &gate{})
	return g.(*gate)
}

// count makes e's actor take a place in g, unless it takes one already or
// is pinned: pinned actors stay until their task is deleted, and were they
// counted, an embedder pinning as many tasks as the bound would stop every
// tick's deliveries for good. e.mu must be held.
func (e *entry) count(g *gate) {
	if e.gate == nil && !e.pinned {
		e.gate = g
		g.taken.Add(1) // before the reservation, if any, is given back
		g.actors.Add(1)
	}
}

// uncount gives back the place e's actor takes, if any, and tells the
// shards to go on if that makes room; e.mu must be held.
func (s *Scheduler) uncount(e *entry) {
	if g := e.gate; g != nil {
		e.gate = nil
		g.actors.Add(-1)
		g.taken.Add(-1)
		s.maybeResume(g)
	}
}

// maybeResume tells the shards to go on when they held g's queue back for
// room and its actors are down to resumeAt.
func (s *Scheduler) maybeResume(g *gate) {
	if g.actors.Load() <= s.resumeAt() && g.starved.CompareAndSwap(true, false) {
		for _, sh := range s.shards {
			counted.Send(s.cfg.Clock, s.sys.Root, sh, dueindex.Resume{})
		}
	}
}

// resumeAt is the actor count at which shards held back for room go on:
// seven eighths of the bound, so that they deliver in batches.
func (s *Scheduler) resumeAt() int64 { return int64(s.cfg.MaxActiveTasks) * 7 / 8 }

// delivered gives back the place room reserved for a delivery: the actor
// counts now, or it did not take it (pinned, counted already, or the
// scheduler stopped), and the place is free again.
func (s *Scheduler) delivered(g *gate) {
	g.taken.Add(-1)
	s.maybeResume(g)
}
