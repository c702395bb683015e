package embedded

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// appendMixed appends groups of every shape to s: single and multi-event
// appends from concurrent writers, and appends refused for their expected
// version, so groups of many sizes and holes in what a group accepted.
func appendMixed(t *testing.T, s *Store, writers, rounds int, data string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream := fmt.Sprintf("task-%d", w)
			for i := range rounds {
				evs := make([]events.Proposed, 1+i%3)
				for j := range evs {
					evs[j] = events.Proposed{ID: uuid.New(), Type: "RunStarted", Schema: 1, At: testAt.Add(time.Duration(i) * time.Second),
						CausationID: uuid.New(), Data: []byte(fmt.Sprintf(`{"w":%d,"i":%d,"j":%d,"d":%q}`, w, i, j, data))}
				}
				if _, err := s.Append(context.Background(), stream, events.AnyVersion, evs...); err != nil {
					errs <- err
					return
				}
				// Refused: the stream exists (a new ID, or it would be taken
				// for a retry of the append above).
				again := evs[0]
				again.ID = uuid.New()
				if _, err := s.Append(context.Background(), stream, events.NoStream, again); err == nil {
					errs <- fmt.Errorf("%s: an append expecting no stream was accepted", stream)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

var testAt = time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)

func memStore(t *testing.T) *Store {
	t.Helper()
	s, err := open(vfs.NewMem(), "/mem", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// subscribed starts a subscriber on s that reads and drops every event
// until the test ends, and returns once the store counts it.
func subscribed(t *testing.T, s *Store) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Subscribe(ctx, events.Start, func(events.Recorded) error { return nil })
	}()
	t.Cleanup(func() { cancel(); <-done })
	for s.subscribers.Load() == 0 {
		runtime.Gosched()
	}
}

// TestTailOnlyWhileSubscribed: a store nobody subscribes to keeps no
// tail; one with a subscriber keeps the groups written since it came.
func TestTailOnlyWhileSubscribed(t *testing.T) {
	s := memStore(t)
	appendMixed(t, s, 4, 5, "x")
	s.mu.RLock()
	n := len(s.tail.chunks)
	s.mu.RUnlock()
	if n != 0 {
		t.Fatalf("with no subscriber the tail holds %d chunks", n)
	}
	before := s.Head().Commit
	subscribed(t, s)
	appendMixed(t, s, 4, 5, "x")
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.tail.chunks) == 0 || s.tail.chunks[0].first != before+1 {
		t.Fatalf("with a subscriber: %d chunks, want the groups from position %d on", len(s.tail.chunks), before+1)
	}
}

// TestTailReadsWhatTheLogHolds: every read the tail answers equals the
// same read of Pebble's log, for every starting position and page size,
// and the tail answers every read from its first record on.
func TestTailReadsWhatTheLogHolds(t *testing.T) {
	s := memStore(t)
	subscribed(t, s)
	appendMixed(t, s, 8, 20, "x")
	head := s.Head().Commit
	s.mu.RLock()
	chunks := len(s.tail.chunks)
	first := uint64(0)
	if chunks > 0 {
		first = s.tail.chunks[0].first
	}
	s.mu.RUnlock()
	if first != 1 || chunks < 2 {
		t.Fatalf("the tail starts at %d with %d chunks; want all of a small log (from 1) in several groups", first, chunks)
	}
	var refs []tailChunk
	for after := uint64(0); after <= head; after++ {
		for _, limit := range []int{0, 1, 3, 7, subscribePage} {
			var got []events.Recorded
			var ok bool
			var err error
			got, refs, ok, err = s.readTail(nil, refs, after, head, limit)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (after < head) {
				t.Fatalf("after %d (head %d): the tail answered %v", after, head, ok)
			}
			if !ok {
				continue
			}
			want, err := s.readAll(nil, after, head, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 || !reflect.DeepEqual(got, want) {
				t.Fatalf("after %d, limit %d: the tail read %d records, the log %d, or they differ:\n%v\n%v", after, limit, len(got), len(want), got, want)
			}
		}
	}
}

// TestTailIsBoundedAndSubscribersCrossIntoIt: the tail keeps at most
// tailBytes; a read before its first record goes to Pebble; a subscriber
// from the start reads the whole log in order, through Pebble and then the
// tail, while appends go on.
func TestTailIsBoundedAndSubscribersCrossIntoIt(t *testing.T) {
	s := memStore(t)
	subscribed(t, s)
	big := strings.Repeat("y", 400)
	appendMixed(t, s, 16, 200, big) // ~6,400 records of ~500 B: more than the tail holds
	s.mu.RLock()
	if len(s.tail.chunks) == 0 {
		s.mu.RUnlock()
		t.Fatal("a store with a subscriber keeps no tail")
	}
	bytes, first := s.tail.bytes, s.tail.chunks[0].first
	sum := 0
	for _, c := range s.tail.chunks {
		sum += c.b.size()
	}
	s.mu.RUnlock()
	if bytes > tailBytes || bytes != sum || first <= 1 {
		t.Fatalf("the tail holds %d bytes (chunks: %d) from position %d; want at most %d, dropped from the front", bytes, sum, first, tailBytes)
	}
	head := s.Head().Commit
	if _, _, ok, _ := s.readTail(nil, nil, first-2, head, 10); ok {
		t.Fatal("the tail answered a read from before its first record")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var got []events.Recorded
	var final uint64 // set once the appends are done
	caught := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.Subscribe(ctx, events.Start, func(r events.Recorded) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, r)
			if final > 0 && uint64(len(got)) == final {
				close(caught)
			}
			return nil
		})
	}()
	appendMixed(t, s, 4, 50, big)
	mu.Lock()
	final = s.Head().Commit
	if uint64(len(got)) >= final {
		close(caught)
	}
	mu.Unlock()
	select {
	case <-caught:
	case <-time.After(30 * time.Second):
		mu.Lock()
		t.Fatalf("the subscriber read %d of %d records", len(got), final)
	}
	cancel()
	<-done
	want, err := s.ReadAll(context.Background(), events.Start, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got[:final], want) {
		t.Fatal("what the subscriber read differs from the log")
	}
}

