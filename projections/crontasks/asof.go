package crontasks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// AsOf returns the view as of the past point p for querying, like the
// function AsOf, but folds only from the nearest snapshot this view kept
// at or before p (Config.SnapshotEvery), not from the start of the log;
// for a point in time it also stops reading where everything after was
// decided later. The live view is not changed. Close the returned view
// before closing v.
//
// The cost of one call is the events between that snapshot and p (at most
// about twice the current snapshot spacing) plus the events the view has
// not folded yet, not the length of the log. Points before the first
// snapshot (e.g. before the view was opened, when it resumed from a
// checkpoint) fold from the start of the log.
func (v *View) AsOf(ctx context.Context, p Point) (*View, error) {
	if p.IsZero() {
		return nil, badQuery("as_of", "as_of names no point")
	}
	releaseLive, err := v.use()
	if err != nil {
		return nil, err
	}
	pl := v.snaps.plan(p)
	done := func() { v.snaps.release(pl.start); releaseLive() }
	cfg := v.cfg
	cfg.Dir, cfg.SnapshotEvery = "", -1
	past, err := Open(cfg)
	if err != nil {
		done()
		return nil, err
	}
	past.release = done
	if pl.start != nil {
		past.base = pl.start.snap
		past.checkpoint = pl.start.pos
	}
	if err := past.foldTo(ctx, p, pl); err != nil {
		past.Close()
		return nil, err
	}
	return past, nil
}

// foldTo folds the log up to p into v, an as-of view, starting at its
// checkpoint (the start of the log or pl.start) and skipping the part pl
// says holds nothing as of p.
func (v *View) foldTo(ctx context.Context, p Point, pl plan) error {
	var head events.Position
	if h, ok := v.cfg.Store.(events.HeadReader); ok {
		head = h.Head()
	}
	ended := map[string]bool{} // streams past p.Time
	// After a skipped part, an event is kept only if the event before it
	// in its stream was kept: last holds the versions kept so far.
	skipped := false
	last := map[string]uint64{}
	keepAfterSkip := func(r events.Recorded) bool {
		if r.Version == 0 {
			return true
		}
		if n, ok := last[r.Stream]; ok {
			return n == r.Version-1
		}
		id, err := events.TaskIDFromStream(r.Stream)
		if err != nil {
			return true // not folded into any row
		}
		t, err := v.lookup(v.db, id)
		return err == nil && t.Version == r.Version-1
	}
	stopAt := pl.skipFrom
	// A fold from the start reads the events the live view folded before it
	// was opened: it tells the live view when the last of them was decided.
	var resumedMaxAt time.Time
	resumedRead := false
	filter := func(page []events.Recorded) ([]events.Recorded, bool) {
		keep := page[:0:0]
		for _, r := range page {
			if pl.learn != nil && !resumedRead {
				if !pl.resumed.Less(r.Position) && r.At.After(resumedMaxAt) {
					resumedMaxAt = r.At
				}
				resumedRead = !r.Position.Less(pl.resumed)
			}
			if !p.Position.IsZero() && p.Position.Less(r.Position) {
				return keep, true
			}
			if !head.IsZero() && head.Less(r.Position) {
				return keep, true
			}
			if !stopAt.IsZero() && stopAt.Less(r.Position) {
				return keep, true
			}
			if !p.Time.IsZero() {
				if ended[r.Stream] || r.At.After(p.Time) || (skipped && !keepAfterSkip(r)) {
					ended[r.Stream] = true
					continue
				}
			}
			keep = append(keep, r)
			last[r.Stream] = r.Version
		}
		return keep, false
	}
	if err := v.catchUp(ctx, nil, filter); err != nil {
		return err
	}
	if resumedRead {
		pl.learn.learnResumed(resumedMaxAt)
	}
	if !pl.skipFrom.IsZero() {
		// Nothing in (skipFrom, skipTo] is kept; read on after it.
		stopAt, skipped = events.Position{}, true
		v.mu.Lock()
		if v.checkpoint.Less(pl.skipTo) {
			v.checkpoint = pl.skipTo
		}
		v.mu.Unlock()
		if err := v.catchUp(ctx, nil, filter); err != nil {
			return err
		}
	}
	return v.hideBase()
}

