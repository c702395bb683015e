package worker

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRunQueueOrder: whatever the mix of pushes and pops, runs leave a
// lane highest priority first, then in the order they came — a run pushed
// late with an early seq (a ready run, after its pick-up delay) included.
func TestRunQueueOrder(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		var h runQueue
		var ref []queued // what is waiting, in no order
		var delayed []queued
		var seq uint64
		for step := 0; step < 2000; step++ {
			if len(ref) == 0 || rng.IntN(3) != 0 {
				seq++
				it := queued{run: QueuedRun{Priority: rng.IntN(5) - 2}, seq: seq}
				if rng.IntN(8) == 0 {
					delayed = append(delayed, it) // pushed later, with its seq
					continue
				}
				if len(delayed) > 0 && rng.IntN(4) == 0 {
					delayed = append(delayed, it)
					it, delayed = delayed[0], delayed[1:]
				}
				h.push(it)
				ref = append(ref, it)
				continue
			}
			best := slices.IndexFunc(ref, func(q queued) bool {
				for _, o := range ref {
					if o.run.Priority > q.run.Priority || o.run.Priority == q.run.Priority && o.seq < q.seq {
						return false
					}
				}
				return true
			})
			got := h.pop()
			if got.seq != ref[best].seq {
				t.Fatalf("seed %d step %d: popped seq %d (priority %d), want seq %d (priority %d)",
					seed, step, got.seq, got.run.Priority, ref[best].seq, ref[best].run.Priority)
			}
			ref = slices.Delete(ref, best, best+1)
			if h.len() != len(ref) {
				t.Fatalf("seed %d: %d waiting, want %d", seed, h.len(), len(ref))
			}
		}
	}
}

// A level that never empties — runs keep coming while others leave — keeps
// its order and does not keep the runs taken from it.
func TestRunQueueLevelCompacts(t *testing.T) {
	var q runQueue
	var seq, next uint64
	for round := 0; round < 50; round++ {
		for range 300 {
			seq++
			q.push(queued{seq: seq})
		}
		for range 250 {
			next++
			if got := q.pop(); got.seq != next {
				t.Fatalf("round %d: popped seq %d, want %d", round, got.seq, next)
			}
		}
	}
	l := q.levels[0]
	if waiting := len(l.runs) - l.head; waiting != q.len() || q.len() != 50*50 {
		t.Fatalf("%d waiting in the level, %d in the queue, want %d", waiting, q.len(), 50*50)
	}
	if len(l.runs) > 2*q.len()+1024 {
		t.Fatalf("level holds %d slots for %d waiting runs", len(l.runs), q.len())
	}
}

// A lane that empties and fills again, as in a wave, reuses its array:
// no allocation once it has grown.
func TestRunQueueReusesItsArray(t *testing.T) {
	var q runQueue
	fill := func() {
		for i := range 100 {
			q.push(queued{seq: uint64(i + 1)})
		}
		for range 100 {
			q.pop()
		}
	}
	fill()
	if n := testing.AllocsPerRun(20, fill); n != 0 {
		t.Fatalf("%v allocations to fill and empty the lane again, want 0", n)
	}
}
