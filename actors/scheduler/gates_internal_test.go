package scheduler

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRoomNeverGivesAPlaceTwice: shards ask for room on goroutines of
// their own, each delivery counting its actor and giving its reservation
// back, each actor leaving soon after. However their steps interleave, no
// more actors count at once than the bound. (A check of the actor count
// and the reservations read one after the other, then a reservation by
// compare-and-swap of the reservations alone, once let a third actor in
// under a bound of two: another shard's whole delivery fitted between the
// reads and the swap — TestPinnedActorsDoNotHoldAWaveBack, under load.)
func TestRoomNeverGivesAPlaceTwice(t *testing.T) {
	const bound, shards = 2, 8
	rounds := 20000
	if testing.Short() {
		rounds = 2000
	}
	s := &Scheduler{cfg: Config{MaxActiveTasks: bound}}
	g := s.gateOf("q")
	var live, peak atomic.Int64
	var wg sync.WaitGroup
	for range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				if !s.room("q") {
					runtime.Gosched()
					continue
				}
				e := &entry{}
				e.mu.Lock()
				e.count(g)
				e.mu.Unlock()
				n := live.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				s.delivered(g)
				if i%2 == 0 {
					runtime.Gosched() // an actor lives a while
				}
				live.Add(-1)
				e.mu.Lock()
				s.uncount(e)
				e.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p > bound {
		t.Fatalf("%d actors counted at once, bound %d", p, bound)
	}
	if n := g.taken.Load(); n != 0 {
		t.Fatalf("%d places still taken after every actor left", n)
	}
}
