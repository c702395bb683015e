package embedded

import (
	"sync"
	"sync/atomic"

	"github.com/cronactor/cronactor/events"
)

// intake is where appends wait for the committer: one first-in, first-out
// queue per lane (events.Lane). It has no bound: every append waiting in it
// is a writer that waits for its answer — a goroutine in Append, or a task
// actor that decides nothing more for its task until answered — so the
// writers bound it.
type intake struct {
	mu    sync.Mutex
	lanes [2][]*appendReq // by events.Lane
	// waiting counts the appends in both lanes, read without mu by
	// letAnsweredQueue.
	waiting atomic.Int64
	// wake holds a token while appends may be waiting.
	wake chan struct{}
}

func newIntake() *intake { return &intake{wake: make(chan struct{}, 1)} }

// put queues r in lane l and wakes the committer.
func (q *intake) put(r *appendReq, l events.Lane) {
	if l > events.LaneBulk {
		l = events.LanePriority
	}
	q.mu.Lock()
	q.lanes[l] = append(q.lanes[l], r)
	q.mu.Unlock()
	q.waiting.Add(1)
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take cuts the next group into pending (emptied first): the priority lane
// first, up to three quarters of maxEvents, then the bulk lane up to
// maxEvents, then the priority lane again to fill what the bulk lane left.
// So the priority lane goes ahead of a flood of bulk appends, and a flood of
// priority appends still leaves a quarter of each group to the bulk lane.
// The first append is taken whatever its size, as a group carries at least
// one. It returns the group, empty when nothing waits.
func (q *intake) take(pending []*appendReq, maxEvents int) []*appendReq {
	pending = pending[:0]
	n := 0
	q.mu.Lock()
	pending, n = q.takeLane(pending, n, events.LanePriority, maxEvents-maxEvents/4)
	pending, n = q.takeLane(pending, n, events.LaneBulk, maxEvents)
	pending, _ = q.takeLane(pending, n, events.LanePriority, maxEvents)
	q.mu.Unlock()
	q.waiting.Add(-int64(len(pending)))
	return pending
}

// takeLane moves appends from the head of lane l into pending while the
// group holds fewer than limit events; q.mu is held.
func (q *intake) takeLane(pending []*appendReq, n int, l events.Lane, limit int) ([]*appendReq, int) {
	lane := q.lanes[l]
	k := 0
	for k < len(lane) && (n < limit || len(pending) == 0) {
		pending = append(pending, lane[k])
		n += len(lane[k].evs)
		k++
	}
	if k == 0 {
		return pending, n
	}
	rest := copy(lane, lane[k:])
	clear(lane[rest:])
	q.lanes[l] = lane[:rest]
	return pending, n
}
