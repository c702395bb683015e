// Package audit reads a task's audit trail from an event store in pages:
// the rows of a page (projections/history) and an explanation of a time are
// exactly what the fold of the whole stream gives, however deep in the
// stream they are. A Reader folds them from the latest exact starting point
// before them — a history.Mark it kept (Marks), or the stream's first event
// (its TaskCreated, or the TaskCompacted it begins with once history
// retention removed the events before it) — and leaves a Mark every few
// hundred events on the way, so that once the Marks before a page exist, it
// costs its own events and at most one Mark interval more; an explanation
// reads only the events around the time asked about, found by a binary
// search over stream versions with point reads. The first read deep in a
// stream no read has folded folds it from its start, once (see Marks).
//
// It is the I/O half of projections/history, which stays pure: the HTTP API
// (GET /v1/tasks/{id}/history, /explain, /events), the CLI and `cronactor
// bench history` read through it. Its functions are safe for concurrent use
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

// DefaultMaxFold is the Reader.MaxFold the daemon's API and the CLI use:
// a first read deep in a stream folds at most this many events before what
// it shows (a fold of a 1,000,000-event stream takes tens of seconds).
const DefaultMaxFold = 20000

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
	// Exact is false for a page folded from a look-back, not from an exact
	// starting point (Reader.MaxFold).
	Exact bool
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

// Reader reads task streams' audit trails from a store. Every page and
// explanation it gives is the one the fold of the whole stream gives: it
// folds from the latest exact starting point before what it shows — a
// history.Mark it kept (Marks), or the stream's first event (its
// TaskCreated, or the TaskCompacted it begins with once history retention
// removed the events before it) — and keeps a Mark every Marks' interval
// on the way. With Marks, a read costs its own events and at most about
// one interval of Marks more, once the Marks before it exist; a read past
// the last Mark made folds from it (the first read deep in a stream folds
// it from its start, once). A zero Reader keeps no Marks: each read folds
// from the stream's first event. A Reader is safe for concurrent use when
// its store is.
type Reader struct {
	Store events.Store
	// Marks keeps the Marks reads make (nil: none kept).
	Marks *Marks
	// MaxFold, when above zero, bounds the events a read folds before
	// what it shows: a read whose exact starting point is further back
	// folds the history.Lookback events before it instead (Tracker.Seed),
	// and says it is not exact (Page.Exact, Reader.ExplainExact). For a
	// client that reads the stream over the network and keeps no Marks
	// (the CLI).
	MaxFold int
}

// ReadPage reads the page of task id's audit trail that rg names, with its
// rows, folded from the stream's first event (Reader.ReadPage with no
// Marks).
func ReadPage(ctx context.Context, st events.Store, id uuid.UUID, rg Range) (Page, error) {
	return (&Reader{Store: st}).ReadPage(ctx, id, rg)
}

// readChunk is how many events a fold reads at once.
const readChunk = 4096

// folder folds one stream from its exact starting points.
type folder struct {
	reader
	marks *Marks
	// created is the stream's first event.
	created events.Recorded
	// long: the fold holds one of the Marks' long folds.
	long bool
}

// start is a Fold that has folded the stream through version v-1, ready
// for the event at v: resumed from the latest Mark at or below v-1, or
// folded from the stream's first event (v == first: a Fold that has folded
// nothing).
func (f *folder) start(v uint64) (*history.Fold, error) {
	if f.marks != nil && !f.long && f.distance(v) > f.marks.every*longFold {
		// A long fold (the first read deep in a stream): at most
		// maxLongFolds at once per Marks, and once it may run, the Marks
		// another one made meanwhile may have brought it near.
		release, err := f.marks.acquire(f.ctx)
		if err != nil {
			return nil, err
		}
		defer release()
		f.long = true
		defer func() { f.long = false }()
	}
	fd := &history.Fold{}
	from := f.first
	if v > f.first {
		if m := f.marks.atOrBefore(f.stream, f.first, v-1); m != nil && m.Version >= f.first {
			fd.Resume(m)
			from = m.Version + 1
			// The Mark's own event: it must be the one the Mark was made
			// after, or the Marks are of another stream.
			rec, err := f.at(m.Version)
			if err != nil {
				return nil, err
			}
			if rec.ID != m.ID {
				f.marks.drop(f.stream)
				return f.start(v)
			}
		}
	}
	return fd, f.fold(fd, from, v, nil)
}

