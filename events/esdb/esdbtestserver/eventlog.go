package esdbtestserver

import (
	"encoding/binary"
	"encoding/json"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"
)

// firstPosition is where the first event lands in $all; a real log starts
// with system records, so no event of ours ever sits at position 0.
const firstPosition = 1024

// record is one stored event. Records are immutable once written.
type record struct {
	id          uuid.UUID
	stream      string
	revision    uint64
	commit      uint64
	prepare     uint64
	typ         string
	contentType string
	created     int64 // .NET ticks (100 ns) since the Unix epoch, as the server sends them
	data        []byte
	meta        []byte
}

// proposed is an event of an append request, validated.
type proposed struct {
	id          uuid.UUID
	typ         string
	contentType string
	data        []byte
	meta        []byte
}

// eventLog is the double's storage: every stream and $all, in memory. It
// outlives Stop/Start, as a durable server's data does.
type eventLog struct {
	mu      sync.Mutex
	streams map[string][]*record
	all     []*record
	next    uint64        // prepare position of the next event
	changed chan struct{} // closed and replaced after every write
}

func newEventLog() *eventLog {
	return &eventLog{streams: map[string][]*record{}, next: firstPosition, changed: make(chan struct{})}
}

// expectation is an append's expected revision, decoded.
type expectation struct {
	kind     expectKind
	revision uint64
}

type expectKind uint8

const (
	expectAny expectKind = iota
	expectNoStream
	expectStreamExists
	expectRevision
)

// appendOutcome is what an append did: wrote, recognised a retry, or
// refused the expected revision.
type appendOutcome struct {
	wrong      bool
	idempotent bool
	exists     bool   // the stream has events (after the append, or now when wrong)
	current    uint64 // last revision of the stream (or of the recognised retry)
	commit     uint64
	prepare    uint64
}

// append applies EventStoreDB's rules: a matching expectation writes; a
// non-matching one whose events are already stored right after the expected
// revision (same IDs, same count) is a retry and writes nothing; anything
// else is a wrong expected version.
func (l *eventLog) append(stream string, exp expectation, evs []proposed) appendOutcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	recs := l.streams[stream]
	exists := len(recs) > 0
	var last uint64
	if exists {
		last = recs[len(recs)-1].revision
	}
	ok := false
	switch exp.kind {
	case expectAny:
		ok = true
		if at, found := findRetry(recs, evs); found {
			return appendOutcome{idempotent: true, exists: true, current: at}
		} else if len(evs) > 0 && containsID(recs, evs[0].id) {
			// The first event is stored but the rest differs: EventStoreDB
			// calls this corrupted idempotency and refuses it.
			return appendOutcome{wrong: true, exists: exists, current: last}
		}
	case expectNoStream:
		ok = !exists
		if !ok && matchesAt(recs, 0, evs) {
			return appendOutcome{idempotent: true, exists: true, current: uint64(len(evs)) - 1}
		}
	case expectStreamExists:
		ok = exists
	case expectRevision:
		ok = exists && last == exp.revision
		if !ok && exists && exp.revision < last && matchesAt(recs, exp.revision+1, evs) {
			return appendOutcome{idempotent: true, exists: true, current: exp.revision + uint64(len(evs))}
		}
	}
	if !ok {
		return appendOutcome{wrong: true, exists: exists, current: last}
	}
	if len(evs) == 0 {
		return appendOutcome{exists: exists, current: last}
	}
	commit := l.next
	rev := l.writeLocked(stream, evs)
	// Like a real server, the answer carries the position of the write
	// (its commit position and the prepare position of its first event),
	// which is not that of its last event when it wrote several.
	return appendOutcome{exists: true, current: rev, commit: commit, prepare: commit}
}

// writeLocked stores evs at the end of stream and $all and wakes the
// subscriptions; it returns the last revision written. l.mu must be held.
func (l *eventLog) writeLocked(stream string, evs []proposed) uint64 {
	recs := l.streams[stream]
	commit := l.next
	now := time.Now().UnixNano() / 100
	var rev uint64
	for _, e := range evs {
		rev = uint64(len(recs))
		r := &record{
			id: e.id, stream: stream, revision: rev,
			commit: commit, prepare: l.next,
			typ: e.typ, contentType: e.contentType, created: now,
			data: e.data, meta: e.meta,
		}
		// Advance like a log of byte records would: a header plus the body.
		l.next += 64 + uint64(len(stream)+len(e.typ)+len(e.data)+len(e.meta))
		recs = append(recs, r)
		l.all = append(l.all, r)
	}
	l.streams[stream] = recs
	close(l.changed)
	l.changed = make(chan struct{})
	return rev
}

// findRetry reports whether evs are already stored, contiguously and in
// order, in recs, and the revision of the last of them.
func findRetry(recs []*record, evs []proposed) (uint64, bool) {
	if len(evs) == 0 {
		return 0, false
	}
	for i, r := range recs {
		if r.id == evs[0].id {
			if matchesAt(recs, uint64(i), evs) {
				return uint64(i + len(evs) - 1), true
			}
			return 0, false
		}
	}
	return 0, false
}

func containsID(recs []*record, id uuid.UUID) bool {
	for _, r := range recs {
		if r.id == id {
			return true
		}
	}
	return false
}

// matchesAt reports whether recs[from:from+len(evs)] exist and carry the IDs
// of evs.
func matchesAt(recs []*record, from uint64, evs []proposed) bool {
	if len(evs) == 0 || from+uint64(len(evs)) > uint64(len(recs)) {
		return false
	}
	for i, e := range evs {
		if recs[from+uint64(i)].id != e.id {
			return false
		}
	}
	return true
}

// snapshotAll returns $all as it is now and the channel closed by the next
// write.
func (l *eventLog) snapshotAll() ([]*record, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all, l.changed
}

// snapshotStream returns a stream's records (nil when it has none).
func (l *eventLog) snapshotStream(stream string) []*record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.streams[stream]
}

// before reports whether r sits strictly before the position (c, p).
func (r *record) before(c, p uint64) bool {
	if r.commit != c {
		return r.commit < c
	}
	return r.prepare < p
}

// firstAtOrAfter is the index of the first record of all at or after (c, p).
func firstAtOrAfter(all []*record, c, p uint64) int {
	return sort.Search(len(all), func(i int) bool { return !all[i].before(c, p) })
}

// firstAfter is the index of the first record of all strictly after (c, p).
func firstAfter(all []*record, c, p uint64) int {
	return sort.Search(len(all), func(i int) bool {
		r := all[i]
		return !r.before(c, p) && !(r.commit == c && r.prepare == p)
	})
}

func uuidBits(id uuid.UUID) (int64, int64) {
	return int64(binary.BigEndian.Uint64(id[:8])), int64(binary.BigEndian.Uint64(id[8:]))
}

func uuidFromBits(most, least int64) uuid.UUID {
	var id uuid.UUID
	binary.BigEndian.PutUint64(id[:8], uint64(most))
	binary.BigEndian.PutUint64(id[8:], uint64(least))
	return id
}

// truncateBefore is the $tb of stream's metadata: the latest "$metadata"
// event of "$$" + stream, 0 when it has none or it does not parse.
func (l *eventLog) truncateBefore(stream string) uint64 {
	meta := l.snapshotStream("$$" + stream)
	for i := len(meta) - 1; i >= 0; i-- {
		if meta[i].typ != "$metadata" {
			continue
		}
		var m struct {
			TB *uint64 `json:"$tb"`
		}
		if json.Unmarshal(meta[i].data, &m) != nil || m.TB == nil {
			return 0
		}
		return *m.TB
	}
	return 0
}
