package embedded

import (
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// streamHeads is the committer's last version of every stream it has seen
// (a stream it has not seen is read from the log). Task streams — all but
// a few of a scheduler's streams — are kept by their task ID: an entry of
// 24 bytes with no pointer, which the collector does not scan. Keyed by
// the name, each entry also held the stream's 41-byte name (48 bytes on
// the heap) and a pointer to it: 549 → 484 bytes of heap per idle task at
// 100,000 tasks. A lookup costs about as much either way (~500 ns in a
// wave: cache misses in a map of every task; docs/performance.md, "The
// committer's stream heads").
type streamHeads struct {
	tasks map[uuid.UUID]uint64
	other map[string]uint64
}

func newStreamHeads() streamHeads {
	return streamHeads{tasks: map[uuid.UUID]uint64{}, other: map[string]uint64{}}
}

// headKey is a stream as streamHeads keys it: its task ID, or its name.
type headKey struct {
	id   uuid.UUID
	task bool
	name string
}

// key is stream's key, worked out once per append.
func (h *streamHeads) key(stream string) headKey {
	id, ok := taskStreamID(stream)
	return headKey{id: id, task: ok, name: stream}
}

// get returns the stream's last version, if the committer knows it.
func (h *streamHeads) get(k headKey) (uint64, bool) {
	if k.task {
		v, ok := h.tasks[k.id]
		return v, ok
	}
	v, ok := h.other[k.name]
	return v, ok
}

// set records v as the stream's last version.
func (h *streamHeads) set(k headKey, v uint64) {
	if k.task {
		h.tasks[k.id] = v
		return
	}
	h.other[k.name] = v
}

// taskStreamID is the task ID of a stream named exactly as
// events.TaskStream names it ("task-" and the ID in lowercase canonical
// form). Any other name, even one that names the same ID differently
// ("task-" and uppercase hex, say), is a stream of its own and is not
// one.
func taskStreamID(stream string) (uuid.UUID, bool) {
	const p = len(events.TaskStreamPrefix)
	var id uuid.UUID
	if len(stream) != p+36 || stream[:p] != events.TaskStreamPrefix {
		return id, false
	}
	s := stream[p:]
	j := 0
	for i := 0; i < 36; {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return id, false
			}
			i++
			continue
		}
		hi, ok1 := lowerHex(s[i])
		lo, ok2 := lowerHex(s[i+1])
		if !ok1 || !ok2 {
			return id, false
		}
		id[j] = hi<<4 | lo
		j++
		i += 2
	}
	return id, true
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
