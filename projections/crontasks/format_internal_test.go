package crontasks

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/google/uuid"
)

// TestOlderFormatIsRebuilt: a view written by an older build (an older
// format number) is cleared on open and folded again from the log; a
// newer or foreign marker is refused.
func TestOlderFormatIsRebuilt(t *testing.T) {
	store, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	id := uuid.MustParse("d0000000-0000-4000-8000-0000000000dd")
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	p, _ := events.Propose(events.TaskCreated{TaskID: id, Name: "n", Owner: "o", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Timebox: events.Duration(time.Second), NextRun: at}, uuid.Nil, at)
	if _, err := store.Append(context.Background(), events.TaskStream(id), events.NoStream, p); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "view")
	cfg := Config{Store: store, Dir: dir}
	v, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	v.Close()

	rewrite := func(marker string, extra ...[]byte) {
		t.Helper()
		db, err := pebble.Open(dir, &pebble.Options{Logger: &pebbleLogger{}})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Set(keyFormat, []byte(marker), pebble.Sync); err != nil {
			t.Fatal(err)
		}
		for _, k := range extra {
			if err := db.Set(k, []byte("stale"), pebble.Sync); err != nil {
				t.Fatal(err)
			}
		}
	}
	stale := ownerKey("o", "old-layout", uuid.MustParse("e0000000-0000-4000-8000-0000000000ee"))
	// Format 3 rows have no run policy or run state (format 4); format 4
	// rows no last_run_number, outcome attempt or per-incarnation counts (5).
	for _, marker := range []string{"cronactor-view 1", "cronactor-view 3", "cronactor-view 4"} {
		rewrite(marker, stale)
		v, err = Open(cfg)
		if err != nil {
			t.Fatalf("older format %q: %v", marker, err)
		}
		if !v.Checkpoint().IsZero() {
			t.Errorf("older view %q kept its checkpoint %s", marker, v.Checkpoint())
		}
		if err := v.CatchUp(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		page, err := v.ByOwner(context.Background(), "o", 10, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tasks) != 1 || page.Tasks[0].ID != id || page.Tasks[0].RunState != RunIdle || page.Tasks[0].Queue != "default" {
			t.Errorf("after the rebuild of %q the owner index holds %+v", marker, page.Tasks)
		}
		v.Close()
	}

	for _, marker := range []string{"cronactor-view 6", "cronactor-view x", "something else"} {
		rewrite(marker)
		if _, err := Open(cfg); !errors.Is(err, ErrForeignDB) {
			t.Errorf("marker %q: %v, want ErrForeignDB", marker, err)
		}
	}
}
