package embedded

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/cronactor/cronactor/events"
)

// Errors of the embedded store, matched with errors.Is.
var (
	// ErrLocked: another process (or another Store in this one) holds the
	// data directory.
	ErrLocked = errors.New("embedded: data directory is in use")
	// ErrForeignDir: the directory holds files this store did not write.
	ErrForeignDir = errors.New("embedded: directory was not written by cronactor")
	// ErrNewerFormat: the directory was written by a newer format version.
	ErrNewerFormat = errors.New("embedded: data directory format is newer than this build")
	// ErrCorrupt: stored data failed its checks.
	ErrCorrupt = errors.New("embedded: data corrupt")
	// ErrMissingFiles: files of a store created in the directory are gone
	// (events/ or events/CURRENT). The store refuses to start rather than
	// begin again over what is left.
	ErrMissingFiles = errors.New("embedded: store files missing")
	// ErrNoSpace is events.ErrNoSpace, kept under its old name: the disk
	// is full. Appends fail with it (reads keep working) until space
	// returns; the store then resumes by itself. Match events.ErrNoSpace
	// (or events.ErrUnwritable) in new code.
	ErrNoSpace = events.ErrNoSpace
)

const (
	formatFile    = "CRONACTOR_FORMAT"
	formatName    = "cronactor-embedded-event-store"
	formatVersion = 1
	lockFile      = "LOCK"
	cleanFile     = "CLEAN_SHUTDOWN"
	eventsDir     = "events"
)

type formatMarker struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Creating is set while a first start creates the database, and cleared
	// once Pebble has created it. Until then a start may create it again;
	// after, a missing database is damage.
	Creating bool `json:"creating,omitempty"`
}

// Options tune the embedded store. The zero value is the default.
type Options struct {
	// MemTableSize is Pebble's memtable size in bytes. Default
	// defaultMemTableSize (4 MiB, see there for what was measured); minimum
	// minMemTableSize (1 MiB).
	MemTableSize uint64
	// MaxBatchEvents caps the events one group commit writes. Default
	// defaultMaxBatchEvents (8192).
	MaxBatchEvents int
	// MinFreeBytes is the free space, in bytes, the file system holding the
	// store must keep: below it appends fail with ErrNoSpace, before Pebble
	// itself runs out (it cannot survive a failed write of its manifest).
	// Default defaultMinFreeBytes (64 MiB). Appends resume by themselves
	// once the space is back.
	MinFreeBytes uint64
	// AcceptDataLoss lets Open cut a write-ahead log that is damaged before
	// its end (see ErrLogDamaged) instead of refusing: the events logged
	// after the damage are given up. Before anything is cut, a copy of the
	// log and a DATA_LOSS-<time>.json report (what was cut, which positions
	// were lost, where the log now ends) are written to the data directory,
	// and the loss is logged. Default false; set it for one start only, on
	// an operator's explicit decision.
	AcceptDataLoss bool
	// Logger receives what the store has to tell an operator (data loss
	// accepted, appends refused for lack of space, recovery). Default: no
	// logging.
	Logger *slog.Logger
}

