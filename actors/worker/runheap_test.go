package worker

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRunHeapOrder: whatever the mix of pushes and pops, runs leave a lane
// highest priority first, then in the order they came.
func TestRunHeapOrder(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		var h runHeap
		var ref []queued // what is waiting, in no order
		var seq uint64
		for step := 0; step < 2000; step++ {
			if len(ref) == 0 || rng.IntN(3) != 0 {
				seq++
				it := queued{run: QueuedRun{Priority: rng.IntN(5) - 2}, seq: seq}
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
			if len(h) != len(ref) {
				t.Fatalf("seed %d: %d waiting, want %d", seed, len(h), len(ref))
			}
		}
	}
}
