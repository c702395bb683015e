// Package logtest builds recorded events by hand for the projection tests:
// a Log hands out stream versions and global positions the way a store
// would, without a store.
package logtest

import (
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Log is an in-memory global log under construction.
type Log struct {
	t        testing.TB
	Events   []events.Recorded
	versions map[string]uint64
}

// New returns an empty log; failures go to t.
func New(t testing.TB) *Log {
	return &Log{t: t, versions: map[string]uint64{}}
}

// Add appends ev to the stream of task at time at, and returns the record.
func (l *Log) Add(task uuid.UUID, at time.Time, ev events.Event) events.Recorded {
	l.t.Helper()
	p, err := events.Propose(ev, uuid.Nil, at)
	if err != nil {
		l.t.Fatalf("propose %T: %v", ev, err)
	}
	stream := events.TaskStream(task)
	v, seen := l.versions[stream]
	if seen {
		v++
	}
	l.versions[stream] = v
	pos := uint64(len(l.Events) + 1)
	rec := events.Recorded{
		Metadata: events.Metadata{ID: p.ID, Stream: stream, Version: v,
			Position: events.Position{Commit: pos, Prepare: pos}, At: p.At},
		Type: p.Type, Schema: p.Schema, Data: p.Data,
	}
	l.Events = append(l.Events, rec)
	return rec
}

// Stream returns the events of one task's stream, in order.
func (l *Log) Stream(task uuid.UUID) []events.Recorded {
	var out []events.Recorded
	for _, r := range l.Events {
		if r.Stream == events.TaskStream(task) {
			out = append(out, r)
		}
	}
	return out
}
