package scheduler

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
)

// A resting task's record is what the scheduler keeps of a task that has no
// actor in memory: the position of its latest event (two uvarints) and its
// folded state in taskstate's binary form — about a hundred bytes for an
// interval task, against a few kilobytes for an actor. The next actor of
// the task starts from it, with no store read; the due-time index holds
// the task meanwhile (task.Initial.Tracked).

var errRecord = errors.New("scheduler: bad record")

// scratch holds the buffers records are encoded in before they are copied
// to a slice of their exact size (a million of them are kept).
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// newRecord is the record of st, in a slice of its own size.
func newRecord(st *task.Initial) []byte {
	p := scratch.Get().(*[]byte)
	b := binary.AppendUvarint((*p)[:0], st.Position.Commit)
	b = binary.AppendUvarint(b, st.Position.Prepare)
	b, _ = st.State.AppendBinary(b) // it never fails
	rec := make([]byte, len(b))
	copy(rec, b)
	*p = b
	scratch.Put(p)
	return rec
}

// readRecord sets st to the task rec is the record of.
func readRecord(rec []byte, st *task.Initial) error {
	c, n := binary.Uvarint(rec)
	if n <= 0 {
		return errRecord
	}
	p, m := binary.Uvarint(rec[n:])
	if m <= 0 {
		return errRecord
	}
	st.Position.Commit, st.Position.Prepare = c, p
	if err := st.State.UnmarshalBinary(rec[n+m:]); err != nil {
		return fmt.Errorf("%w: %w", errRecord, err)
	}
	st.Tracked = true
	return nil
}

// recoveredTrack is where a task recovered from the log goes in the
// due-time index: the Track its actor would send on starting (R9), if
// active.
func recoveredTrack(s rules.State) (rules.Track, bool) {
	for _, e := range rules.Recover(s) {
		if t, ok := e.(rules.Track); ok {
			return t, t.Active
		}
	}
	return rules.Track{}, false
}
