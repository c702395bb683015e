package postgres_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
)

// The snapshot table: writes are all or none, the last value of a key wins,
// reads come in key order (across pages), it survives a reopen, and Clear
// empties it.
func TestSnapshotTable(t *testing.T) {
	url := pgtest.URL(t)
	s := open(t, url, fastOptions())
	ctx := ctxFor(t)
	var entries []events.SnapshotEntry
	for i := 2499; i >= 0; i-- { // more than one read page, written out of order
		entries = append(entries, events.SnapshotEntry{Key: []byte(fmt.Sprintf("k%05d", i)), Value: []byte(fmt.Sprint(i))})
	}
	if err := s.WriteSnapshot(ctx, entries); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteSnapshot(ctx, []events.SnapshotEntry{{Key: []byte("k00007"), Value: []byte("old")}, {Key: []byte("k00007"), Value: []byte("new")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteSnapshot(ctx, []events.SnapshotEntry{{Key: []byte("k00001"), Value: []byte("x")}, {Key: nil, Value: []byte("bad")}}); err == nil {
		t.Fatal("an empty key was written")
	}
	if err := s.FlushSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = open(t, url, fastOptions())
	var keys []string
	vals := map[string]string{}
	if err := s.ReadSnapshot(ctx, func(k, v []byte) error {
		keys = append(keys, string(k))
		vals[string(k)] = string(v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2500 {
		t.Fatalf("read %d entries, want 2500", len(keys))
	}
	for i, k := range keys {
		if want := fmt.Sprintf("k%05d", i); k != want {
			t.Fatalf("entry %d is %s, want %s (key order)", i, k, want)
		}
	}
	if vals["k00007"] != "new" || vals["k00001"] != "1" {
		t.Fatalf("k00007=%q k00001=%q, want new and 1 (last write wins; a refused write changes nothing)", vals["k00007"], vals["k00001"])
	}
	stop := errors.New("stop")
	n := 0
	if err := s.ReadSnapshot(ctx, func(k, v []byte) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("fn's error: %v after %d entries, want stop after 1", err, n)
	}
	if err := s.ClearSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	n = 0
	if err := s.ReadSnapshot(ctx, func(k, v []byte) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("after clear: %d entries, %v", n, err)
	}
}
