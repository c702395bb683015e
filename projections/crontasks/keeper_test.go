package crontasks_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cockroachdb/pebble/vfs/errorfs"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/faultfs"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// keep runs k in the background until the test ends.
func keep(t *testing.T, k *crontasks.Keeper) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Keeper.Run: %v", err)
		}
		k.Close()
	})
}

// waitReady waits (at most 30 s) for the kept view to be ready and to have
// folded the log's head.
func waitReady(t *testing.T, k *crontasks.Keeper, head events.Position) *crontasks.View {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		changed := k.Changed()
		v, err := k.View()
		if err == nil {
			if err = v.WaitFor(ctx, head); err == nil {
				return v
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("view not ready: %+v (%v)", k.Status(), err)
		}
	}
}

// waitState waits (at most 30 s) for the Keeper to reach a state other
// than those named.
func waitNot(t *testing.T, k *crontasks.Keeper, states ...string) crontasks.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		changed := k.Changed()
		st := k.Status()
		if !slices.Contains(states, st.State) {
			return st
		}
		select {
		case <-changed:
		case <-ctx.Done():
			// Read again: the position moves without a change of state.
			st = k.Status()
			t.Fatalf("still %s: %+v", st.State, st)
		}
	}
}

// flipBytes damages 64 bytes of the file in the middle.
func flipBytes(t *testing.T, path string) { t.Helper(); flipBytesAt(t, path, -1) }

// flipBytesAt damages 64 bytes of the file from off (-1: the middle).
func flipBytesAt(t *testing.T, path string, off int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off = len(b) / 2
	}
	for i := off; i < min(off+64, len(b)); i++ {
		b[i] ^= 0xA5
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestKeeperReplacesDamagedView: a view whose files are damaged (an
// sstable, the MANIFEST, a file the MANIFEST names gone) makes Open fail;
// OpenKeeper moves it aside untouched, starts afresh, answers
// UnavailableError while rebuilding, and ends equal to the log's fold.
func TestKeeperReplacesDamagedView(t *testing.T) {
	damages := map[string]func(t *testing.T, dir string){
		"sstable": func(t *testing.T, dir string) {
			ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			if len(ssts) == 0 {
				t.Fatal("no sstable to damage")
			}
			for _, p := range ssts {
				flipBytes(t, p)
			}
		},
		"manifest": func(t *testing.T, dir string) {
			// The first record: damage in the last one reads as a torn
			// write and is tolerated.
			ms, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
			for _, p := range ms {
				flipBytesAt(t, p, 20)
			}
		},
		"missing sstable": func(t *testing.T, dir string) {
			ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			for _, p := range ssts {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
		},
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			store := memStore(t)
			h := newHistory(t, store, 21, 12)
			h.run(400)
			dir := filepath.Join(t.TempDir(), "view")
			cfg := crontasks.Config{Store: store, Dir: dir}
			v := openView(t, cfg)
			if err := v.CatchUp(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			v.Close()
			damage(t, dir)
			before := snapshotDir(t, dir)

			if v, err := crontasks.Open(cfg); !crontasks.Damaged(err) {
				if err == nil {
					v.Close()
				}
				t.Fatalf("Open of a damaged view: %v; want an error Damaged reports", err)
			}
			k, err := crontasks.OpenKeeper(cfg)
			if err != nil {
				t.Fatalf("OpenKeeper: %v", err)
			}
			st := k.Status()
			if st.State != crontasks.StateRebuilding || !strings.HasPrefix(st.MovedAside, dir+".damaged-") {
				t.Fatalf("status after opening a damaged view: %+v", st)
			}
			// Its tables and manifest are kept as they were (Pebble may have
			// replayed its WAL into new files when it was opened).
			got := snapshotDir(t, st.MovedAside)
			for name, b := range before {
				if (strings.HasSuffix(name, ".sst") || strings.HasPrefix(name, "MANIFEST-")) && !bytes.Equal(got[name], b) {
					t.Errorf("%s of the damaged view was changed or removed when it was moved aside", name)
				}
			}
			_, err = k.View()
			var ue *crontasks.UnavailableError
			if !errors.As(err, &ue) || !errors.Is(err, crontasks.ErrUnavailable) ||
				!strings.Contains(err.Error(), "the cron_tasks view is rebuilding: 0% (position 0 of ") {
				t.Fatalf("View while rebuilding: %v", err)
			}
			keep(t, k)
			v = waitReady(t, k, store.Head())
			sameRows(t, "rebuilt after damage", dump(t, v), replay(t, readAll(t, store)))
			if st := k.Status(); st.State != crontasks.StateReady || st.Progress != 1 || st.Rebuilds != 1 {
				t.Errorf("status after the rebuild: %+v", st)
			}
		})
	}
}

func snapshotDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "LOCK" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// TestKeeperRefusesWhatIsNotDamage: a view ahead of its log is refused as
// by Open, not moved aside, and left as found.
func TestKeeperRefusesWhatIsNotDamage(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 22, 3)
	h.run(50)
	dir := filepath.Join(t.TempDir(), "view")
	v := openView(t, crontasks.Config{Store: store, Dir: dir})
	if err := v.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	v.Close()
	before := snapshotDir(t, dir)
	if _, err := crontasks.OpenKeeper(crontasks.Config{Store: memStore(t), Dir: dir}); !errors.Is(err, crontasks.ErrAheadOfLog) {
		t.Errorf("OpenKeeper of a view ahead of its log: %v", err)
	}
	after := snapshotDir(t, dir)
	if len(after) != len(before) {
		t.Errorf("the refused view's files changed: %d files, then %d", len(before), len(after))
	}
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Errorf("the refused view's %s changed", name)
		}
	}
	if m, _ := filepath.Glob(dir + ".damaged-*"); len(m) > 0 {
		t.Errorf("a view ahead of the log was moved aside: %v", m)
	}
}

