package crontasks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/cockroachdb/pebble/vfs/errorfs"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/internal/faultfs"
	"github.com/google/uuid"
)

// TestGuardRecoversPebblesPanic: a view directory whose CURRENT file is
// gone makes Pebble's Open panic (it takes the directory for a new
// database, then replays the old logs into a version it has not set up).
// Open refuses such a directory before Pebble sees it (checkUncreated); the
// guard at the boundary of the view's calls into Pebble is what stands
// between any such panic and the process: it becomes an ErrBroken error,
// Damaged, and the view is marked broken.
func TestGuardRecoversPebblesPanic(t *testing.T) {
	store, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	dir := filepath.Join(t.TempDir(), "view")
	v, err := Open(Config{Store: store, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	v.Close()
	if err := os.Remove(filepath.Join(dir, "CURRENT")); err != nil {
		t.Fatal(err)
	}

	g := &View{broken: make(chan struct{})}
	var db *pebble.DB
	err = func() (err error) {
		defer g.guard(&err)()
		db, err = pebble.Open(dir, &pebble.Options{Logger: &pebbleLogger{}})
		return err
	}()
	if db != nil {
		t.Fatal("Pebble opened a directory without CURRENT; this test needs its panic")
	}
	if !errors.Is(err, ErrBroken) || !Damaged(err) || !errors.Is(g.Broken(), ErrBroken) {
		t.Fatalf("guarded open: %v (broken: %v); want an ErrBroken error and the view marked broken", err, g.Broken())
	}
	t.Logf("recovered: %v", err)
}

// failingView opens a view on an in-memory disk whose writes of files
// whose names contain what fail with EIO while fail is set.
func failingView(t *testing.T, what string, fail *atomic.Bool, sync bool) (*View, *history) {
	t.Helper()
	store, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	fs := faultfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op, path string) error {
		if fail.Load() && strings.Contains(path, what) && (op.OpKind() == errorfs.OpKindWrite) {
			return &os.PathError{Op: "write", Path: path, Err: syscall.EIO}
		}
		return nil
	}))
	v, err := Open(Config{Store: store, Dir: "/data/view", FS: fs, Sync: sync})
	if err != nil {
		t.Fatal(err)
	}
	return v, &history{store: store}
}

// history appends TaskCreated events of new tasks.
type history struct {
	store *embedded.Store
	n     int
}

func (h *history) create(t *testing.T, n int) []events.Recorded {
	t.Helper()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for range n {
		h.n++
		id := uuid.NewSHA1(uuid.Nil, []byte(fmt.Sprint(h.n)))
		p, err := events.Propose(events.TaskCreated{TaskID: id, Name: fmt.Sprint(h.n), Owner: "o", Kind: "noop",
			Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Timebox: events.Duration(time.Second), NextRun: at}, uuid.Nil, at)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.store.Append(context.Background(), events.TaskStream(id), events.NoStream, p); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := h.store.ReadAll(context.Background(), events.Start, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestFailedCommitIsNotFolded: a commit whose log write fails makes Pebble
// call Fatalf, which returns, and Pebble's commit then returns nil. The view
// must not take the batch for written: Apply fails with ErrBroken and the
// checkpoint stays where it was.
func TestFailedCommitIsNotFolded(t *testing.T) {
	var fail atomic.Bool
	v, h := failingView(t, ".log", &fail, true)
	defer v.Close()
	if err := v.Apply(h.create(t, 3)); err != nil {
		t.Fatal(err)
	}
	cp := v.Checkpoint()
	fail.Store(true)
	err := v.Apply(h.create(t, 2))
	if !errors.Is(err, ErrBroken) || !Damaged(err) {
		t.Fatalf("Apply on a failing log: %v; want ErrBroken", err)
	}
	if got := v.Checkpoint(); got != cp {
		t.Errorf("checkpoint moved to %s after a failed commit; want %s", got, cp)
	}
	if err := v.WaitFor(context.Background(), h.create(t, 0)[4].Position); !errors.Is(err, ErrBroken) {
		t.Errorf("WaitFor the unwritten event: %v", err)
	}
}

// TestFailedBackgroundFlushIsClosed: Pebble's flush, in its own goroutine,
// fails to write the MANIFEST and calls Fatalf, which returns (it does not
// end the goroutine); the view is marked broken, and its database, given up,
// still closes: Pebble's flush goroutine gave its error back and stopped
// retrying once the database was closing.
func TestFailedBackgroundFlushIsClosed(t *testing.T) {
	var fail atomic.Bool
	v, h := failingView(t, "MANIFEST", &fail, false)
	if err := v.Apply(h.create(t, 3)); err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	if _, err := v.db.AsyncFlush(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-v.broken:
	case <-time.After(30 * time.Second):
		t.Fatal("a failed MANIFEST write did not break the view")
	}
	if err := v.Broken(); !errors.Is(err, ErrBroken) || !strings.Contains(err.Error(), "MANIFEST") {
		t.Fatalf("Broken: %v", err)
	}
	if err := v.Apply(h.create(t, 1)); !errors.Is(err, ErrBroken) {
		t.Errorf("Apply on a broken view: %v", err)
	}
	v.Close()
	select {
	case <-v.dbClosed:
	case <-time.After(30 * time.Second):
		t.Fatal("the failed database was never closed")
	}
}
