package dueindex

import (
	"math/rand"
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestDueHeapOrdersTiesByIDText checks that tasks due at one instant are
// ticked in the order of their IDs' text, as they always were.
func TestDueHeapOrdersTiesByIDText(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var h dueHeap
	for i := 0; i < 2000; i++ {
		var id uuid.UUID
		rng.Read(id[:])
		if i%4 == 1 {
			copy(id[:8], h[i-1].id[:8]) // IDs that differ in their second half only
		}
		if i%8 == 3 {
			copy(id[:15], h[i-1].id[:15]) // or in their last byte
		}
		h = append(h, dueItem{at: nanos(at), id: id})
	}
	for i := range h {
		for j := range h[max(0, i-60) : i+1] {
			j += max(0, i-60)
			want := h[i].id.String() < h[j].id.String()
			if got := dueBefore(&h[i], &h[j]); got != want {
				t.Fatalf("dueBefore(%s, %s) = %v, want %v", h[i].id, h[j].id, got, want)
			}
		}
	}
}
