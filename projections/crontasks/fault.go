package crontasks

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

// Pebble reports some failures by calling its logger's Fatalf (a write to
// the WAL or the MANIFEST failed, a file the MANIFEST names is gone) and
// some damage by panicking (a view directory without its CURRENT file is
// taken for a new database, and the open dereferences nil; Open refuses
// that one before Pebble sees it, checkUncreated). The default
// logger ends the process, scheduler included, for the sake of derived
// data. The view instead marks itself broken (ErrBroken) and lets Keeper
// move it aside and rebuild it:
//
//   - Fatalf marks the view broken and returns. Where the view's own calls
//     meet it, Pebble v1.1 then returns an error, except a failed commit,
//     which returns nil: apply checks Broken after each commit.
//   - Pebble's background work (flushes, compactions) cannot survive a
//     failed write of its MANIFEST, its CURRENT marker or a sync of its
//     directory: it calls Fatalf and, if that returns, goes on with a
//     version it half applied and panics in its own goroutine, which no
//     recover can reach (and a failed directory sync panics at once). So
//     once the database is open, the file system the view gives Pebble
//     (viewFS) marks the view broken when such a write fails and reports it
//     to Pebble as done: Pebble goes on as if it was written, and the
//     database, broken, is closed and its directory moved aside. A failed
//     write of a log or a table is returned as it is: Pebble handles those
//     (a commit reports it, a flush or compaction is retried).
//   - A panic inside one of the view's own calls into Pebble (Open, apply,
//     queries) is recovered by guard, at that call's boundary, and becomes an
//     error wrapping ErrBroken.
//   - A broken database is closed in the background (abandon): its
//     directory lock is released first, so that a fresh view can take the
//     same path at once.
//
// Nothing here looks at goroutines or at the words of an error: damage is
// told by the errors' types (Damaged, openFailure), failed writes by the
// operation and the file.

// guard turns a panic of Pebble's in the calling goroutine into an error
// and marks the view broken when its call ends with an error that says the
// database is damaged. Use it as
//
//	defer v.guard(&err)()
//
// in a function with a named error result.
func (v *View) guard(errp *error) func() {
	return func() {
		r := recover()
		if r == nil {
			if *errp != nil && Damaged(*errp) {
				// Damage found by a query or a fold: the view stops being
				// used (Run returns, WaitFor answers) and Keeper replaces it.
				v.markBroken(*errp)
			}
			return
		}
		var err error
		if e, ok := r.(error); ok {
			err = fmt.Errorf("%w: pebble panicked: %w", ErrBroken, e)
		} else {
			err = fmt.Errorf("%w: pebble panicked: %v", ErrBroken, r)
		}
		v.markBroken(err)
		*errp = err
	}
}

// markBroken records the first failure that broke the database and wakes
// whoever waits on the view (Run, WaitFor).
func (v *View) markBroken(err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.brokenErr != nil {
		return
	}
	v.brokenErr = err
	close(v.broken)
}

// Broken returns why the view's database failed, or nil. A broken view
// answers every call with that error; Keeper replaces it.
func (v *View) Broken() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.brokenErr
}

// pebbleLogger is the Pebble logger of a view: quiet, except that Fatalf
// breaks the view instead of the process.
type pebbleLogger struct {
	mu sync.Mutex
	v  *View // set once the View exists
	// early is a failure reported before v was set (inside pebble.Open).
	early error
}

func (*pebbleLogger) Infof(string, ...interface{})  {}
func (*pebbleLogger) Errorf(string, ...interface{}) {}

// Fatalf marks the view broken and returns (see the comment at the top of
// this file).
func (l *pebbleLogger) Fatalf(format string, args ...interface{}) {
	err := fmt.Errorf("%w: pebble: %s", ErrBroken, fmt.Sprintf(format, args...))
	l.mu.Lock()
	v := l.v
	if v == nil && l.early == nil {
		l.early = err
	}
	l.mu.Unlock()
	if v != nil {
		v.markBroken(err)
	}
}

func (l *pebbleLogger) attach(v *View) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.v = v
	if l.early != nil {
		v.markBroken(l.early)
	}
	return l.early
}

// errLocked marks a failure to take the view directory's lock: another
// process (or another view of this one) has the view open. Not damage.
var errLocked = errors.New("crontasks: the view's directory is locked")

// viewFS is the file system the view gives Pebble. It keeps the lock of
// the view's directory where the view can release it without the database:
// Pebble also tracks the locks a process holds by path, so the lock of a
// database that failed (and may be slow to close) would otherwise keep a
// fresh view out of the same path; it marks a failed lock with errLocked,
// which Pebble reports without a type of its own. Once the database is
// open, it turns a failed write Pebble cannot survive into a broken view
// (see the comment at the top of this file).
type viewFS struct {
	vfs.FS
	v *View
}

func (f viewFS) Lock(name string) (io.Closer, error) {
	c, err := f.FS.Lock(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errLocked, err)
	}
	l := &onceCloser{c: c}
	f.v.lock = l // during Open, in the opening goroutine
	return l, nil
}

// survives reports whether Pebble handles a failed write of the file
// itself: its logs (a commit fails) and its tables (a flush or compaction
// fails and is retried).
func survives(name string) bool {
	return strings.HasSuffix(name, ".log") || strings.HasSuffix(name, ".sst")
}