// Validate reports a field out of its limits.
func (o Options) Validate() error {
	if o.MemTableSize != 0 && o.MemTableSize < minMemTableSize {
		return fmt.Errorf("embedded: Options.MemTableSize %d below 1 MiB", o.MemTableSize)
	}
	if o.MaxBatchEvents < 0 {
		return fmt.Errorf("embedded: Options.MaxBatchEvents %d is negative", o.MaxBatchEvents)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.MemTableSize == 0 {
		o.MemTableSize = defaultMemTableSize
	}
	if o.MaxBatchEvents == 0 {
		o.MaxBatchEvents = defaultMaxBatchEvents
	}
	if o.MinFreeBytes == 0 {
		o.MinFreeBytes = defaultMinFreeBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Store is the embedded, durable events.Store. See the package doc.
type Store struct {
	db      *pebble.DB
	fs      vfs.FS
	dir     string
	dbDir   string // Pebble's directory inside dir
	opts    Options
	lock    *dirLock
	intake  *intake
	done    chan struct{} // closed by Close
	stopped chan struct{} // closed when the committer has exited

	closeOnce sync.Once
	// closeMu is held for reading by every Append hand-off and every read of
	// db, and for writing by Close while it marks the store closed, so no
	// append is queued after the committer left and no read races db.Close.
	closeMu sync.RWMutex
	closed  bool
	// dbMu is held for reading by every read of db, and for writing by the
	// committer while it replaces db after a full disk (reopen). Appends do
	// not take it, so a full queue of appends never waits on a reopen.
	dbMu sync.RWMutex

	// stuck is set when Pebble panicked during a write: the database is
	// never touched again, and appends are refused until a restart.
	stuck atomic.Bool
	// refused counts the appends refused since the store began refusing
	// them (refusing, in mu), for the log line and WriteStatus.
	refused atomic.Uint64
	// probe asks the committer to check whether a condition that refuses
	// appends has ended (WriteStatus sends it; buffered, never waited on).
	probe chan struct{}

	// Owned by the committer goroutine: the position last assigned and every
	// stream head it has seen, including appends applied but not yet synced.
	next  uint64
	heads streamHeads
	// scratch holds the keys and record the committer hands to Pebble's
	// batch, which copies them: reused for every event.
	scratch []byte

	// mu guards what readers see: the durable head, its notify channel, and
	// the error that stopped the store from accepting appends.
	mu     sync.RWMutex
	head   uint64        // last durable global position
	notify chan struct{} // closed and replaced after each durable group
	broken error
	// refusing is why appends are refused (nil while they are accepted):
	// broken, or too little free space with the database intact. The
	// committer sets it (refuse, resume), logging each change once.
	refusing error
	tail     tail // the newest durable records (tail.go)
	// subscribers counts the Subscribe calls under way: the committer keeps
	// the tail only while there is one.
	subscribers atomic.Int32

	// snapDB is the snapshot table (snapshot.go), opened on first use:
	// snapMu is held for writing to open, close or clear it, and for
	// reading while it is used.
	snapMu sync.RWMutex
	snapDB *pebble.DB
}

type streamVersion struct {
	version uint64
	exists  bool
}

// group is one group commit: a Pebble batch applied with ApplyNoSyncWait
// and the appends it answers.
type group struct {
	b    *pebble.Batch // nil when the group wrote nothing
	reqs []*appendReq
	last uint64    // global position of its last event
	tail tailChunk // its records, for the tail once durable
}

var _ events.Store = (*Store)(nil)

// use holds the store open for a read or an append hand-off; release it
// with s.release once use returned no error.
func (s *Store) use() error {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return events.ErrClosed
	}
	s.dbMu.RLock()
	if s.db == nil {
		// A recovery from a full disk could not reopen the database at all.
		s.dbMu.RUnlock()
		s.closeMu.RUnlock()
		return s.brokenErr()
	}
	return nil
}

// release ends a use.
func (s *Store) release() { s.dbMu.RUnlock(); s.closeMu.RUnlock() }

// Close stops accepting appends, waits for the ones under way, and closes the
// database and the directory lock.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.closeMu.Lock()
		s.closed = true
		close(s.done)
		s.closeMu.Unlock()
		<-s.stopped
		// A stuck database may hold Pebble's own locks: closing it could
		// hang, and the process is about to restart anyway.
		if cerr := s.closeSnapshots(); cerr != nil {
			s.opts.Logger.Warn("embedded: close the snapshot table", "dir", s.dir, "err", cerr)
		}
		if s.db == nil || s.stuck.Load() {
			err = s.brokenErr()
		} else if err = s.db.Close(); err == nil {
			err = s.writeCleanShutdown()
		}
		if s.lock != nil {
			if cerr := s.lock.Close(); err == nil {
				err = cerr
			}
		}
	})
	return err
}

// Dir is the data directory ("/mem" for an in-memory store).
func (s *Store) Dir() string { return s.dir }

type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{})  {}
func (quietLogger) Errorf(string, ...interface{}) {}

// Fatalf panics: Pebble's code after a Fatalf may carry on as if the write
// had worked. The panic value is an error that keeps the arguments' errors
// in its chain, so a full disk can still be recognised where the store
// recovers the panic (Open).
func (quietLogger) Fatalf(format string, args ...interface{}) {
	panic(&fatalError{msg: fmt.Sprintf("embedded: pebble fatal: "+format, args...), args: args})
}

type fatalError struct {
	msg  string
	args []interface{}
}

func (e *fatalError) Error() string { return e.msg }

func (e *fatalError) Unwrap() []error {
	var errs []error
	for _, a := range e.args {
		if err, ok := a.(error); ok {
			errs = append(errs, err)
		}
	}
	return errs
}
