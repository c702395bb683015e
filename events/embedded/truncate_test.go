package embedded_test

import (
	"context"
	"sync"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/google/uuid"
)

// TestTruncateRemovesFromTheGlobalLog: the embedded store removes a
// truncated stream's records from the global log as well (decision 0023),
// the removal survives a reopen, and the head and other streams stay.
func TestTruncateRemovesFromTheGlobalLog(t *testing.T) {
	dir := t.TempDir()
	s, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, b := events.TaskStream(uuid.New()), events.TaskStream(uuid.New())
	for i := 0; i < 20; i++ {
		appendOne(t, s, a)
		if i%4 == 0 {
			appendOne(t, s, b)
		}
	}
	head := s.Head()
	if err := s.TruncateBefore(context.Background(), a, 15); err != nil {
		t.Fatal(err)
	}
	check := func(s *embedded.Store) {
		t.Helper()
		all, err := s.ReadAll(context.Background(), events.Start, 0)
		if err != nil {
			t.Fatal(err)
		}
		na, nb := 0, 0
		for _, r := range all {
			switch {
			case r.Stream == a && r.Version < 15:
				t.Fatalf("the global log still holds %s version %d", a, r.Version)
			case r.Stream == a:
				na++
			case r.Stream == b:
				nb++
			}
		}
		if na != 5 || nb != 5 || s.Head() != head {
			t.Fatalf("global log: %d of a, %d of b, head %s (want 5, 5, %s)", na, nb, s.Head(), head)
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check(s)
	if got, err := s.ReadStream(context.Background(), a, 0, 0); err != nil || len(got) != 5 || got[0].Version != 15 {
		t.Fatalf("after reopen: %d events, %v", len(got), err)
	}
}

// TestTruncateUnderConcurrentReads: a read of a stream that a truncation
// shortens meanwhile never reports the removed records as corruption; it
// sees each event either whole or not at all, in order.
func TestTruncateUnderConcurrentReads(t *testing.T) {
	s, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := events.TaskStream(uuid.New())
	const n = 3000
	for i := 0; i < n; i++ {
		appendOne(t, s, a)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := s.ReadStream(context.Background(), a, 0, 0)
				if err != nil {
					errs <- err
					return
				}
				for i := 1; i < len(got); i++ {
					if got[i].Version != got[i-1].Version+1 {
						t.Errorf("read a gap: version %d then %d", got[i-1].Version, got[i].Version)
						return
					}
				}
			}
		}()
	}
	for cut := uint64(100); cut < n; cut += 100 {
		if err := s.TruncateBefore(context.Background(), a, cut); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a read during truncation: %v", err)
	}
}
