package embedded

import (
	"strings"

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
	rest, ok := strings.CutPrefix(stream, events.TaskStreamPrefix)
	if !ok || len(rest) != 36 {
		return uuid.UUID{}, false
	}
	id, err := uuid.Parse(rest)
	var canon [36]byte
	if err != nil || string(events.AppendUUID(canon[:0], id)) != rest {
		return uuid.UUID{}, false
	}
	return id, true
}
