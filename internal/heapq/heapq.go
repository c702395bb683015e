// Package heapq is a binary heap kept in a slice of values and ordered by
// a less function: container/heap's algorithm without its any-typed Push
// and Pop, which put every element pushed or popped in an allocation of
// its own. The scheduler's due-time index pushes and pops an element per
// run.
package heapq

// Less reports whether a comes before b. It must be a strict weak order;
// with ties, which of the tied elements comes first is unspecified.
type Less[T any] func(a, b *T) bool

// Init orders h as a heap.
func Init[T any](h []T, less Less[T]) {
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(h, i, len(h), less)
	}
}

// Push adds x to the heap h and returns the heap.
func Push[T any](h []T, x T, less Less[T]) []T {
	h = append(h, x)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !less(&h[i], &h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

// Pop removes the first element of the heap h, which must not be empty,
// and returns the heap and the element. The slot it leaves is zeroed, so
// the backing array keeps nothing of it.
func Pop[T any](h []T, less Less[T]) ([]T, T) {
	n := len(h) - 1
	h[0], h[n] = h[n], h[0]
	down(h, 0, n, less)
	x := h[n]
	var zero T
	h[n] = zero
	return h[:n], x
}

// down moves h[i] down the heap h[:n] to its place.
func down[T any](h []T, i, n int, less Less[T]) {
	for {
		c := 2*i + 1
		if c >= n || c < 0 {
			return
		}
		if r := c + 1; r < n && less(&h[r], &h[c]) {
			c = r
		}
		if !less(&h[c], &h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