// failed decides what a failed write of name tells Pebble: the error as it
// is while the database opens (in the opening goroutine: Open fails) or when
// Pebble survives it; otherwise the view is marked broken and the write is
// reported done (nil).
func (f viewFS) failed(op, name string, err error) error {
	if err == nil || !f.v.dbOpen.Load() || survives(name) {
		return err
	}
	f.v.markBroken(fmt.Errorf("%w: %s %s: %w", ErrBroken, op, name, err))
	return nil
}

func (f viewFS) wrap(file vfs.File, name string) vfs.File {
	if survives(name) {
		return file
	}
	return viewFile{File: file, fs: f, name: name}
}

func (f viewFS) Create(name string) (vfs.File, error) {
	file, err := f.FS.Create(name)
	if err != nil {
		if f.failed("create", name, err) == nil {
			return discardFile{}, nil
		}
		return nil, err
	}
	return f.wrap(file, name), nil
}

func (f viewFS) OpenDir(name string) (vfs.File, error) {
	file, err := f.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return f.wrap(file, name), nil
}

func (f viewFS) Rename(oldname, newname string) error {
	return f.failed("rename", newname, f.FS.Rename(oldname, newname))
}

// viewFile is a file Pebble cannot survive failing to write (see viewFS).
type viewFile struct {
	vfs.File
	fs   viewFS
	name string
}

func (f viewFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	if err = f.fs.failed("write", f.name, err); err == nil {
		n = len(p)
	}
	return n, err
}

func (f viewFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	if err = f.fs.failed("write", f.name, err); err == nil {
		n = len(p)
	}
	return n, err
}

func (f viewFile) Sync() error { return f.fs.failed("sync", f.name, f.File.Sync()) }

func (f viewFile) SyncData() error { return f.fs.failed("sync", f.name, f.File.SyncData()) }

func (f viewFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	return full, f.fs.failed("sync", f.name, err)
}

func (f viewFile) Preallocate(off, length int64) error {
	return f.fs.failed("preallocate", f.name, f.File.Preallocate(off, length))
}

// discardFile stands for a file of a broken database that could not be
// created: writes to it go nowhere.
type discardFile struct{}

func (discardFile) Close() error                           { return nil }
func (discardFile) Read([]byte) (int, error)               { return 0, io.EOF }
func (discardFile) ReadAt([]byte, int64) (int, error)      { return 0, io.EOF }
func (discardFile) Write(p []byte) (int, error)            { return len(p), nil }
func (discardFile) WriteAt(p []byte, _ int64) (int, error) { return len(p), nil }
func (discardFile) Preallocate(int64, int64) error         { return nil }
func (discardFile) Stat() (os.FileInfo, error)             { return nil, errDiscarded }
func (discardFile) Sync() error                            { return nil }
func (discardFile) SyncTo(int64) (bool, error)             { return true, nil }
func (discardFile) SyncData() error                        { return nil }
func (discardFile) Prefetch(int64, int64) error            { return nil }
func (discardFile) Fd() uintptr                            { return vfs.InvalidFd }

// errDiscarded answers a Stat of a discardFile.
var errDiscarded = errors.New("crontasks: a file of a broken view that could not be created")

// onceCloser closes c once; later calls do nothing.
type onceCloser struct {
	once sync.Once
	c    io.Closer
	err  error
}

func (o *onceCloser) Close() error {
	o.once.Do(func() { o.err = o.c.Close() })
	return o.err
}

// Damaged reports whether err says the view's files are damaged or its
// database instance failed: the view cannot be trusted and must be moved
// aside and rebuilt from the log (Keeper does it). Damage is told by type
// only: ErrCorrupt (a row, index entry or checkpoint that does not decode,
// or a database Open could not open; see openFailure), ErrBroken (Pebble
// gave up or panicked), an error Pebble marks as corruption
// (pebble.IsCorruptionError: a checksum mismatch, a malformed MANIFEST,
// CURRENT or OPTIONS file) and a file the database needs that is gone
// (fs.ErrNotExist). A transient error (the log could not be read, a
// context ended, a read or a write failed but the files are sound) is not
// damage; neither is a view of another log (ErrAheadOfLog) or a directory
// that is not a view (ErrForeignDB), which an operator decides about.
func Damaged(err error) bool {
	if err == nil || errors.Is(err, ErrAheadOfLog) || errors.Is(err, ErrForeignDB) {
		return false
	}
	if errors.Is(err, errReadLog) {
		return false // the log's trouble, not the view's
	}
	return errors.Is(err, ErrCorrupt) || errors.Is(err, ErrBroken) || pebble.IsCorruptionError(err) || errors.Is(err, fs.ErrNotExist)
}

// openFailure classifies an error of pebble.Open on a directory that holds a
// database. Pebble v1.1 reports some damage found at open without a type:
// a table whose size is not the one its MANIFEST records or that is not
// there (its consistency check flattens the cause into text), a CURRENT
// file that is empty. So at open, and only there, a failure is damage
// unless its type says it is a condition of the machine, not of the files:
// the directory locked (errLocked), permission denied, or another error of
// the operating system (an errno: EIO, ENOSPC, EROFS, EMFILE…) other than a
// missing file. Those need an operator or a retry; moving the view aside
// would not help.
func openFailure(err error) error {
	if err == nil || Damaged(err) {
		return err
	}
	if errors.Is(err, errLocked) || errors.Is(err, fs.ErrPermission) {
		return err
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, err)
}