// distance is how many events start(v) would fold.
func (f *folder) distance(v uint64) uint64 {
	if v <= f.first {
		return 0
	}
	if m := f.marks.atOrBefore(f.stream, f.first, v-1); m != nil && m.Version >= f.first {
		return v - m.Version - 1
	}
	return v - f.first
}

// fold folds the events of versions [from, to) into fd, which has folded
// through from-1, keeping a Mark where one is due, and hands each event and
// its row to keep (when set).
func (f *folder) fold(fd *history.Fold, from, to uint64, keep func(events.Recorded, history.Row)) error {
	for from < to {
		recs, err := f.read(from, int(min(to-from, readChunk)))
		if err != nil {
			return err
		}
		if len(recs) == 0 {
			return fmt.Errorf("audit: %s has no event at version %d", f.stream, from)
		}
		for _, rec := range recs {
			if rec.Version != from {
				return fmt.Errorf("audit: %s: version %d read where %d was due", f.stream, rec.Version, from)
			}
			row, err := fd.Apply(rec)
			if err != nil {
				return err
			}
			if f.marks.due(rec.Version) {
				f.marks.put(f.stream, f.first, fd.Mark())
			}
			if keep != nil {
				keep(rec, row)
			}
			from++
		}
	}
	return nil
}

// open reads the stream's head and first event.
func (r *Reader) open(ctx context.Context, id uuid.UUID) (*folder, uint64, error) {
	f := &folder{reader: reader{ctx: ctx, st: r.Store, stream: events.TaskStream(id)}, marks: r.Marks}
	head, err := f.head()
	if err != nil {
		return nil, 0, err
	}
	if f.created, err = f.at(0); err != nil {
		return nil, 0, err
	}
	f.first = f.created.Version
	return f, head, nil
}

// ReadPage reads the page of task id's audit trail that rg names, with its
// rows.
func (r *Reader) ReadPage(ctx context.Context, id uuid.UUID, rg Range) (Page, error) {
	if rg.Limit < 1 {
		return Page{}, fmt.Errorf("audit: page limit %d", rg.Limit)
	}
	f, head, err := r.open(ctx, id)
	if err != nil {
		return Page{}, err
	}
	p := Page{TaskID: id, Head: head, Created: f.created, Exact: true}
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
	// Nothing is left before the stream's first event (retention).
	lo = max(lo, f.first)
	if lo >= hi {
		return p, nil
	}
	if r.MaxFold > 0 && f.distance(lo) > uint64(r.MaxFold) {
		return f.lookbackPage(p, lo, hi)
	}
	fd, err := f.start(lo)
	if err != nil {
		return Page{}, err
	}
	p.Events = make([]events.Recorded, 0, hi-lo)
	p.Rows = make([]history.Row, 0, hi-lo)
	err = f.fold(fd, lo, hi, func(rec events.Recorded, row history.Row) {
		p.Events, p.Rows = append(p.Events, rec), append(p.Rows, row)
	})
	if err != nil {
		return Page{}, err
	}
	return p, nil
}

