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

// take removes the appends at the head of the queue up to maxEvents events
// (at least one append).
func (q *intake) take(maxEvents int) []*appendReq {
	q.mu.Lock()
	defer q.mu.Unlock()
	n, events := 0, 0
	for n < len(q.pending) {
		e := len(q.pending[n].evs)
		if n > 0 && events+e > maxEvents {
			break
		}
		events += e
		n++
	}
	out := make([]*appendReq, n)
	copy(out, q.pending[:n])
	clear(q.pending[:n])
	q.pending = q.pending[n:]
	if len(q.pending) == 0 {
		q.pending = nil
	} else {
		q.wakeUp()
	}
	return out
}
