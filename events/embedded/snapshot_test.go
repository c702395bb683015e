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

// A point read of the snapshot table finds the latest write of a key, with
// or without a flush, reports a key never written as absent, and hands back
// a copy the caller may keep.
func TestReadSnapshotKey(t *testing.T) {
	ctx := context.Background()
	s, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, found, err := s.ReadSnapshotKey(ctx, []byte("k1")); err != nil || found {
		t.Fatalf("an empty table: found %v, err %v", found, err)
	}
	if err := s.WriteSnapshot(ctx, []events.SnapshotEntry{{Key: []byte("k1"), Value: []byte("old")}, {Key: []byte("k2"), Value: []byte("two")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.FlushSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteSnapshot(ctx, []events.SnapshotEntry{{Key: []byte("k1"), Value: []byte("new")}}); err != nil {
		t.Fatal(err)
	}
	v, found, err := s.ReadSnapshotKey(ctx, []byte("k1"))
	if err != nil || !found || string(v) != "new" {
		t.Fatalf("k1: %q, found %v, err %v; want \"new\"", v, found, err)
	}
	v2, _, _ := s.ReadSnapshotKey(ctx, []byte("k2"))
	v[0] = 'X' // the caller's copy
	if again, _, _ := s.ReadSnapshotKey(ctx, []byte("k1")); string(again) != "new" || string(v2) != "two" {
		t.Fatalf("after writing to the copy: k1 %q, k2 %q", again, v2)
	}
	if _, found, err := s.ReadSnapshotKey(ctx, []byte("k3")); err != nil || found {
		t.Fatalf("a key never written: found %v, err %v", found, err)
	}
	if err := s.ClearSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if _, found, err := s.ReadSnapshotKey(ctx, []byte("k1")); err != nil || found {
		t.Fatalf("after a clear: found %v, err %v", found, err)
	}
	s.Close()
	if _, _, err := s.ReadSnapshotKey(ctx, []byte("k1")); !errors.Is(err, events.ErrClosed) {
		t.Fatalf("a closed store: err %v, want ErrClosed", err)
	}
}
