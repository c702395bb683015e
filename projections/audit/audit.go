// Package audit reads a task's audit trail from an event store in pages
// whose cost does not grow with the task's stream: the rows of a page
// (projections/history) are folded from the stream's TaskCreated and a
// look-back of history.Lookback events before the page (see
// history.Tracker.Seed for what that makes exact), and an explanation reads
// only the events around the time asked about, found by a binary search
// over stream versions with point reads.
//
// It is the I/O half of projections/history, which stays pure: the HTTP API
// (GET /v1/tasks/{id}/history, /explain, /events) and `cronactor bench
// history` read through it. Its functions are safe for concurrent use
// when the store is.
package audit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// ErrNotFound: the task's stream has no events.
var ErrNotFound = errors.New("audit: task not found")

// windowFold is how many events before the time asked about the fold that
// finds the task's interval (an explanation's default window) starts.
const windowFold = 64

// MaxExplainEvents bounds the events an explanation folds on each side of
// the time asked about (besides the look-back): a window wider than that
// many decisions lists the nearest ones.
const MaxExplainEvents = 5000

// Range names a page by stream versions: the latest Limit events with a
// version below Before (all the way to the end when Before is nil), or,
// with After set, the first Limit events with a version above After.
type Range struct {
	Before *uint64
	After  *uint64
	Limit  int
}

// Page is a page of a task's audit trail.
type Page struct {
	TaskID uuid.UUID
	// Created is the stream's first event: its TaskCreated, or the
	// TaskCompacted it begins with once history retention removed the
	// events before it (docs/decisions/0023-retention.md).
	Created events.Recorded
	// Events are the page's events, oldest first; Rows their rows.
	Events []events.Recorded
	Rows   []history.Row
	// Head is the version of the stream's last event.
	Head uint64
}

// Older reports whether events come before the page.
func (p Page) Older() bool { return len(p.Events) > 0 && p.Events[0].Version > p.Created.Version }

// Newer reports whether events come after the page.
func (p Page) Newer() bool { return len(p.Events) > 0 && p.Events[len(p.Events)-1].Version < p.Head }

// Reader reads one task's stream.
type reader struct {
	ctx    context.Context
	st     events.Store
	stream string
	// first is the version of the stream's first event: 0, or that of the
	// TaskCompacted it begins with once retention removed the events
	// before it (docs/decisions/0023-retention.md).
	first uint64
}

func (r reader) read(from uint64, limit int) ([]events.Recorded, error) {
	recs, err := r.st.ReadStream(r.ctx, r.stream, from, limit)
	if errors.Is(err, events.ErrStreamNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, r.stream)
	}
	return recs, err
}

func (r reader) at(v uint64) (events.Recorded, error) {
	recs, err := r.read(v, 1)
	if err != nil {
		return events.Recorded{}, err
	}
	if len(recs) == 0 {
		return events.Recorded{}, fmt.Errorf("audit: %s has no event at version %d", r.stream, v)
	}
	return recs[0], nil
}

// head is the version of the stream's last event.
func (r reader) head() (uint64, error) {
	v, err := events.StreamVersion(r.ctx, r.st, r.stream)
	if errors.Is(err, events.ErrStreamNotFound) {
		return 0, fmt.Errorf("%w: %s", ErrNotFound, r.stream)
	}
	return v, err
}

// ReadPage reads the page of task id's audit trail that rg names, with its
// rows.
func ReadPage(ctx context.Context, st events.Store, id uuid.UUID, rg Range) (Page, error) {
	if rg.Limit < 1 {
		return Page{}, fmt.Errorf("audit: page limit %d", rg.Limit)
	}
	r := reader{ctx: ctx, st: st, stream: events.TaskStream(id)}
	head, err := r.head()
	if err != nil {
		return Page{}, err
	}
	p := Page{TaskID: id, Head: head}
	var lo, hi uint64 // the page is [lo, hi), hi > lo unless empty
	switch {
	case rg.After != nil:
		lo = min(*rg.After, head) + 1
		if *rg.After >= head {
			lo = head + 1
		}
		hi = lo + uint64(rg.Limit)
	default:
		hi = head + 1
		if rg.Before != nil {
			hi = min(*rg.Before, head+1)
		}
		lo = hi - min(hi, uint64(rg.Limit))
	}
	hi = min(hi, head+1)
	if p.Created, err = r.at(0); err != nil {
		return Page{}, err
	}
	// Nothing is left before the stream's first event (retention).
	first := p.Created.Version
	lo = max(lo, first)
	if lo >= hi {
		return p, nil
	}
	start := max(lo-min(lo, history.Lookback), first)
	recs, err := r.read(start, int(hi-start))
	if err != nil {
		return Page{}, err
	}
	skip := int(lo - start)
	if skip > len(recs) {
		skip = len(recs)
	}
	if p.Rows, err = history.RowsFrom(p.Created, recs, skip); err != nil {
		return Page{}, err
	}
	p.Events = recs[skip:]
	return p, nil
}

// lastAtOrBefore is the greatest version in [0, head] of an event decided
// at or before t, and false when every event is later. Decision times grow
// along a stream (one clock decides them), which the binary search relies
// on.
func (r reader) lastAtOrBefore(t time.Time, head uint64) (uint64, bool, error) {
	first, err := r.at(r.first)
	if err != nil {
		return 0, false, err
	}
	if first.At.After(t) {
		return 0, false, nil
	}
	lo, hi := r.first, head+1 // At(lo) <= t; hi is past the answer
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		rec, err := r.at(mid)
		if err != nil {
			return 0, false, err
		}
		if rec.At.After(t) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo, true, nil
}

