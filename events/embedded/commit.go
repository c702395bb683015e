package embedded

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/cockroachdb/pebble"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// appendReq is one append waiting for the committer, which answers it with
// answer. Requests are reused (appendReqs): nothing refers to one once its
// answer is taken.
type appendReq struct {
	stream   string
	expected events.ExpectedVersion
	evs      []events.Proposed
	result   events.AppendResult
	err      error
	// done (buffered, so the committer never waits) wakes a waiting
	// Append; cb, when set, is AppendAsync's callback instead.
	done chan struct{}
	cb   func(events.AppendResult, error)
}

var appendReqs = sync.Pool{New: func() any { return &appendReq{done: make(chan struct{}, 1)} }}

// answer hands the outcome of r to its writer: the waiting Append, or
// AppendAsync's callback (r goes back to the pool first: the callback may
// append again at once).
func (r *appendReq) answer() {
	if cb := r.cb; cb != nil {
		res, err := r.result, r.err
		*r = appendReq{done: r.done}
		appendReqs.Put(r)
		cb(res, err)
		return
	}
	r.done <- struct{}{}
}

// Append implements events.Store. Appends from many goroutines are
// group-committed: one synced Pebble batch carries the appends waiting at
// that moment.
func (s *Store) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	req, err := s.handOver(ctx, stream, expected, evs, nil)
	if err != nil {
		return events.AppendResult{}, err
	}
	// Once queued, the append is decided by the committer; wait for the
	// outcome even if ctx ends, so the caller never mistakes a durable append
	// for a failed one.
	<-req.done
	res, err := req.result, req.err
	*req = appendReq{done: req.done}
	appendReqs.Put(req)
	return res, err
}

// AppendAsync implements events.AsyncAppender: the append is queued as
// Append queues it, and done is called by the committer, once the group
// that decided it is durable, instead of waking a goroutine. An append
// refused before it is queued (a bad stream, no events, an ended ctx, a
// closed store) gets its error through done before AppendAsync returns.
func (s *Store) AppendAsync(ctx context.Context, stream string, expected events.ExpectedVersion, evs []events.Proposed, done func(events.AppendResult, error)) {
	if _, err := s.handOver(ctx, stream, expected, evs, done); err != nil {
		done(events.AppendResult{}, err)
	}
}

var _ events.AsyncAppender = (*Store)(nil)

// handOver checks an append and queues it for the committer; cb is
// AppendAsync's callback (nil for Append). The append's
// ctx is only checked here: the queue has no bound to wait for (see intake).
func (s *Store) handOver(ctx context.Context, stream string, expected events.ExpectedVersion, evs []events.Proposed, cb func(events.AppendResult, error)) (*appendReq, error) {
	if err := events.ValidateStream(stream); err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, events.ErrNoEvents
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.use(); err != nil {
		s.countRefused(err, 1)
		return nil, err
	}
	req := appendReqs.Get().(*appendReq)
	req.stream, req.expected, req.evs, req.cb = stream, expected, evs, cb
	// Queued under use: Close cannot mark the store closed meanwhile, so the
	// committer (which drains the queue once closed) sees this append.
	s.intake.put(req)
	s.release()
	return req, nil
}

// yield is runtime.Gosched; tests count the committer's yields with it.
var yield = runtime.Gosched

func (s *Store) commitLoop() {
	defer close(s.stopped)
	var pending []*appendReq
	answered := 0 // the appends the last group answered
	for {
		select {
		case <-s.intake.wake:
		case <-s.probe:
			// Asked whether a refusal has ended: ready checks it, and
			// reopens the database if it has.
			_ = s.ready()
			continue
		case <-s.done:
			s.drainClosed()
			return
		}
		for {
			s.letAnsweredQueue(answered)
			if pending = s.intake.take(pending, s.opts.MaxBatchEvents); len(pending) == 0 {
				answered = 0
				break
			}
			answered = len(pending)
			s.commit(pending)
			clear(pending) // the requests go back to their pool when answered
		}
	}
}

