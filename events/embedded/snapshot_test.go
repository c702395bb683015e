package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
)

func readSnapshot(t *testing.T, s *embedded.Store) map[string]string {
	t.Helper()
	got := map[string]string{}
	if err := s.ReadSnapshot(context.Background(), func(k, v []byte) error {
		got[string(k)] = string(v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// The snapshot table keeps what was written and flushed across a reopen,
// later writes win, a clear empties it for good, and a closed store
// refuses it.
func TestSnapshotTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var batch []events.SnapshotEntry
	for i := range 1000 {
		batch = append(batch, events.SnapshotEntry{Key: fmt.Appendf(nil, "k%04d", i), Value: fmt.Appendf(nil, "v%d", i)})
	}
	if err := s.WriteSnapshot(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteSnapshot(ctx, []events.SnapshotEntry{{Key: []byte("k0007"), Value: []byte("newer")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.FlushSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteSnapshot(ctx, []events.SnapshotEntry{{}}); err == nil {
		t.Fatal("an empty key was written")
	}
	stop := errors.New("stop")
	n := 0
	if err := s.ReadSnapshot(ctx, func(k, v []byte) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	}); !errors.Is(err, stop) || n != 3 {
		t.Fatalf("a read fn's error: got %v after %d entries", err, n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteSnapshot(ctx, batch); !errors.Is(err, events.ErrClosed) {
		t.Fatalf("write after Close: %v", err)
	}

	s, err = embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := readSnapshot(t, s)
	if len(got) != 1000 || got["k0007"] != "newer" || got["k0999"] != "v999" {
		t.Fatalf("after a reopen: %d entries, k0007=%q k0999=%q", len(got), got["k0007"], got["k0999"])
	}
	if err := s.ClearSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if got := readSnapshot(t, s); len(got) != 0 {
		t.Fatalf("after a clear: %d entries", len(got))
	}
	if err := s.WriteSnapshot(ctx, []events.SnapshotEntry{{Key: []byte("after"), Value: []byte("clear")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.FlushSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := readSnapshot(t, s); len(got) != 1 || got["after"] != "clear" {
		t.Fatalf("a clear did not last: %v", got)
	}
}
