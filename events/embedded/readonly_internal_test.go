package embedded

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cockroachdb/pebble/vfs/errorfs"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/faultfs"
)

// diskFault fails every write (file creation, write, sync, rename, removal;
// not a close) with errno while on is set, as a file system does once the
// kernel remounted it read-only (EROFS) or the disk failed (EIO).
type diskFault struct {
	on    atomic.Bool
	errno syscall.Errno
}

func (f *diskFault) MaybeError(op errorfs.Op, path string) error {
	if f.on.Load() && op.OpKind() == errorfs.OpKindWrite && op != errorfs.OpFileClose {
		return &os.PathError{Op: "write", Path: path, Err: f.errno}
	}
	return nil
}

// watchedLog is a log buffer that closes a channel when a line with a
// given text is written, so a test can wait for it without sleeping.
type watchedLog struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	texts map[string]chan struct{} // set up by newWatchedLog, then read only
	seen  map[string]bool
}

func newWatchedLog(texts ...string) *watchedLog {
	w := &watchedLog{texts: map[string]chan struct{}{}, seen: map[string]bool{}}
	for _, t := range texts {
		w.texts[t] = make(chan struct{})
	}
	return w
}

// written is closed once a line with text (given to newWatchedLog) is
// written.
func (w *watchedLog) written(text string) <-chan struct{} { return w.texts[text] }

func (w *watchedLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for t, ch := range w.texts {
		if !w.seen[t] && bytes.Contains(p, []byte(t)) {
			close(ch)
			w.seen[t] = true
		}
	}
	return w.buf.Write(p)
}

func (w *watchedLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// lines counts the log lines holding every one of texts.
func (w *watchedLog) lines(texts ...string) int {
	n := 0
	for _, l := range strings.Split(w.String(), "\n") {
		all := l != ""
		for _, t := range texts {
			all = all && strings.Contains(l, t)
		}
		if all {
			n++
		}
	}
	return n
}

// TestReadOnlyRefusesAppendsAndRecovers: when the data directory turns
// read-only, appends fail with events.ErrReadOnly (EROFS in the chain),
// reads go on, WriteStatus says so with the count of refused appends, the
// log has one line on entering however many appends are refused; once the
// file system is writable again, polling WriteStatus alone (nothing
// appends) reopens the database, and the log says so once with the count.
// On Pebble's in-memory file system and on the real one (real files,
// reopened after the failed write of the log).
func TestReadOnlyRefusesAppendsAndRecovers(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testReadOnly(t, vfs.NewMem(), "/data", 10) })
	t.Run("disk", func(t *testing.T) { testReadOnly(t, vfs.Default, filepath.Join(t.TempDir(), "data"), 10) })
	// Past Pebble's first memtable rotation, the log is a reused file
	// (faultfs fails it too).
	t.Run("reused log", func(t *testing.T) { testReadOnly(t, vfs.NewMem(), "/data", 3000) })
}

