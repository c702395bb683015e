package heapq

import (
	"math/rand/v2"
	"slices"
	"testing"
)

type item struct{ key, seq int }

func before(a, b *item) bool {
	if a.key != b.key {
		return a.key < b.key
	}
	return a.seq < b.seq
}

// TestOrder: whatever the mix of Init, Push and Pop, elements leave in
// order, and Pop leaves nothing behind in the backing array.
func TestOrder(t *testing.T) {
	for seed := uint64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		var h, ref []item
		seq := 0
		for range rng.IntN(50) {
			seq++
			h = append(h, item{rng.IntN(10), seq})
		}
		ref = slices.Clone(h)
		Init(h, before)
		for step := range 3000 {
			if len(ref) == 0 || rng.IntN(3) != 0 {
				seq++
				x := item{rng.IntN(10), seq}
				h = Push(h, x, before)
				ref = append(ref, x)
				continue
			}
			i := 0
			for j := range ref {
				if before(&ref[j], &ref[i]) {
					i = j
				}
			}
			var got item
			h, got = Pop(h, before)
			if got != ref[i] {
				t.Fatalf("seed %d step %d: popped %+v, want %+v", seed, step, got, ref[i])
			}
			if left := h[:len(h)+1][len(h)]; left != (item{}) {
				t.Fatalf("seed %d step %d: the popped slot still holds %+v", seed, step, left)
			}
			ref = slices.Delete(ref, i, i+1)
			if len(h) != len(ref) {
				t.Fatalf("seed %d: %d in the heap, want %d", seed, len(h), len(ref))
			}
		}
	}
}