// TestKeeperSurvivesFailingWrites: the view's disk starts failing every
// write while the view follows a log that keeps growing. Pebble gives up on
// the view (a failed WAL write is fatal to it); the process does not die,
// the Keeper says the view is unavailable while the fault lasts, and once
// writes succeed again it rebuilds a fresh view equal to the log's fold.
func TestKeeperSurvivesFailingWrites(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 23, 20)
	h.run(200)
	var failing atomic.Bool
	// faultfs, not errorfs alone: once Pebble reuses an old WAL file as its
	// new WAL, errorfs no longer sees the WAL's writes.
	fs := faultfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op, path string) error {
		if failing.Load() && op.OpKind() == errorfs.OpKindWrite {
			return &os.PathError{Op: "write", Path: path, Err: syscall.EIO}
		}
		return nil
	}))
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg := crontasks.Config{Store: store, Dir: "/data/view", FS: fs, Sync: true, Coalesce: -1, BatchSize: 8,
		Archetype: archetype.Archetype{Clock: clk}}
	k, err := crontasks.OpenKeeper(cfg)
	if err != nil {
		t.Fatal(err)
	}
	keep(t, k)
	first := waitReady(t, k, store.Head())

	failing.Store(true)
	h.run(50) // the log goes on; the view cannot write what it folds
	st := waitNot(t, k, crontasks.StateReady, crontasks.StateRebuilding)
	t.Logf("with a failing disk: %+v", st)
	if _, err := k.View(); !errors.Is(err, crontasks.ErrUnavailable) {
		t.Errorf("View with a failing disk: %v", err)
	}
	// The failed database is closed, not left with Pebble's goroutines
	// running (in the background, while the disk still fails).
	select {
	case <-first.DBClosed():
	case <-time.After(30 * time.Second):
		t.Fatal("the failed database was never closed")
	}
	failing.Store(false)
	h.run(50)
	// The retry pause is on the virtual clock.
	clk.Step(clk.Now().Add(time.Hour))
	v := waitReady(t, k, store.Head())
	sameRows(t, "rebuilt after the disk healed", dump(t, v), replay(t, readAll(t, store)))
	st = k.Status()
	if st.Rebuilds < 1 || !strings.HasPrefix(st.MovedAside, "/data/view.damaged-") {
		t.Errorf("status: %+v", st)
	}
}