// lastAtOrBeforeNear is lastAtOrBefore searched outward from version near
// (doubling steps, then halving): the bounds of a window around a version
// already found cost reads near it, in the store's blocks just read, not
// a search of the whole stream.
func (r reader) lastAtOrBeforeNear(t time.Time, head, near uint64) (uint64, bool, error) {
	rec, err := r.at(near)
	if err != nil {
		return 0, false, err
	}
	var lo, hi uint64 // At(lo) <= t < At(hi), hi may be head+1
	if rec.At.After(t) {
		// Back from near.
		hi = near
		for step := uint64(1); ; step *= 2 {
			if hi <= r.first {
				return 0, false, nil
			}
			v := hi - min(hi-r.first, step)
			rec, err := r.at(v)
			if err != nil {
				return 0, false, err
			}
			if !rec.At.After(t) {
				lo = v
				break
			}
			hi = v
		}
	} else {
		lo = near
		for step := uint64(1); ; step *= 2 {
			v := lo + step
			if v > head {
				hi = head + 1
				break
			}
			rec, err := r.at(v)
			if err != nil {
				return 0, false, err
			}
			if rec.At.After(t) {
				hi = v
				break
			}
			lo = v
		}
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		rec, err := r.at(mid)
		if err != nil {
			return 0, false, err
		}
		if rec.At.After(t) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo, true, nil
}

// Explain answers `cronactor explain` for task id at time at (window as
// history.Explain takes it) from the events around at: the look-back
// before the window, the window, and the first event after it.
func Explain(ctx context.Context, st events.Store, id uuid.UUID, at time.Time, window time.Duration) (history.Explanation, error) {
	r := reader{ctx: ctx, st: st, stream: events.TaskStream(id)}
	head, err := r.head()
	if err != nil {
		return history.Explanation{}, err
	}
	created, err := r.at(0)
	if err != nil {
		return history.Explanation{}, err
	}
	r.first = created.Version
	idx, ok, err := r.lastAtOrBefore(at, head)
	if err != nil {
		return history.Explanation{}, err
	}
	if !ok {
		// Before the task existed: the decisions from its creation on,
		// within the window.
		if window == 0 {
			ex, err := history.ExplainFrom(created, []events.Recorded{created}, at, window)
			if err != nil {
				return history.Explanation{}, err
			}
			window = ex.Window
		}
		hi := r.first
		if h, ok, err := r.lastAtOrBefore(at.Add(window), head); err != nil {
			return history.Explanation{}, err
		} else if ok {
			hi = h
		}
		recs, err := r.read(r.first, int(min(hi-r.first, MaxExplainEvents))+2)
		if err != nil {
			return history.Explanation{}, err
		}
		return history.ExplainFrom(created, recs, at, window)
	}
	// have holds the events read so far, from version from on: the second
	// fold (once the window is known) reads only what the first did not.
	var have []events.Recorded
	var from uint64
	// ensure has have hold versions [start, hi].
	ensure := func(start, hi uint64) error {
		switch {
		case have == nil:
			recs, err := r.read(start, int(hi-start+1))
			if err != nil {
				return err
			}
			have, from = recs, start
		default:
			if start < from {
				recs, err := r.read(start, int(from-start))
				if err != nil {
					return err
				}
				have, from = append(recs, have...), start
			}
			if end := from + uint64(len(have)); hi >= end {
				recs, err := r.read(end, int(hi-end+1))
				if err != nil {
					return err
				}
				have = append(have, recs...)
			}
		}
		return nil
	}
	fold := func(lo, hi uint64) (history.Explanation, error) {
		start := max(lo-min(lo, history.Lookback), r.first)
		if err := ensure(start, hi); err != nil {
			return history.Explanation{}, err
		}
		return history.ExplainFrom(created, have[start-from:hi-from+1], at, window)
	}
	if window == 0 {
		// One interval of the task, as the fold up to at finds it: its
		// spec is the latest TaskCreated or TaskUpdated's, and a cron
		// run's spacing is its enqueue's, a few events back. So the fold
		// that finds it starts windowFold events before at, or at the
		// latest spec event of the look-back when that is earlier: one
		// fold of a look-back, not two.
		start := max(idx-min(idx, history.Lookback), r.first)
		hi := min(idx+1, head)
		if err := ensure(start, hi); err != nil {
			return history.Explanation{}, err
		}
		s1 := max(idx-min(idx, windowFold), r.first)
		for v := s1; v > start; v-- {
			if t := have[v-1-from].Type; t == "TaskUpdated" || t == "TaskCreated" {
				s1 = v - 1
				break
			}
		}
		ex, err := history.ExplainFrom(created, have[s1-from:hi-from+1], at, 0)
		if err != nil {
			return history.Explanation{}, err
		}
		window = ex.Window
	}
	lo, hi := idx, min(idx+1, head)
	if l, ok, err := r.lastAtOrBeforeNear(at.Add(-window), head, idx); err != nil {
		return history.Explanation{}, err
	} else if !ok {
		lo = r.first // the window starts before the task (or what is left of it)
	} else if l < lo {
		lo = l
	}
	if h, _, err := r.lastAtOrBeforeNear(at.Add(window), head, idx); err != nil {
		return history.Explanation{}, err
	} else if h+1 > hi {
		hi = min(h+1, head)
	}
	lo = max(lo, idx-min(idx, MaxExplainEvents))
	hi = min(hi, idx+MaxExplainEvents)
	return fold(lo, hi)
}
