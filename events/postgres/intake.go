package postgres

import (
	"sync"

	"github.com/cronactor/cronactor/events"
)

// appendReq is one append waiting for the committer.
type appendReq struct {
	stream   string
	expected events.ExpectedVersion
	evs      []events.Proposed
	result   events.AppendResult
	err      error
	// done wakes a waiting Append (buffered: the committer never waits);
	// cb, when set, is AppendAsync's callback instead.
	done chan struct{}
	cb   func(events.AppendResult, error)
}

func (r *appendReq) answer() {
	if r.cb != nil {
		r.cb(r.result, r.err)
		return
	}
	r.done <- struct{}{}
}

// intake is the committer's queue: unbounded, first in first out (every
// entry is a writer waiting for its answer).
type intake struct {
	mu      sync.Mutex
	pending []*appendReq
	wake    chan struct{}
}

func newIntake() *intake { return &intake{wake: make(chan struct{}, 1)} }

func (q *intake) put(r *appendReq) {
	q.mu.Lock()
	q.pending = append(q.pending, r)
	q.mu.Unlock()
	q.wakeUp()
}

func (q *intake) wakeUp() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take removes appends from the queue, oldest first, up to maxEvents
// events (at least one append), leaving in it those of the streams in busy
// (the group in flight): a stream's later appends stay behind its earlier
// ones. It returns nothing when every queued append is of a busy stream.
func (q *intake) take(maxEvents int, busy map[string]struct{}) []*appendReq {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*appendReq
	kept := q.pending[:0]
	events, full := 0, false
	for _, r := range q.pending {
		if _, ok := busy[r.stream]; ok || full {
			kept = append(kept, r)
			continue
		}
		if e := len(r.evs); len(out) > 0 && events+e > maxEvents {
			full = true
			kept = append(kept, r)
			continue
		}
		events += len(r.evs)
		out = append(out, r)
	}
	clear(q.pending[len(kept):])
	q.pending = kept
	if len(q.pending) == 0 {
		q.pending = nil
	} else if len(out) > 0 {
		q.wakeUp()
	}
	return out
}
