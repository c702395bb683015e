package audit

import (
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// marksOf folds a task stream of n events (created, then runs enqueued and
// completed) and returns the Marks a fold leaves every `every` events.
func marksOf(t *testing.T, n, every int) []*history.Mark {
	t.Helper()
	id := uuid.New()
	at := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	var fd history.Fold
	var out []*history.Mark
	for v := range n {
		var e events.Event = events.TaskCreated{TaskID: id, Name: "A", Owner: "o", Kind: "noop",
			Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Timebox: events.Duration(time.Second), NextRun: at.Add(time.Minute)}
		if v > 0 {
			e = events.RunEnqueued{RunID: events.RunID(id, v), Run: v, Due: at, NextRun: at.Add(time.Minute), Slot: at}
		}
		p, err := events.Propose(e, uuid.Nil, at)
		if err != nil {
			t.Fatal(err)
		}
		r := events.Recorded{Metadata: events.Metadata{ID: p.ID, Stream: events.TaskStream(id), Version: uint64(v), At: at}, Type: p.Type, Schema: p.Schema, Data: p.Data}
		if _, err := fd.Apply(r); err != nil {
			t.Fatal(err)
		}
		if v > 0 && v%every == 0 {
			out = append(out, fd.Mark())
		}
	}
	return out
}

// Past their bound, Marks drop the stream read least recently; a stream
// that alone fills them keeps every other one of its Marks.
func TestMarksBound(t *testing.T) {
	m := NewMarks(4, 6)
	a, b, c := marksOf(t, 13, 4), marksOf(t, 13, 4), marksOf(t, 41, 4)
	for _, mk := range a {
		m.put("a", 0, mk)
	}
	for _, mk := range b {
		m.put("b", 0, mk)
	}
	if m.Len() != 6 {
		t.Fatalf("%d marks, want 6", m.Len())
	}
	if got := m.atOrBefore("a", 0, 9); got == nil || got.Version != 8 { // a is read: b is now the older
		t.Fatalf("a's mark at or before 9: %v", got)
	}
	if got := m.atOrBefore("a", 1, 9); got != nil {
		t.Fatal("a mark of a fold from another first event")
	}
	m.put("c", 0, c[0])
	if m.Len() != 4 || m.atOrBefore("b", 0, 100) != nil || m.atOrBefore("a", 0, 100) == nil {
		t.Fatalf("after a third stream: %d marks, b kept %v", m.Len(), m.atOrBefore("b", 0, 100) != nil)
	}
	for _, mk := range c[1:] {
		m.put("c", 0, mk)
	}
	if m.Len() > 6 || m.atOrBefore("a", 0, 100) != nil {
		t.Fatalf("c alone: %d marks, a kept %v", m.Len(), m.atOrBefore("a", 0, 100) != nil)
	}
	// c's Marks were thinned, not cut from one end: the newest is kept,
	// and old ones are still there.
	if got := m.atOrBefore("c", 0, 100); got == nil || got.Version != 40 {
		t.Fatalf("c's newest mark: %v", got)
	}
	if got := m.atOrBefore("c", 0, 11); got == nil {
		t.Fatal("c kept no old mark")
	}
	if m.Len() < 3 {
		t.Fatalf("c kept %d marks", m.Len())
	}
	m.drop("c")
	if m.Len() != 0 {
		t.Fatalf("%d marks after dropping the last stream", m.Len())
	}

	// A lone stream over the bound: every other Mark goes, the newest
	// stays.
	m = NewMarks(4, 4)
	for _, mk := range marksOf(t, 21, 4) {
		m.put("d", 0, mk)
	}
	if got := m.atOrBefore("d", 0, 100); m.Len() != 3 || got == nil || got.Version != 20 {
		t.Fatalf("d thinned: %d marks, the newest %v", m.Len(), got)
	}
}
