package audit

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/cronactor/cronactor/projections/history"
)

// Default bounds of NewMarks.
const (
	// DefaultMarkEvery is how many events apart the folds of a stream
	// leave a Mark: a page or an explanation folds at most about this many
	// events besides its own once the Marks before it exist.
	DefaultMarkEvery = 512
	// DefaultMaxMarks bounds the Marks kept (each holds one task's state
	// and what the audit adds to it; docs/performance.md measures one of
	// an interval task at about 2 KiB): 10,000 cover a task of five million
	// events, or many shorter ones.
	DefaultMaxMarks = 10000
	// longFold: a fold of more than longFold Mark intervals is long (the
	// first read deep in a stream); maxLongFolds of them run at once per
	// Marks, the others wait their turn (and then find the Marks the
	// earlier ones made).
	longFold     = 8
	maxLongFolds = 2
)

// Marks keeps, in memory, the history.Marks the folds of ReadPage and
// Explain leave every few hundred events of the streams they read: the
// exact starting points of later reads (see Reader). A stream's Marks are
// made by the first read that folds past them — a read deep in a stream no
// read has folded before folds from the stream's first event (or the
// nearest Mark) to it, once — and are kept until the bound is reached, when
// those of the stream read least recently are dropped. Safe for concurrent
// use; share one per store.
type Marks struct {
	every uint64
	max   int

	// long holds a token per long fold running.
	long chan struct{}

	mu      sync.Mutex
	n       int
	clock   uint64
	streams map[string]*streamMarks
}

// streamMarks are one stream's Marks, by version. first is the version of
// the stream's first event when they were made: a fold from another one
// (history retention removed events since) is another fold.
type streamMarks struct {
	first uint64
	ms    []*history.Mark
	used  uint64
}

// NewMarks returns an empty Marks that keeps one Mark every every events
// (≤ 0: DefaultMarkEvery) and at most max of them (≤ 0: DefaultMaxMarks).
func NewMarks(every, max int) *Marks {
	if every <= 0 {
		every = DefaultMarkEvery
	}
	if max <= 0 {
		max = DefaultMaxMarks
	}
	return &Marks{every: uint64(every), max: max, streams: map[string]*streamMarks{}, long: make(chan struct{}, maxLongFolds)}
}

// acquire waits for a long fold's turn (or ctx's end) and returns its
// release.
func (m *Marks) acquire(ctx context.Context) (func(), error) {
	select {
	case m.long <- struct{}{}:
		return func() { <-m.long }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("audit: waiting to fold a long stream: %w", ctx.Err())
	}
}

// Len is the number of Marks kept.
func (m *Marks) Len() int {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// due reports whether a fold leaves a Mark after the event at version v.
func (m *Marks) due(v uint64) bool { return m != nil && v > 0 && v%m.every == 0 }

// atOrBefore is the stream's Mark with the greatest version at or below v,
// made by a fold from the stream's first event at version first; nil when
// there is none.
func (m *Marks) atOrBefore(stream string, first, v uint64) *history.Mark {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sm := m.streams[stream]
	if sm == nil || sm.first != first {
		return nil
	}
	m.clock++
	sm.used = m.clock
	i := sort.Search(len(sm.ms), func(i int) bool { return sm.ms[i].Version > v })
	if i == 0 {
		return nil
	}
	return sm.ms[i-1]
}

// put keeps mk, a Mark of stream made by a fold from its first event at
// version first.
func (m *Marks) put(stream string, first uint64, mk *history.Mark) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sm := m.streams[stream]
	if sm != nil && sm.first != first {
		m.n -= len(sm.ms)
		sm = nil
	}
	if sm == nil {
		sm = &streamMarks{first: first}
		m.streams[stream] = sm
	}
	m.clock++
	sm.used = m.clock
	i := sort.Search(len(sm.ms), func(i int) bool { return sm.ms[i].Version >= mk.Version })
	if i < len(sm.ms) && sm.ms[i].Version == mk.Version {
		return
	}
	sm.ms = append(sm.ms, nil)
	copy(sm.ms[i+1:], sm.ms[i:])
	sm.ms[i] = mk
	m.n++
	for m.n > m.max && len(m.streams) > 0 {
		m.evict(stream)
	}
}

// drop forgets the stream's Marks (one did not match the stream).
func (m *Marks) drop(stream string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if sm := m.streams[stream]; sm != nil {
		m.n -= len(sm.ms)
		delete(m.streams, stream)
	}
}

// evict drops the Marks of the stream read least recently, or, when that
// is the only one, every other of its Marks (they are then twice as far
// apart).
func (m *Marks) evict(current string) {
	var lru string
	var used uint64
	for s, sm := range m.streams {
		if s != current && (lru == "" || sm.used < used) {
			lru, used = s, sm.used
		}
	}
	if lru == "" {
		sm := m.streams[current]
		if len(sm.ms) <= 1 {
			m.n -= len(sm.ms)
			delete(m.streams, current)
			return
		}
		// Every other one, keeping the newest (the latest pages are read
		// most).
		kept := sm.ms[:0]
		for i := (len(sm.ms) - 1) % 2; i < len(sm.ms); i += 2 {
			kept = append(kept, sm.ms[i])
		}
		m.n -= len(sm.ms) - len(kept)
		clear(sm.ms[len(kept):])
		sm.ms = kept
		return
	}
	m.n -= len(m.streams[lru].ms)
	delete(m.streams, lru)
}
