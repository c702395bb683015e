package crontasks

import (
	"sync"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cronactor/cronactor/events"
)

// snapshot is the view as it stood right after the batch that ended at
// pos: a Pebble snapshot of its database, with what View.AsOf needs to know
// to start a fold there.
type snapshot struct {
	pos  events.Position
	snap *pebble.Snapshot
	// maxAt is the latest decision time of the events at or before pos: a
	// query as of a time T may start here only if maxAt <= T (no stream
	// has ended its part yet).
	maxAt time.Time
	// minAfter is the earliest decision time of the events after pos that
	// the view has folded since (none when !anyAfter): if it is after T,
	// no event between pos and the view's checkpoint is kept as of T.
	minAfter time.Time
	anyAfter bool
	// refs counts the as-of views reading snap, plus one while the list
	// keeps it.
	refs int
}

// snapshots is the list of snapshots a view keeps, oldest first. The
// applier adds to it (under the view's applyMu); AsOf reads it.
type snapshots struct {
	mu    sync.Mutex
	every int // events folded between two snapshots; doubles on thinning
	max   int
	since int       // events folded since the last snapshot
	maxAt time.Time // latest decision time of every event folded
	// tracked is the view's checkpoint as of the last folded batch: the
	// minAfter of every snapshot covers the events up to it.
	tracked events.Position
	list    []*snapshot
	// resumed is the checkpoint the view had when it first folded after
	// being opened: an earlier process folded the events up to it, so when
	// they were decided is unknown (a snapshot is then no start for a time
	// query) until a fold from the start of the log has read them (learn).
	started      bool
	resumed      events.Position
	resumedKnown bool
	resumedMaxAt time.Time
}

// newSnapshots returns the list for cfg, nil when snapshots are disabled.
func newSnapshots(cfg Config) *snapshots {
	if cfg.SnapshotEvery < 0 {
		return nil
	}
	return &snapshots{every: cfg.SnapshotEvery, max: cfg.Snapshots}
}

// folded records a batch the view just committed: recs with positions in
// (from, to] were folded. It runs under the view's applyMu, with db
// holding exactly the view as of to.
func (s *snapshots) folded(db *pebble.DB, recs []events.Recorded, from, to events.Position) {
	if s == nil {
		return
	}
	var n int
	var minAt, maxAt time.Time
	for _, r := range recs {
		if !from.Less(r.Position) || to.Less(r.Position) {
			continue
		}
		if n == 0 || r.At.Before(minAt) {
			minAt = r.At
		}
		if n == 0 || r.At.After(maxAt) {
			maxAt = r.At
		}
		n++
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		s.started, s.resumed, s.resumedKnown = true, from, from.IsZero()
	}
	s.tracked = to
	if n == 0 {
		return
	}
	for _, sn := range s.list {
		if !sn.anyAfter || minAt.Before(sn.minAfter) {
			sn.minAfter, sn.anyAfter = minAt, true
		}
	}
	if maxAt.After(s.maxAt) {
		s.maxAt = maxAt
	}
	s.since += n
	if s.since < s.every {
		return
	}
	s.since = 0
	s.list = append(s.list, &snapshot{pos: to, snap: db.NewSnapshot(), maxAt: s.maxAt, refs: 1})
	if len(s.list) <= s.max {
		return
	}
	// Keep the newest and every other one before it, so the list still
	// spans everything folded, twice as sparse.
	var kept []*snapshot
	for i, sn := range s.list {
		if (len(s.list)-1-i)%2 == 0 {
			kept = append(kept, sn)
		} else {
			s.unrefLocked(sn)
		}
	}
	s.list = kept
	s.every *= 2
}

// plan is where an as-of fold starts and, for a query by time, where it
// may stop reading early.
type plan struct {
	// start is the snapshot to fold from (nil: from the start of the log).
	start *snapshot
	// skipFrom, when not zero, ends the first part of the read: no event
	// after it up to skipTo is kept as of the point's time, so the fold
	// reads again only after skipTo.
	skipFrom, skipTo events.Position
	// learn, when not nil, wants the latest decision time of the events up
	// to resumed, which a fold from the start reads on its way.
	learn   *snapshots
	resumed events.Position
}

// plan picks the latest snapshot a fold as of p may start from and takes a
// reference to it (release it with release).
func (s *snapshots) plan(p Point) plan {
	if s == nil {
		return plan{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var pl plan
	at := -1
	for i, sn := range s.list {
		if !p.Position.IsZero() && p.Position.Less(sn.pos) {
			break
		}
		if !p.Time.IsZero() && (!s.resumedKnown || sn.maxAt.After(p.Time) || s.resumedMaxAt.After(p.Time)) {
			break
		}
		at = i
	}
	if at < 0 && s.started && !s.resumedKnown {
		pl.learn, pl.resumed = s, s.resumed
	}
	if at >= 0 {
		pl.start = s.list[at]
		pl.start.refs++
	}
	if p.Time.IsZero() {
		return pl
	}
	// The first snapshot from the start on after which everything folded
	// was decided after p.Time.
	for _, sn := range s.list[max(at, 0):] {
		if sn.anyAfter && !sn.minAfter.After(p.Time) {
			continue
		}
		if !p.Position.IsZero() && p.Position.Less(sn.pos) {
			break
		}
		pl.skipFrom, pl.skipTo = sn.pos, s.tracked
		break
	}
	return pl
}

// learnResumed records the latest decision time of the events up to the
// position the view resumed from, read by a fold from the start.
func (s *snapshots) learnResumed(maxAt time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.resumedKnown {
		s.resumedKnown, s.resumedMaxAt = true, maxAt
	}
}

// release gives back a reference plan took.
func (s *snapshots) release(sn *snapshot) {
	if s == nil || sn == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unrefLocked(sn)
}

func (s *snapshots) unrefLocked(sn *snapshot) {
	sn.refs--
	if sn.refs == 0 {
		sn.snap.Close()
	}
}

// close drops every snapshot; the view's database closes next.
func (s *snapshots) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sn := range s.list {
		s.unrefLocked(sn)
	}
	s.list = nil
}
