package embedded

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cronactor/cronactor/events"
)

// The tail is the newest durable records, kept in memory as the committer
// encoded them, so that a subscriber at the head reads what the last groups
// wrote without a Pebble iterator. Such a subscriber wakes after every group
// and read a few records each time through a fresh iterator over the
// memtables and every L0 file: 6% of a 100,000-task wave's CPU went to the
// bench's one subscriber (docs/performance.md, "A subscriber at the head").
// The projections of the daemon read the same way.
//
// The committer keeps the tail only while a subscriber is under way: it
// copies every record once more, which a store nobody follows has no use
// for.
//
// A chunk is one group's records, immutable once published: a reader takes
// the chunks it needs under s.mu, holding each, and decodes them after
// letting go. The chunks cover consecutive positions ending at s.head, or
// there are none. A chunk dropped from the tail while nobody holds it goes
// back to tailBufs for a later group, so a subscribed store makes few new
// buffers once the tail is full (sync.Pool lets go of some at collections).
// What the tail counts against tailBytes is its buffers' capacity, not the
// records in them, and a pooled buffer far larger than a group needs is
// left to the collector, so a large group's buffer does not stay in the
// tail under a small group's records.

// tailChunk is one group's records.
type tailChunk struct {
	first uint64   // global position of its first record
	b     *tailBuf // nil when skip
	skip  bool     // the group was too large to keep, or nobody subscribes
}

// tailBuf holds the records of a chunk, back to back.
type tailBuf struct {
	data []byte   // the records as stored in Pebble
	ends []uint32 // the end of each record in data
	held atomic.Int32
}

// tailBufs is the buffers of chunks dropped from the tail while nobody
// held them.
var tailBufs sync.Pool

func (c *tailChunk) last() uint64 { return c.first + uint64(len(c.b.ends)) - 1 }

// size is the memory c's buffer holds.
func (b *tailBuf) size() int { return cap(b.data) + 4*cap(b.ends) }

// record returns the record at global position pos, which c holds.
func (c *tailChunk) record(pos uint64) []byte {
	i := pos - c.first
	start := uint32(0)
	if i > 0 {
		start = c.b.ends[i-1]
	}
	return c.b.data[start:c.b.ends[i]]
}

// tail is the published chunks, oldest first, and their size; s.mu guards it.
type tail struct {
	chunks []tailChunk
	bytes  int
}

// push publishes c, the group just made durable, whose records follow head
// (the durable head before it), and drops the oldest chunks beyond
// tailBytes. A chunk that does not follow the last one (the head moved
// without the tail, see reset) starts the tail anew.
func (t *tail) push(c tailChunk, head uint64) {
	if c.skip {
		t.reset()
		return
	}
	if len(c.b.ends) == 0 {
		return
	}
	if c.first != head+1 || (len(t.chunks) > 0 && t.chunks[len(t.chunks)-1].last() != head) {
		t.reset()
	}
	t.chunks = append(t.chunks, c)
	t.bytes += c.b.size()
	drop := 0
	for t.bytes > tailBytes && drop < len(t.chunks)-1 {
		t.bytes -= t.chunks[drop].b.size()
		t.chunks[drop].drop()
		drop++
	}
	if drop > 0 {
		// Shift rather than re-slice, so the array is reused instead of
		// growing a new one at every append.
		n := copy(t.chunks, t.chunks[drop:])
		clear(t.chunks[n:])
		t.chunks = t.chunks[:n]
	}
}

// reset empties the tail: readers go to Pebble until the next group.
func (t *tail) reset() {
	for i := range t.chunks {
		t.chunks[i].drop()
	}
	t.chunks = t.chunks[:0]
	t.bytes = 0
}

// drop takes c out of the tail (s.mu held for writing, so nobody takes
// it meanwhile); its buffer is reused unless a reader still holds it.
func (c *tailChunk) drop() {
	if c.b.held.Load() == 0 {
		tailBufs.Put(c.b)
	}
	*c = tailChunk{}
}

// chunksFor appends to refs[:0] the chunks holding the records after
// position after, up to head and at most limit of them, when the tail
// holds the first of them, and holds each; ok is false when it does not.
// s.mu must be held; release the chunks with letGo.
func (t *tail) chunksFor(refs []tailChunk, after, head uint64, limit int) ([]tailChunk, bool) {
	refs = refs[:0]
	if len(t.chunks) == 0 || after+1 < t.chunks[0].first || after >= head {
		return refs, false
	}
	end := head
	if limit > 0 && after+uint64(limit) < end {
		end = after + uint64(limit)
	}
	for i := range t.chunks {
		c := &t.chunks[i]
		if c.last() <= after {
			continue
		}
		if c.first > end {
			break
		}
		c.b.held.Add(1)
		refs = append(refs, *c)
	}
	return refs, len(refs) > 0
}

// letGo releases the chunks chunksFor held.
func letGo(refs []tailChunk) {
	for i := range refs {
		refs[i].b.held.Add(-1)
	}
	clear(refs) // keep no chunk alive past its eviction
}

// readTail appends to out[:0] the records after position after up to head,
// at most limit of them, from the tail; ok is false when the tail does not
// hold the first of them, and the caller reads Pebble. refs is scratch for
// the chunks, returned for reuse.
func (s *Store) readTail(out []events.Recorded, refs []tailChunk, after, head uint64, limit int) ([]events.Recorded, []tailChunk, bool, error) {
	s.mu.RLock()
	refs, ok := s.tail.chunksFor(refs, after, head, limit)
	s.mu.RUnlock()
	out = out[:0]
	if !ok {
		return out, refs, false, nil
	}
	defer letGo(refs)
	pos := after + 1
	for i := range refs {
		c := &refs[i]
		for ; pos <= c.last() && pos <= head && (limit <= 0 || len(out) < limit); pos++ {
			rec, err := decodeRecord(pos, c.record(pos))
			if err != nil {
				return out, refs, true, fmt.Errorf("%w: record at global position %d in the store's memory: %v", ErrCorrupt, pos, err)
			}
			out = append(out, rec)
		}
	}
	return out, refs, true, nil
}

// newTailChunk makes the chunk of a group whose first record will be at
// position first, with room for what pending is expected to write.
func newTailChunk(first uint64, pending []*appendReq) tailChunk {
	n, size := 0, 0
	for _, r := range pending {
		for i := range r.evs {
			n++
			size += len(r.evs[i].Data) + len(r.evs[i].Type) + len(r.stream) + recordOverhead
		}
	}
	if size > tailBytes {
		return tailChunk{first: first, skip: true}
	}
	b, _ := tailBufs.Get().(*tailBuf)
	if b == nil || cap(b.data) > 2*size+64<<10 {
		b = &tailBuf{}
	}
	b.data = slices.Grow(b.data[:0], size)
	b.ends = slices.Grow(b.ends[:0], n)
	return tailChunk{first: first, b: b}
}

// recordOverhead is what a record holds besides its stream, type and data,
// at most: format, checksum, ID, causation, correlation, time, version,
// schema and four length prefixes.
const recordOverhead = 1 + 4 + 3*16 + binary.MaxVarintLen64*3 + 4*binary.MaxVarintLen32

// add appends one record of the group to c. A group larger than the whole
// tail is not kept: publishing it resets the tail.
func (c *tailChunk) add(rec []byte) {
	if c.skip {
		return
	}
	if len(c.b.data)+len(rec) > tailBytes {
		*c = tailChunk{first: c.first, skip: true}
		return
	}
	c.b.data = append(c.b.data, rec...)
	c.b.ends = append(c.b.ends, uint32(len(c.b.data)))
}