// hideBase lists the keys of the base snapshot that the rows folded since
// replace: a row's own key, and the index keys it no longer has.
func (v *View) hideBase() error {
	if v.base == nil {
		return nil
	}
	v.hidden = map[string]bool{}
	p := []byte{prefixTask, '/'}
	it, err := v.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
	if err != nil {
		return fmt.Errorf("crontasks: as-of view: %w", err)
	}
	defer it.Close()
	for valid := it.First(); valid; valid = it.Next() {
		id, err := uuid.FromBytes(it.Key()[len(p):])
		if err != nil {
			return fmt.Errorf("%w: row key %x", ErrForeignDB, it.Key())
		}
		v.hidden[string(taskKey(id))] = true
		was, err := v.get(v.base, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		now, err := v.get(v.db, id)
		if err != nil {
			return err
		}
		keep := indexKeys(now)
		for _, k := range indexKeys(was) {
			if !containsKey(keep, k) {
				v.hidden[string(k)] = true
			}
		}
	}
	return it.Error()
}

// lookup reads a row from r and, in an as-of view, from the snapshot it
// started from when r has none.
func (v *View) lookup(r reader, id uuid.UUID) (*Task, error) {
	t, err := v.get(r, id)
	if v.base != nil && errors.Is(err, ErrNotFound) {
		return v.get(v.base, id)
	}
	return t, err
}

// kvIter is the part of *pebble.Iterator queries use.
type kvIter interface {
	First() bool
	SeekGE(key []byte) bool
	Next() bool
	Key() []byte
	Value() []byte
	Error() error
	Close() error
}

// iter iterates the keys in [lower, upper) of snap and, in an as-of view,
// of the snapshot it started from, minus the keys the rows folded since
// replaced.
func (v *View) iter(snap *pebble.Snapshot, lower, upper []byte) (kvIter, error) {
	opts := &pebble.IterOptions{LowerBound: lower, UpperBound: upper}
	top, err := snap.NewIter(opts)
	if err != nil || v.base == nil {
		return top, err
	}
	base, err := v.base.NewIter(opts)
	if err != nil {
		top.Close()
		return nil, err
	}
	return &mergeIter{top: top, base: base, hidden: v.hidden}, nil
}

// mergeIter merges two iterators in key order; top wins on equal keys and
// base skips its hidden keys.
type mergeIter struct {
	top, base  kvIter
	hidden     map[string]bool
	topOK, bOK bool
	cur        kvIter
}

func (m *mergeIter) skipHidden(ok bool) bool {
	for ok && m.hidden[string(m.base.Key())] {
		ok = m.base.Next()
	}
	return ok
}

func (m *mergeIter) pick() bool {
	switch {
	case m.topOK && m.bOK:
		m.cur = m.top
		if bytes.Compare(m.base.Key(), m.top.Key()) < 0 {
			m.cur = m.base
		}
	case m.topOK:
		m.cur = m.top
	case m.bOK:
		m.cur = m.base
	default:
		m.cur = nil
	}
	return m.cur != nil
}

func (m *mergeIter) First() bool {
	m.topOK, m.bOK = m.top.First(), m.skipHidden(m.base.First())
	return m.pick()
}

func (m *mergeIter) SeekGE(key []byte) bool {
	m.topOK, m.bOK = m.top.SeekGE(key), m.skipHidden(m.base.SeekGE(key))
	return m.pick()
}

func (m *mergeIter) Next() bool {
	if m.cur == nil {
		return false
	}
	if m.cur == m.top {
		if m.bOK && bytes.Equal(m.base.Key(), m.top.Key()) {
			m.bOK = m.skipHidden(m.base.Next())
		}
		m.topOK = m.top.Next()
	} else {
		m.bOK = m.skipHidden(m.base.Next())
	}
	return m.pick()
}

func (m *mergeIter) Key() []byte   { return m.cur.Key() }
func (m *mergeIter) Value() []byte { return m.cur.Value() }

func (m *mergeIter) Error() error { return errors.Join(m.top.Error(), m.base.Error()) }

func (m *mergeIter) Close() error { return errors.Join(m.top.Close(), m.base.Close()) }