func testReadOnly(t *testing.T, base vfs.FS, dir string, before int) {
	fault := &diskFault{errno: syscall.EROFS}
	logs := newWatchedLog("writable again: appends resume")
	s, err := open(faultfs.Wrap(base, fault), dir, Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := appendN(s, "task-a", before); err != nil {
		t.Fatal(err)
	}
	if st := s.WriteStatus(); st.Err != nil {
		t.Fatalf("status of a writable store: %+v", st)
	}
	fault.on.Store(true)
	const refused = 7
	for i := range refused {
		err := appendN(s, "task-a", 1)
		if !errors.Is(err, events.ErrReadOnly) || !errors.Is(err, events.ErrUnwritable) || !errors.Is(err, syscall.EROFS) {
			t.Fatalf("append %d on a read-only file system: %v, want events.ErrReadOnly", i, err)
		}
		if errors.Is(err, events.ErrNoSpace) || errors.Is(err, events.ErrWriteFailed) {
			t.Fatalf("append %d: %v matches another condition", i, err)
		}
	}
	if got, err := s.ReadStream(context.Background(), "task-a", 0, 0); err != nil || len(got) != before {
		t.Fatalf("read on a read-only file system: %d events, %v", len(got), err)
	}
	st := s.WriteStatus()
	if !errors.Is(st.Err, events.ErrReadOnly) || st.Condition() != "read_only" || st.Refused != refused || st.RestartNeeded {
		t.Fatalf("status while read-only: %+v (condition %q), want read_only, %d refused, no restart", st, st.Condition(), refused)
	}
	// The snapshot table is on the same file system: its writes are
	// refused at once too (a flush there would wait for good, and a stop's
	// last sweep with it).
	snapErr := make(chan error, 1)
	go func() {
		err := s.WriteSnapshot(context.Background(), []events.SnapshotEntry{{Key: []byte("k"), Value: []byte("v")}})
		if err == nil {
			err = s.FlushSnapshot(context.Background())
		}
		snapErr <- err
	}()
	select {
	case err := <-snapErr:
		if !errors.Is(err, events.ErrReadOnly) {
			t.Fatalf("snapshot write on a read-only file system: %v, want events.ErrReadOnly", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a snapshot write on a read-only file system did not return")
	}
	if n := logs.lines("level=ERROR"); n != 1 {
		t.Fatalf("%d ERROR lines for %d refused appends, want 1:\n%s", n, refused, logs)
	}
	if n := logs.lines("level=ERROR", "read-only", "condition=read_only", "dir="+dir); n != 1 {
		t.Fatalf("the ERROR line does not name the condition and the directory:\n%s", logs)
	}

	fault.on.Store(false)
	s.WriteStatus() // asks the committer to check
	select {
	case <-logs.written("writable again: appends resume"):
	case <-time.After(10 * time.Second):
		t.Fatalf("no recovery while WriteStatus is polled:\n%s", logs)
	}
	if st := s.WriteStatus(); st.Err != nil {
		t.Fatalf("status after recovery: %+v", st)
	}
	if n := logs.lines("level=INFO", "writable again", "refused_appends=7"); n != 1 {
		t.Fatalf("no INFO line with the count of refused appends:\n%s", logs)
	}
	if err := appendN(s, "task-a", 5); err != nil {
		t.Fatalf("append once writable again: %v", err)
	}
	got, err := s.ReadStream(context.Background(), "task-a", 0, 0)
	if err != nil || len(got) != before+5 {
		t.Fatalf("after recovery: %d events, %v", len(got), err)
	}
	for i, r := range got {
		if r.Version != uint64(i) {
			t.Fatalf("event %d has version %d", i, r.Version)
		}
	}
	if _, err := s.fs.Stat(s.fs.PathJoin(dir, probeFile)); err == nil {
		t.Errorf("the probe file was left behind")
	}
}

// TestIOErrorNeedsRestart: a write that fails with EIO (a failing disk)
// refuses appends with events.ErrWriteFailed until the process restarts:
// the store does not build on a log whose last sync failed, even once
// writes succeed again, and it says that a restart is needed, once.
func TestIOErrorNeedsRestart(t *testing.T) {
	fault := &diskFault{errno: syscall.EIO}
	logs := newWatchedLog()
	s, err := open(faultfs.Wrap(vfs.NewMem(), fault), "/data", Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := appendN(s, "task-a", 3); err != nil {
		t.Fatal(err)
	}
	fault.on.Store(true)
	for range 4 {
		if err := appendN(s, "task-a", 1); !errors.Is(err, events.ErrWriteFailed) || !errors.Is(err, syscall.EIO) {
			t.Fatalf("append on a failing disk: %v, want events.ErrWriteFailed", err)
		}
	}
	fault.on.Store(false)
	if err := appendN(s, "task-a", 1); !errors.Is(err, events.ErrWriteFailed) {
		t.Fatalf("append once writes work again: %v, want events.ErrWriteFailed until a restart", err)
	}
	st := s.WriteStatus()
	if st.Condition() != "write_failed" || !st.RestartNeeded || st.Refused != 5 {
		t.Fatalf("status: %+v (condition %q), want write_failed, restart needed, 5 refused", st, st.Condition())
	}
	if n := logs.lines("level=ERROR", "restart needed", "restart_needed=true"); n != 1 || logs.lines("level=ERROR") != 1 {
		t.Fatalf("want one ERROR line saying a restart is needed:\n%s", logs)
	}
}