// TestTailStaysContiguous: a chunk that does not follow the durable head,
// or a group too large to keep, empties the tail, so it never answers a read
// with a hole in it.
func TestTailStaysContiguous(t *testing.T) {
	chunk := func(first uint64, n int) tailChunk {
		c := tailChunk{first: first, b: &tailBuf{}}
		for i := range n {
			c.add([]byte{byte(i)})
		}
		return c
	}
	var tl tail
	tl.push(chunk(1, 3), 0)
	tl.push(chunk(4, 2), 3)
	if refs, ok := tl.chunksFor(nil, 0, 5, 0); !ok || len(refs) != 2 {
		t.Fatalf("two consecutive chunks: %d answered, %v", len(refs), ok)
	}
	tl.push(chunk(8, 2), 7) // the head moved from 5 to 7 without the tail
	if _, ok := tl.chunksFor(nil, 4, 9, 0); ok {
		t.Fatal("the tail answered across a hole")
	}
	if refs, ok := tl.chunksFor(nil, 7, 9, 0); !ok || len(refs) != 1 || refs[0].first != 8 {
		t.Fatalf("after the hole: %v, %v", refs, ok)
	}
	tl.push(tailChunk{first: 10, skip: true}, 9)
	if _, ok := tl.chunksFor(nil, 7, 12, 0); ok || tl.bytes != 0 {
		t.Fatal("a group too large to keep left the tail as it was")
	}
	big := tailChunk{first: 13, b: &tailBuf{}}
	big.add(make([]byte, tailBytes))
	big.add([]byte{1})
	if !big.skip || big.b != nil {
		t.Fatal("a chunk grew past tailBytes")
	}
}

// TestTailHeldChunkNotReused: a chunk a reader holds keeps its records
// when it is dropped from the tail and later groups are written (only a
// dropped chunk nobody holds goes back to tailBufs).
func TestTailHeldChunkNotReused(t *testing.T) {
	var tl tail
	fill := func(first uint64, b byte) tailChunk {
		c := newTailChunk(first, []*appendReq{{stream: "s", evs: []events.Proposed{{Data: make([]byte, tailBytes/4)}}}})
		rec := make([]byte, tailBytes/4)
		for i := range rec {
			rec[i] = b
		}
		c.add(rec)
		return c
	}
	tl.push(fill(1, 1), 0)
	refs, ok := tl.chunksFor(nil, 0, 1, 0)
	if !ok {
		t.Fatal("the tail did not answer")
	}
	for i := uint64(2); i <= 12; i++ { // the first is dropped after the fourth
		tl.push(fill(i, byte(i)), i-1)
	}
	if tl.chunks[0].first == 1 {
		t.Fatal("the first chunk was not dropped")
	}
	for _, v := range refs[0].record(1) {
		if v != 1 {
			t.Fatalf("a held chunk's record was overwritten by a later group (%d)", v)
		}
	}
	letGo(refs)
}

// TestTailCountsWhatItHolds: large groups between many small ones; the
// memory the tail's buffers hold stays within tailBytes (besides its
// newest chunk), though the pool hands a large group's buffer back.
func TestTailCountsWhatItHolds(t *testing.T) {
	var tl tail
	group := func(first uint64, size int) tailChunk {
		c := newTailChunk(first, []*appendReq{{stream: "s", evs: []events.Proposed{{Data: make([]byte, size)}}}})
		c.add(make([]byte, size))
		return c
	}
	pos := uint64(0)
	held := func() int {
		n := 0
		for _, c := range tl.chunks[:len(tl.chunks)-1] {
			n += cap(c.b.data) + 4*cap(c.b.ends)
		}
		return n
	}
	for range 5 {
		pos++
		tl.push(group(pos, tailBytes/2), pos-1)
		for range 2000 {
			pos++
			tl.push(group(pos, 300), pos-1)
			if n := held(); n > tailBytes {
				t.Fatalf("the tail's buffers hold %d bytes, more than %d", n, tailBytes)
			}
		}
	}
}
