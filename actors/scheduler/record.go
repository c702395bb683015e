package scheduler

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
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

// newRecord is the record of st, a string of its own size. The position's
// Prepare is written as its difference from Commit (0 on the embedded
// store): a byte or two less puts a typical record in the 112-byte size
// class, not the 128-byte one.
func newRecord(st *task.Initial) string { return recordOf(&st.State, st.Position) }

// recordOf is the record of a task in state st whose latest event is at
// pos.
func recordOf(st *rules.State, pos events.Position) string {
	p := scratch.Get().(*[]byte)
	b := binary.AppendUvarint((*p)[:0], pos.Commit)
	b = binary.AppendVarint(b, int64(pos.Prepare-pos.Commit))
	b, _ = st.AppendBinary(b) // it never fails
	rec := string(b)
	*p = b
	scratch.Put(p)
	return rec
}

// readRecord sets st to the task rec is the record of.
func readRecord(rec string, st *task.Initial) error {
	if err := readRecordInto(rec, &st.State, &st.Position); err != nil {
		return err
	}
	st.Tracked = true
	return nil
}

// readRecordInto sets st and pos to the state and the latest event's
// position of the task rec is the record of.
func readRecordInto(rec string, st *rules.State, pos *events.Position) error {
	// A view of the string's bytes, read only: UnmarshalBinary copies what
	// it keeps. (A conversion would copy the record on every wake.)
	b := unsafe.Slice(unsafe.StringData(rec), len(rec))
	c, n := binary.Uvarint(b)
	if n <= 0 {
		return errRecord
	}
	d, m := binary.Varint(b[n:])
	if m <= 0 {
		return errRecord
	}
	pos.Commit, pos.Prepare = c, c+uint64(d)
	if err := st.UnmarshalBinary(b[n+m:]); err != nil {
		return fmt.Errorf("%w: %w", errRecord, err)
	}
	return nil
}

// placement is what Start needs to place a recovered task: nothing (idle:
// deleted, nothing open), an actor (an open run), or its record and, when
// it is due some time, its place in the due-time index; and, unless it is
// deleted, the owner it is listed under and its name.
type placement struct {
	idle, deleted, rests, due bool
	owner, name               string         // unless deleted
	entry                     dueindex.Entry // when due
}

// placementOf is where task id, in state st, goes at Start.
func placementOf(id uuid.UUID, st *rules.State) placement {
	p := placement{idle: rules.Idle(st), deleted: st.Status == rules.StatusDeleted, rests: rules.Rests(st)}
	if p.idle {
		return p
	}
	if !p.deleted {
		p.owner, p.name = st.Spec.Owner, st.Spec.Name
	}
	if p.rests {
		if t, ok := recoveredTrack(st); ok {
			p.due, p.entry = true, dueindex.Entry{TaskID: id, NextRun: t.NextRun, Queue: st.Spec.Policy.QueueName()}
		}
	}
	return p
}

// recoveredTrack is where a task recovered from the log goes in the
// due-time index: the Track its actor would send on starting (R9), if
// active.
func recoveredTrack(s *rules.State) (rules.Track, bool) {
	t, ok := rules.IndexTrack(s)
	return t, ok && t.Active
}