// letAnsweredQueue yields until the appends queue stops growing or holds
// as many appends as the last group answered (at most maxAnsweredYields
// times). The writers the last group answered are runnable but may not have
// run yet; cutting the next group at once would leave about half of them
// for the group after, and 64 writers would settle into two cohorts of ~32
// appends per sync. Yielding first lets each of them queue its next append,
// so a group carries ~60 of 64 (measured: 88k -> 94k events/s with a 4 MiB
// memtable, docs/decisions/0001-embedded-store.md). A lone writer pays one
// yield.
//
// The bound by answered is for writers that arrive one by one rather than
// come back: a tick's task actors deciding in turn, each appending once. The
// queue then grows at every yield, and without the bound the committer
// yielded up to 32 times — on a busy machine 5-15 ms — while every append
// of the tick waited (docs/performance.md, "Lag at half load").
func (s *Store) letAnsweredQueue(answered int) {
	for range maxAnsweredYields {
		n := s.intake.waiting.Load()
		if n >= int64(answered) {
			return // as many as the last group: those it answered may be among them
		}
		yield()
		if s.intake.waiting.Load() == n {
			return
		}
	}
}

// drainClosed commits the appends that were queued before the store
// closed: Close marks the store closed under closeMu, so none arrive later.
func (s *Store) drainClosed() {
	var pending []*appendReq
	for {
		if pending = s.intake.take(pending, s.opts.MaxBatchEvents); len(pending) == 0 {
			return
		}
		s.commit(pending)
		clear(pending)
	}
}

func (s *Store) brokenErr() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.broken
}

// fail stops the store from accepting appends: after a failed apply or sync
// the memtable may hold events the log does not, so nothing may build on it.
// A full disk and a read-only file system are the exceptions: the store
// reopens the database by itself once the condition ends (see ready).
func (s *Store) fail(err error) error {
	s.mu.Lock()
	if s.broken == nil {
		s.broken = s.classify(err)
	}
	broken := s.broken
	s.mu.Unlock()
	s.refuse(broken)
	return broken
}

// commit decides every append of pending against the stream heads, applies
// the accepted ones to Pebble in one batch and settles it. Every append,
// accepted or not, is answered only after its group is durable, so no answer
// rests on state that could still be lost.
//
// One group is in flight at a time, on purpose. Cutting the next group while
// the previous one syncs (up to 4 in flight) split 64 writers into small
// cohorts: groups of ~8 appends and 64-88k events/s, against ~60 appends and
// 92-96k events/s with one group in flight
// (docs/decisions/0001-embedded-store.md).
func (s *Store) commit(pending []*appendReq) {
	if err := s.ready(); err != nil {
		s.countRefused(err, len(pending))
		for _, r := range pending {
			r.err = err
			r.answer()
		}
		return
	}
	b := s.db.NewBatch()
	g := &group{reqs: make([]*appendReq, 0, len(pending))}
	pos := s.next
	g.tail = tailChunk{first: pos + 1, skip: true}
	if s.subscribers.Load() > 0 {
		g.tail = newTailChunk(pos+1, pending)
	}
	for _, r := range pending {
		g.reqs = append(g.reqs, r)
		hk := s.heads.key(r.stream)
		cur, err := s.streamHead(hk)
		if err != nil {
			r.err = err
			continue
		}
		if r.expected.IsAny() {
			if res, ok := s.retried(r, cur); ok {
				r.result = res
				continue
			}
		} else if !r.expected.Allows(cur.version, cur.exists) {
			if res, ok := s.retried(r, cur); ok {
				r.result = res
			} else {
				r.err = &events.VersionConflictError{Stream: r.stream, Expected: r.expected, Actual: cur.version, ActualExists: cur.exists}
			}
			continue
		}
		v := cur.version
		if cur.exists {
			v++
		}
		for i := range r.evs {
			e := &r.evs[i]
			id := e.ID
			if id == uuid.Nil {
				id = uuid.New()
			}
			pos++
			rec := events.Recorded{
				Metadata: events.Metadata{ID: id, Stream: r.stream, Version: v, At: e.At,
					CausationID: e.CausationID, CorrelationID: e.CorrelationID},
				Type: e.Type, Schema: e.Schema, Data: e.Data,
			}
			// Set copies key and value, so both live in s.scratch:
			// global key, record, stream key, position.
			k := appendGlobalKey(s.scratch[:0], pos)
			rv := appendRecord(k, &rec)
			sk := appendStreamKey(rv, r.stream, v)
			pv := binary.BigEndian.AppendUint64(sk, pos)
			s.scratch = pv
			_ = b.Set(pv[:len(k)], pv[len(k):len(rv)], nil)
			_ = b.Set(pv[len(rv):len(sk)], pv[len(sk):], nil)
			g.tail.add(pv[len(k):len(rv)])
			v++
		}
		s.heads.set(hk, v-1)
		r.result = events.AppendResult{Version: v - 1, Position: events.Position{Commit: pos, Prepare: pos}}
	}
	if pos > s.next {
		if err := s.apply(b); err != nil {
			err = s.fail(fmt.Errorf("apply: %w", err))
			s.countRefused(err, len(g.reqs))
			for _, r := range g.reqs {
				r.result, r.err = events.AppendResult{}, err
				r.answer()
			}
			return
		}
		g.b, g.last = b, pos
		s.next = pos
	} else {
		b.Close()
	}
	s.settle(g)
}