// lookbackPage is the page [lo, hi) folded from the history.Lookback
// events before it (history.RowsFrom): not exact.
func (f *folder) lookbackPage(p Page, lo, hi uint64) (Page, error) {
	start := max(lo-min(lo, history.Lookback), f.first)
	recs, err := f.read(start, int(hi-start))
	if err != nil {
		return Page{}, err
	}
	skip := min(int(lo-start), len(recs))
	if p.Rows, err = history.RowsFrom(p.Created, recs, skip); err != nil {
		return Page{}, err
	}
	p.Events, p.Exact = recs[skip:], false
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
// history.Explain takes it) from the events around at, folded from the
// stream's first event (Reader.Explain with no Marks).
func Explain(ctx context.Context, st events.Store, id uuid.UUID, at time.Time, window time.Duration) (history.Explanation, error) {
	return (&Reader{Store: st}).Explain(ctx, id, at, window)
}

// Explain answers `cronactor explain` for task id at time at (window as
// history.Explain takes it): the events around at, found by binary
// searches over versions with point reads, folded from the latest exact
// starting point before them (see Reader).
func (r *Reader) Explain(ctx context.Context, id uuid.UUID, at time.Time, window time.Duration) (history.Explanation, error) {
	ex, _, err := r.ExplainExact(ctx, id, at, window)
	return ex, err
}

// ExplainExact is Explain, and says whether the explanation is exact: it
// is not when MaxFold made it fold a look-back instead.
func (r *Reader) ExplainExact(ctx context.Context, id uuid.UUID, at time.Time, window time.Duration) (history.Explanation, bool, error) {
	f, head, err := r.open(ctx, id)
	if err != nil {
		return history.Explanation{}, false, err
	}
	created := f.created
	idx, ok, err := f.lastAtOrBefore(at, head)
	if err != nil {
		return history.Explanation{}, false, err
	}
	if !ok {
		// Before the task existed (or what is left of it): the decisions
		// from its first event on, within the window.
		if window == 0 {
			ex, err := history.Explain([]events.Recorded{created}, at, window)
			if err != nil {
				return history.Explanation{}, false, err
			}
			window = ex.Window
		}
		hi := f.first
		if h, ok, err := f.lastAtOrBefore(at.Add(window), head); err != nil {
			return history.Explanation{}, false, err
		} else if ok {
			hi = h
		}
		recs, err := f.read(f.first, int(min(hi-f.first, MaxExplainEvents))+2)
		if err != nil {
			return history.Explanation{}, false, err
		}
		ex, err := history.Explain(recs, at, window)
		return ex, true, err
	}
	if r.MaxFold > 0 && f.distance(idx) > uint64(r.MaxFold) {
		ex, err := f.lookbackExplain(idx, head, at, window)
		return ex, false, err
	}
	if window == 0 {
		// One interval of the task, as the row of the last event at or
		// before at says it (a cron run's spacing on its start).
		fd, err := f.start(idx)
		if err != nil {
			return history.Explanation{}, false, err
		}
		var last history.Row
		if err := f.fold(fd, idx, idx+1, func(_ events.Recorded, row history.Row) { last = row }); err != nil {
			return history.Explanation{}, false, err
		}
		window = last.Interval
	}
	lo, hi, err := f.window(idx, head, at, window)
	if err != nil {
		return history.Explanation{}, false, err
	}
	var mark *history.Mark
	if lo > f.first {
		fd, err := f.start(lo)
		if err != nil {
			return history.Explanation{}, false, err
		}
		mark = fd.Mark()
	}
	recs, err := f.read(lo, int(hi-lo+1))
	if err != nil {
		return history.Explanation{}, false, err
	}
	if len(recs) == 0 || recs[0].Version != lo {
		return history.Explanation{}, false, fmt.Errorf("audit: %s has no event at version %d", f.stream, lo)
	}
	ex, err := history.ExplainMark(created, mark, recs, at, window)
	return ex, true, err
}

// window is the versions [lo, hi] an explanation of at folds: the events
// decided within window of at, the last at or before it (idx) and the
// first after it, at most MaxExplainEvents on each side of idx.
func (f *folder) window(idx, head uint64, at time.Time, window time.Duration) (lo, hi uint64, err error) {
	lo, hi = idx, min(idx+1, head)
	// The first event decided at or after at - window.
	if l, ok, err := f.lastAtOrBeforeNear(at.Add(-window).Add(-time.Nanosecond), head, idx); err != nil {
		return 0, 0, err
	} else if !ok {
		lo = f.first // the window starts before the task (or what is left of it)
	} else if l+1 < lo {
		lo = l + 1
	}
	if h, _, err := f.lastAtOrBeforeNear(at.Add(window), head, idx); err != nil {
		return 0, 0, err
	} else if h+1 > hi {
		hi = min(h+1, head)
	}
	lo = max(lo, idx-min(idx, MaxExplainEvents), f.first)
	hi = min(hi, idx+MaxExplainEvents)
	return lo, hi, nil
}

// lookbackExplain is the explanation folded from the history.Lookback
// events before its window (history.ExplainFrom): not exact.
func (f *folder) lookbackExplain(idx, head uint64, at time.Time, window time.Duration) (history.Explanation, error) {
	if window == 0 {
		start := max(idx-min(idx, history.Lookback), f.first)
		recs, err := f.read(start, int(idx-start+1))
		if err != nil {
			return history.Explanation{}, err
		}
		ex, err := history.ExplainFrom(f.created, recs, at, 0)
		if err != nil {
			return history.Explanation{}, err
		}
		window = ex.Window
	}
	lo, hi, err := f.window(idx, head, at, window)
	if err != nil {
		return history.Explanation{}, err
	}
	start := max(lo-min(lo, history.Lookback), f.first)
	recs, err := f.read(start, int(hi-start+1))
	if err != nil {
		return history.Explanation{}, err
	}
	return history.ExplainFrom(f.created, recs, at, window)
}