// TestKeeperReplacesViewFoundDamagedByQuery: the tables of a running view
// are damaged under it; the query that reads the damage fails with an error
// Damaged reports (not a panic), and the Keeper replaces the view and
// rebuilds it while following the log.
func TestKeeperReplacesViewFoundDamagedByQuery(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 24, 300)
	h.run(3000)
	dir := filepath.Join(t.TempDir(), "view")
	cfg := crontasks.Config{Store: store, Dir: dir}
	v := openView(t, cfg)
	if err := v.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	v.Close() // the next open flushes what its WAL holds into tables
	k, err := crontasks.OpenKeeper(cfg)
	if err != nil {
		t.Fatal(err)
	}
	keep(t, k)
	v = waitReady(t, k, store.Head())
	// Damage every data block of every table, rewritten in place (the open
	// files see it). Pebble may compact meanwhile and replace tables: then
	// the query reads undamaged ones, and the new tables are damaged too.
	damaged := map[string]bool{}
	for attempt := 0; ; attempt++ {
		ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
		for _, p := range ssts {
			if damaged[p] {
				continue // a second flip would undo the first
			}
			b, err := os.ReadFile(p)
			if err != nil {
				continue // compacted away
			}
			for off := 100; off+64 < len(b)/2; off += 1024 {
				for i := off; i < off+64; i++ {
					b[i] ^= 0xA5
				}
			}
			f, err := os.OpenFile(p, os.O_WRONLY, 0)
			if err != nil {
				continue
			}
			_, err = f.WriteAt(b, 0)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			damaged[p] = true
		}
		_, err = v.Query(context.Background(), crontasks.Query{Limit: crontasks.MaxLimit})
		if crontasks.Damaged(err) {
			break
		}
		if err != nil || attempt == 10 {
			t.Fatalf("query of a damaged view (attempt %d): %v", attempt, err)
		}
	}
	h.run(200) // the log goes on meanwhile
	st := waitNot(t, k, crontasks.StateReady)
	if st.State != crontasks.StateRebuilding && st.State != crontasks.StateUnavailable {
		t.Fatalf("after the damage: %+v", st)
	}
	v = waitReady(t, k, store.Head())
	sameRows(t, "rebuilt after a query found damage", dump(t, v), replay(t, readAll(t, store)))
	if st := k.Status(); st.Rebuilds != 1 || !strings.HasPrefix(st.MovedAside, dir+".damaged-") {
		t.Errorf("status: %+v", st)
	}
}

// TestKeeperStallsOnUnreadableEvent: an event this build cannot fold is not
// damage. A ready view stalls at the event before it, goes on answering
// queries, and is not moved aside; Run goes on (retrying). A rebuild that
// meets it stays a rebuild (a half-built view is not served) and says why.
func TestKeeperStallsOnUnreadableEvent(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 25, 3)
	h.run(30)
	before := readAll(t, store)
	cfg := crontasks.Config{Store: store, Dir: filepath.Join(t.TempDir(), "view")}
	k, err := crontasks.OpenKeeper(cfg)
	if err != nil {
		t.Fatal(err)
	}
	keep(t, k)
	waitReady(t, k, store.Head())
	if _, err := store.Append(context.Background(), events.TaskStream(h.tasks[0].id), events.AnyVersion,
		events.Proposed{Type: "TaskRenamed", Schema: 1, At: h.now, Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	st := waitNot(t, k, crontasks.StateReady)
	if st.State != crontasks.StateStalled || !strings.Contains(st.Err, "TaskRenamed") || st.MovedAside != "" || st.Rebuilds != 0 {
		t.Fatalf("status: %+v", st)
	}
	v, err := k.View()
	if err != nil {
		t.Fatalf("View of a stalled view: %v", err)
	}
	if v.Checkpoint() != before[len(before)-1].Position {
		t.Errorf("stalled at %s, want %s", v.Checkpoint(), before[len(before)-1].Position)
	}
	sameRows(t, "stalled view", dump(t, v), replay(t, before))
}

func TestKeeperRebuildMeetsUnreadableEvent(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 26, 3)
	h.run(30)
	if _, err := store.Append(context.Background(), events.TaskStream(h.tasks[0].id), events.AnyVersion,
		events.Proposed{Type: "TaskRenamed", Schema: 1, At: h.now, Data: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	k, err := crontasks.OpenKeeper(crontasks.Config{Store: store, Dir: filepath.Join(t.TempDir(), "view")})
	if err != nil {
		t.Fatal(err)
	}
	keep(t, k)
	st := waitKeeperReason(t, k)
	if st.State != crontasks.StateRebuilding || !strings.Contains(st.Err, "TaskRenamed") || strings.Contains(st.Message(), "TaskRenamed") {
		t.Fatalf("status: %+v (%s)", st, st.Message())
	}
	if _, err := k.View(); !errors.Is(err, crontasks.ErrUnavailable) || !strings.Contains(err.Error(), "held up by an error; retrying") {
		t.Errorf("View of a rebuild that cannot go on: %v", err)
	}
}

// waitKeeperReason waits for a status whose reason says the rebuild
// stopped.
func waitKeeperReason(t *testing.T, k *crontasks.Keeper) crontasks.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		changed := k.Changed()
		if st := k.Status(); strings.Contains(st.Err, "fold") {
			return st
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("no reason given: %+v", k.Status())
		}
	}
}
