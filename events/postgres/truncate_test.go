package postgres_test

import (
	"sync"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/postgres"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
	"github.com/google/uuid"
)

// TestTruncateUnderConcurrentReads: while a stream is removed in many small
// batches, readers of the stream see a contiguous run of versions ending at
// its last event, and readers of the global log, paging, see every event of
// a stream that is not removed, in order, and reach the end of the log: a
// removal is never a gap they skip over, nor a hole they take for the end.
func TestTruncateUnderConcurrentReads(t *testing.T) {
	defer postgres.SetTruncateBatch(37)()
	s := open(t, pgtest.URL(t), fastOptions())
	ctx := ctxFor(t)
	a, b := events.TaskStream(uuid.New()), events.TaskStream(uuid.New())
	const n = 1500
	// Interleaved: a's events lie between b's in the global log.
	for i := range n {
		if _, err := s.Append(ctx, a, expect(i), proposal("a")); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if _, err := s.Append(ctx, b, expect(i/3), proposal("b")); err != nil {
				t.Fatal(err)
			}
		}
	}
	last, err := s.ReadAll(ctx, events.Start, 0)
	if err != nil {
		t.Fatal(err)
	}
	end := last[len(last)-1].Position.Commit
	bs := 0
	for _, r := range last {
		if r.Stream == b {
			bs++
		}
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	for range 2 { // stream readers
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stopped() {
				got, err := s.ReadStream(ctx, a, 0, 0)
				if err != nil {
					t.Errorf("read stream: %v", err)
					return
				}
				for i := 1; i < len(got); i++ {
					if got[i].Version != got[i-1].Version+1 {
						t.Errorf("stream read has a gap: version %d then %d", got[i-1].Version, got[i].Version)
						return
					}
				}
				if len(got) == 0 || got[len(got)-1].Version != n-1 {
					t.Errorf("stream read ends before its last event: %d events", len(got))
					return
				}
			}
		}()
	}
	for range 2 { // global readers, in small pages
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stopped() {
				var at events.Position
				seenB, prev := 0, uint64(0)
				for {
					page, err := s.ReadAll(ctx, at, 25)
					if err != nil {
						t.Errorf("read all: %v", err)
						return
					}
					if len(page) == 0 {
						break
					}
					for _, r := range page {
						if r.Position.Commit <= prev {
							t.Errorf("global read out of order: %d after %d", r.Position.Commit, prev)
							return
						}
						prev = r.Position.Commit
						if r.Stream == b {
							seenB++
						}
					}
					at = page[len(page)-1].Position
				}
				if seenB != bs || prev != end {
					t.Errorf("a global read saw %d of %d events of the untouched stream and ended at %d of %d", seenB, bs, prev, end)
					return
				}
			}
		}()
	}
	for cut := uint64(100); cut < n; cut += 100 {
		if err := s.TruncateBefore(ctx, a, cut); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	got, err := s.ReadStream(ctx, a, 0, 0)
	if err != nil || len(got) != n-1400 || got[0].Version != 1400 {
		t.Fatalf("after the removals: %d events from version %d, %v; want %d from 1400", len(got), got[0].Version, err, n-1400)
	}
}

// expect is the expected version of a stream's i-th append.
func expect(i int) events.ExpectedVersion {
	if i == 0 {
		return events.NoStream
	}
	return events.Exactly(uint64(i - 1))
}
