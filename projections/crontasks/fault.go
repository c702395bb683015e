package crontasks

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"

	"github.com/cockroachdb/pebble/vfs"
)

// Pebble reports some failures by calling its logger's Fatalf (a write to
// the WAL or the MANIFEST failed, corruption found while compacting) or by
// panicking in the goroutine that committed a batch. Either would end the
// whole process, scheduler included, for the sake of derived data. The
// view instead marks itself broken (ErrBroken) and lets Keeper move it
// aside and rebuild it:
//
//   - in a goroutine of the view's own calls (apply, queries, Open), the
//     failure becomes an error return (shield);
//   - in one of Pebble's background goroutines, which nothing can recover,
//     that goroutine alone ends (runtime.Goexit, running its deferred
//     unlocks); the broken database is then abandoned, never used again.

// shielded holds the IDs of the goroutines inside a shielded call, so that
// Fatalf knows whether a panic there is recovered.
var shielded sync.Map // goroutine ID → *int (depth)

// fatalError is what Fatalf panics with in a shielded goroutine.
type fatalError struct{ err error }

// goid is the current goroutine's ID, read from its stack header
// ("goroutine 123 [running]:").
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}

// shield marks the calling goroutine as one whose Pebble failures are
// returned as errors. Use it as
//
//	defer v.shield(&err)()
//
// in a function with a named error result: a panic from Pebble (or from
// Fatalf) inside it becomes an error wrapping ErrBroken, and the view is
// marked broken.
func (v *View) shield(errp *error) func() {
	id := goid()
	d, _ := shielded.LoadOrStore(id, new(int))
	depth := d.(*int)
	*depth++ // only this goroutine touches its own counter
	return func() {
		if *depth--; *depth == 0 {
			shielded.Delete(id)
		}
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
		switch r := r.(type) {
		case fatalError:
			err = r.err
		case error:
			err = fmt.Errorf("%w: %w", ErrBroken, r)
		default:
			err = fmt.Errorf("%w: %v", ErrBroken, r)
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
	if _, ok := shielded.Load(goid()); ok {
		panic(fatalError{err})
	}
	// A background goroutine of Pebble's: end it alone. The database is
	// broken and will not be used again.
	runtime.Goexit()
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

// lockFS keeps the lock of the view's directory where the view can release
// it without the database: Pebble also tracks the locks a process holds by
// path, so the lock of a database that failed (and may never close) would
// otherwise keep a fresh view out of the same path.
type lockFS struct {
	vfs.FS
	v *View
}

func (f lockFS) Lock(name string) (io.Closer, error) {
	c, err := f.FS.Lock(name)
	if err != nil {
		return nil, err
	}
	l := &onceCloser{c: c}
	f.v.lock = l // during Open, in the opening goroutine
	return l, nil
}

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