// apply hands b to Pebble. Pebble panics where it cannot go on, such as a
// write-ahead log that fails to close when it is rotated on a full disk;
// that panic is on this goroutine, and becomes a failure of the store
// instead of the end of the process. Pebble may then hold its own locks, so
// the database is not touched again (not even to reopen it): reads go on,
// appends are refused until the process restarts.
func (s *Store) apply(b *pebble.Batch) (err error) {
	defer func() {
		if r := recover(); r != nil {
			perr, ok := r.(error)
			if !ok {
				perr = fmt.Errorf("%v", r)
			}
			s.stuck.Store(true)
			err = fmt.Errorf("pebble stopped (restart the process to append again): %w", perr)
		}
	}()
	return s.db.ApplyNoSyncWait(b, pebble.Sync)
}

// settle waits for g's WAL sync, publishes the new durable head to readers,
// and only then answers the appends.
func (s *Store) settle(g *group) {
	var err error
	if g.b != nil {
		if err = g.b.SyncWait(); err == nil {
			err = g.b.Close()
		}
	}
	if err != nil {
		err = s.fail(fmt.Errorf("sync: %w", err))
		s.countRefused(err, len(g.reqs))
	} else if g.b != nil {
		s.mu.Lock()
		s.tail.push(g.tail, s.head)
		s.head = g.last
		close(s.notify)
		s.notify = make(chan struct{})
		s.mu.Unlock()
	}
	for _, r := range g.reqs {
		if err != nil && r.err == nil {
			r.result, r.err = events.AppendResult{}, err
		}
		r.answer()
	}
}

// streamHead returns a stream's last version as the committer sees it
// (including appends decided earlier in the group being cut). Only the
// committer calls it.
func (s *Store) streamHead(hk headKey) (streamVersion, error) {
	stream := hk.name
	if v, ok := s.heads.get(hk); ok {
		return streamVersion{version: v, exists: true}, nil
	}
	var h streamVersion
	prefix := streamPrefix(stream)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return h, s.dbErr(fmt.Sprintf("read stream head %q", stream), err)
	}
	defer it.Close()
	if it.Last() {
		k := it.Key()
		h = streamVersion{version: binary.BigEndian.Uint64(k[len(k)-8:]), exists: true}
		s.heads.set(hk, h.version)
	} else if err := it.Error(); err != nil {
		return h, s.dbErr(fmt.Sprintf("read stream head %q", stream), err)
	}
	return h, nil
}

// retried recognises a repeated append: the events stored right after the
// expected version carry the same IDs. Only the committer calls it, between
// groups, so what it reads is durable.
func (s *Store) retried(r *appendReq, cur streamVersion) (events.AppendResult, bool) {
	if !cur.exists {
		return events.AppendResult{}, false
	}
	var from uint64
	n := uint64(len(r.evs))
	if v, ok := r.expected.Exact(); ok {
		from = v + 1
	} else if r.expected.IsAny() {
		// Any: a retry is recognised when the stream ends with these events.
		if cur.version+1 < n {
			return events.AppendResult{}, false
		}
		from = cur.version + 1 - n
	}
	for _, e := range r.evs {
		if e.ID == uuid.Nil {
			return events.AppendResult{}, false
		}
	}
	if from+n-1 > cur.version {
		return events.AppendResult{}, false
	}
	stored, err := s.readStream(r.stream, from, len(r.evs), math.MaxUint64)
	if err != nil || len(stored) != len(r.evs) {
		return events.AppendResult{}, false
	}
	for i, e := range r.evs {
		if stored[i].ID != e.ID {
			return events.AppendResult{}, false
		}
	}
	last := stored[len(stored)-1]
	return events.AppendResult{Version: last.Version, Position: last.Position}, true
}
