package embedded

import (
	"sync"
	"sync/atomic"
)

// intake is where appends wait for the committer, first in, first out. It
// has no bound: every append waiting in it is a writer that waits for its
// answer — a goroutine in Append, or a task actor that decides nothing more
// for its task until answered — so the writers bound it.
type intake struct {
	mu    sync.Mutex
	queue []*appendReq
	// waiting counts the appends queued, read without mu by
	// letAnsweredQueue.
	waiting atomic.Int64
	// wake holds a token while appends may be waiting.
	wake chan struct{}
}

func newIntake() *intake { return &intake{wake: make(chan struct{}, 1)} }

// put queues r and wakes the committer.
func (q *intake) put(r *appendReq) {
	q.mu.Lock()
	q.queue = append(q.queue, r)
	q.mu.Unlock()
	q.waiting.Add(1)
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take cuts the next group into pending (emptied first): the appends at the
// head of the queue while the group holds fewer than maxEvents events, and
// the first whatever its size, as a group carries at least one. It returns
// the group, empty when nothing waits.
func (q *intake) take(pending []*appendReq, maxEvents int) []*appendReq {
	pending = pending[:0]
	n := 0
	q.mu.Lock()
	k := 0
	for k < len(q.queue) && (n < maxEvents || k == 0) {
		pending = append(pending, q.queue[k])
		n += len(q.queue[k].evs)
		k++
	}
	rest := copy(q.queue, q.queue[k:])
	clear(q.queue[rest:])
	q.queue = q.queue[:rest]
	q.mu.Unlock()
	q.waiting.Add(-int64(len(pending)))
	return pending
}
