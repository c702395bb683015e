package embedded

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"syscall"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
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
}

// Options tune the embedded store. The zero value is the default.
type Options struct {
	// MemTableSize is Pebble's memtable size in bytes. Default 4 MiB
	// (Pebble's own default): a larger memtable measured slower appends, as
	// each fresh arena is paid for in page faults while a group is applied
	// (64 writers: 4 MiB 88-98k events/s, 64 MiB 64-85k). Minimum 1 MiB.
	MemTableSize uint64
	// MaxBatchEvents caps the events one group commit writes. Default 8192.
	MaxBatchEvents int
}

// Validate reports a field out of its limits.
func (o Options) Validate() error {
	if o.MemTableSize != 0 && o.MemTableSize < 1<<20 {
		return fmt.Errorf("embedded: Options.MemTableSize %d below 1 MiB", o.MemTableSize)
	}
	if o.MaxBatchEvents < 0 {
		return fmt.Errorf("embedded: Options.MaxBatchEvents %d is negative", o.MaxBatchEvents)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.MemTableSize == 0 {
		o.MemTableSize = 4 << 20
	}
	if o.MaxBatchEvents == 0 {
		o.MaxBatchEvents = 8192
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
	lock    *os.File
	appends chan *appendReq
	done    chan struct{} // closed by Close
	stopped chan struct{} // closed when the committer has exited

	closeOnce sync.Once
	// closeMu is held for reading by every Append hand-off and every read of
	// db, and for writing by Close while it marks the store closed, so no
	// append is queued after the committer left and no read races db.Close.
	closeMu sync.RWMutex
	closed  bool

	// Owned by the committer goroutine: the position last assigned and every
	// stream head it has seen, including appends applied but not yet synced.
	next  uint64
	heads map[string]streamVersion

	// mu guards what readers see: the durable head, its notify channel, and
	// the error that stopped the store from accepting appends.
	mu     sync.RWMutex
	head   uint64        // last durable global position
	notify chan struct{} // closed and replaced after each durable group
	broken error
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
	last uint64 // global position of its last event
}

var _ events.Store = (*Store)(nil)

// Open opens (creating if needed) the store in dir. It fails with ErrLocked
// if the directory is held, ErrForeignDir if it holds something else, and
// ErrNewerFormat if a newer build wrote it.
func Open(dir string, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("embedded: create data directory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	s, err := open(vfs.Default, dir, opts)
	if err != nil {
		lock.Close()
		return nil, err
	}
	s.lock = lock
	return s, nil
}

// OpenMemory opens a store that lives in memory only: the same code as Open
// on Pebble's in-memory file system. It is for simulation and tests.
func OpenMemory() (*Store, error) {
	return open(vfs.NewMem(), "/mem", Options{MemTableSize: 4 << 20})
}

func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("embedded: open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is held by another process (lock file %s)", ErrLocked, dir, path)
		}
		return nil, fmt.Errorf("embedded: lock %s: %w", path, err)
	}
	return f, nil
}

func open(fs vfs.FS, dir string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("embedded: create data directory: %w", err)
	}
	if err := checkFormat(fs, dir); err != nil {
		return nil, err
	}
	db, err := pebble.Open(fs.PathJoin(dir, eventsDir), &pebble.Options{
		FS:           fs,
		MemTableSize: opts.MemTableSize,
		Logger:       quietLogger{},
	})
	if err != nil {
		if pebble.IsCorruptionError(err) {
			return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, corruptFile(fs, fs.PathJoin(dir, eventsDir), err), err)
		}
		return nil, fmt.Errorf("embedded: open %s: %w", dir, err)
	}
	s := &Store{
		db:      db,
		dir:     dir,
		dbDir:   fs.PathJoin(dir, eventsDir),
		fs:      fs,
		opts:    opts,
		appends: make(chan *appendReq, 1024),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
		notify:  make(chan struct{}),
		heads:   map[string]streamVersion{},
	}
	if s.head, err = s.lastPosition(); err != nil {
		db.Close()
		return nil, err
	}
	s.next = s.head
	if err := s.checkCleanShutdown(fs); err != nil {
		db.Close()
		return nil, err
	}
	go s.commitLoop()
	return s, nil
}

// checkFormat writes the format marker into a new directory, and refuses a
// directory holding anything else.
func checkFormat(fs vfs.FS, dir string) error {
	path := fs.PathJoin(dir, formatFile)
	f, err := fs.Open(path)
	if err == nil {
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, 4096))
		if err != nil {
			return fmt.Errorf("embedded: read %s: %w", path, err)
		}
		var m formatMarker
		if err := json.Unmarshal(b, &m); err != nil || m.Format != formatName {
			return fmt.Errorf("%w: %s is not a cronactor format marker", ErrForeignDir, path)
		}
		if m.Version > formatVersion {
			return fmt.Errorf("%w: %s says version %d, this build reads up to %d", ErrNewerFormat, path, m.Version, formatVersion)
		}
		if m.Version < 1 {
			return fmt.Errorf("%w: %s says version %d", ErrCorrupt, path, m.Version)
		}
		return nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("embedded: open %s: %w", path, err)
	}
	names, err := fs.List(dir)
	if err != nil {
		return fmt.Errorf("embedded: list %s: %w", dir, err)
	}
	for _, n := range names {
		if n != lockFile && n != cleanFile {
			return fmt.Errorf("%w: %s holds %q but no %s", ErrForeignDir, dir, n, formatFile)
		}
	}
	b, _ := json.Marshal(formatMarker{Format: formatName, Version: formatVersion})
	tmp := path + ".tmp"
	w, err := fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("embedded: create %s: %w", tmp, err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		w.Close()
		return fmt.Errorf("embedded: write %s: %w", tmp, err)
	}
	if err := w.Sync(); err != nil {
		w.Close()
		return fmt.Errorf("embedded: sync %s: %w", tmp, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("embedded: close %s: %w", tmp, err)
	}
	if err := fs.Rename(tmp, path); err != nil {
		return fmt.Errorf("embedded: rename %s: %w", tmp, err)
	}
	return nil
}

func (s *Store) lastPosition() (uint64, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixGlobal}, UpperBound: []byte{prefixGlobal + 1}})
	if err != nil {
		return 0, s.dbErr("find the end of the global log", err)
	}
	defer it.Close()
	if !it.Last() {
		if err := it.Error(); err != nil {
			return 0, s.dbErr("find the end of the global log", err)
		}
		return 0, nil
	}
	k := it.Key()
	if len(k) != 9 {
		return 0, fmt.Errorf("%w: malformed global key %x in %s", ErrCorrupt, k, s.dbDir)
	}
	return binary.BigEndian.Uint64(k[1:]), nil
}

// use holds the store open for a read; release with the returned func.
func (s *Store) use() (release func(), err error) {
	s.closeMu.RLock()
	if s.closed {
		s.closeMu.RUnlock()
		return nil, events.ErrClosed
	}
	return s.closeMu.RUnlock, nil
}

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
		err = s.db.Close()
		if err == nil {
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
func (quietLogger) Fatalf(format string, args ...interface{}) {
	panic(fmt.Sprintf("embedded: pebble fatal: "+format, args...))
}

// appendReq is one Append waiting for the committer.
type appendReq struct {
	stream   string
	expected events.ExpectedVersion
	evs      []events.Proposed
	result   events.AppendResult
	err      error
	done     chan struct{}
}

// Append implements events.Store. Appends from many goroutines are
// group-committed: one synced Pebble batch carries every append waiting at
// that moment.
func (s *Store) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	if err := events.ValidateStream(stream); err != nil {
		return events.AppendResult{}, err
	}
	if len(evs) == 0 {
		return events.AppendResult{}, events.ErrNoEvents
	}
	if err := ctx.Err(); err != nil {
		return events.AppendResult{}, err
	}
	req := &appendReq{stream: stream, expected: expected, evs: evs, done: make(chan struct{})}
	release, err := s.use()
	if err != nil {
		return events.AppendResult{}, err
	}
	select {
	case s.appends <- req:
		release()
	case <-ctx.Done():
		release()
		return events.AppendResult{}, ctx.Err()
	}
	// Once queued, the append is decided by the committer; wait for the
	// outcome even if ctx ends, so the caller never mistakes a durable append
	// for a failed one.
	<-req.done
	return req.result, req.err
}

func (s *Store) commitLoop() {
	defer close(s.stopped)
	var pending []*appendReq
	for {
		pending = pending[:0]
		select {
		case r := <-s.appends:
			pending = append(pending, r)
		case <-s.done:
			s.drainClosed()
			return
		}
		s.letAnsweredQueue()
		n := len(pending[0].evs)
	drain:
		for n < s.opts.MaxBatchEvents {
			select {
			case r := <-s.appends:
				pending = append(pending, r)
				n += len(r.evs)
			default:
				break drain
			}
		}
		s.commit(pending)
	}
}

// letAnsweredQueue yields until the appends queue stops growing (at most 32
// times). The writers the last group answered are runnable but may not have
// run yet; cutting the next group at once would leave about half of them
// for the group after, and 64 writers would settle into two cohorts of ~32
// appends per sync. Yielding first lets each of them queue its next append,
// so a group carries ~60 of 64 (measured: 88k -> 94k events/s with a 4 MiB
// memtable, docs/decisions/0001-embedded-store.md). A lone writer pays one
// yield.
func (s *Store) letAnsweredQueue() {
	for range 32 {
		n := len(s.appends)
		runtime.Gosched()
		if len(s.appends) == n {
			return
		}
	}
}

// drainClosed commits the appends that were queued before the store
// closed: Close marks the store closed under closeMu, so none arrive later.
func (s *Store) drainClosed() {
	var pending []*appendReq
	n := 0
	for {
		select {
		case r := <-s.appends:
			pending = append(pending, r)
			n += len(r.evs)
			if n >= s.opts.MaxBatchEvents {
				s.commit(pending)
				pending, n = nil, 0
			}
		default:
			if len(pending) > 0 {
				s.commit(pending)
			}
			return
		}
	}
}

func (s *Store) brokenErr() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.broken
}

// fail stops the store from accepting appends: after a failed apply or sync
// the memtable may hold events the log does not, so nothing may build on it.
func (s *Store) fail(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken == nil {
		s.broken = fmt.Errorf("embedded: %s: appends refused until the store is reopened: %w", s.dir, err)
	}
	return s.broken
}

// commit decides every append of pending against the stream heads, applies
// the accepted ones to Pebble in one batch and settles it. Every append,
// accepted or not, is answered only after its group is durable, so no answer
// rests on state that could still be lost.
//
// One group is in flight at a time, on purpose. Cutting the next group while
// the previous one syncs (up to 4 in flight) split 64 writers into small
// cohorts: groups of ~8 appends and 64-88k events/s, against ~60 appends and
// 92-96k events/s with one group in flight
// (docs/decisions/0001-embedded-store.md).
func (s *Store) commit(pending []*appendReq) {
	if err := s.brokenErr(); err != nil {
		for _, r := range pending {
			r.err = err
			close(r.done)
		}
		return
	}
	b := s.db.NewBatch()
	g := &group{reqs: make([]*appendReq, 0, len(pending))}
	pos := s.next
	for _, r := range pending {
		g.reqs = append(g.reqs, r)
		cur, err := s.streamHead(r.stream)
		if err != nil {
			r.err = err
			continue
		}
		if r.expected.IsAny() {
			if res, ok := s.retried(r, cur); ok {
				r.result = res
				continue
			}
		} else if !r.expected.Allows(cur.version, cur.exists) {
			if res, ok := s.retried(r, cur); ok {
				r.result = res
			} else {
				r.err = &events.VersionConflictError{Stream: r.stream, Expected: r.expected, Actual: cur.version, ActualExists: cur.exists}
			}
			continue
		}
		v := cur.version
		if cur.exists {
			v++
		}
		for i := range r.evs {
			e := &r.evs[i]
			id := e.ID
			if id == uuid.Nil {
				id = uuid.New()
			}
			pos++
			rec := events.Recorded{
				Metadata: events.Metadata{ID: id, Stream: r.stream, Version: v, At: e.At,
					CausationID: e.CausationID, CorrelationID: e.CorrelationID},
				Type: e.Type, Schema: e.Schema, Data: e.Data,
			}
			_ = b.Set(globalKey(pos), encodeRecord(&rec), nil)
			_ = b.Set(streamKey(r.stream, v), binary.BigEndian.AppendUint64(nil, pos), nil)
			v++
		}
		s.heads[r.stream] = streamVersion{version: v - 1, exists: true}
		r.result = events.AppendResult{Version: v - 1, Position: events.Position{Commit: pos, Prepare: pos}}
	}
	if pos > s.next {
		if err := s.db.ApplyNoSyncWait(b, pebble.Sync); err != nil {
			err = s.fail(fmt.Errorf("apply: %w", err))
			for _, r := range g.reqs {
				r.result, r.err = events.AppendResult{}, err
				close(r.done)
			}
			return
		}
		g.b, g.last = b, pos
		s.next = pos
	} else {
		b.Close()
	}
	s.settle(g)
}

// settle waits for g's WAL sync, publishes the new durable head to readers,
// and only then answers the appends.
func (s *Store) settle(g *group) {
	var err error
	if g.b != nil {
		if err = g.b.SyncWait(); err == nil {
			err = g.b.Close()
		}
	}
	if err != nil {
		err = s.fail(fmt.Errorf("sync: %w", err))
	} else if g.b != nil {
		s.mu.Lock()
		s.head = g.last
		close(s.notify)
		s.notify = make(chan struct{})
		s.mu.Unlock()
	}
	for _, r := range g.reqs {
		if err != nil && r.err == nil {
			r.result, r.err = events.AppendResult{}, err
		}
		close(r.done)
	}
}

// streamHead returns a stream's last version as the committer sees it
// (including appends decided earlier in the group being cut). Only the
// committer calls it.
func (s *Store) streamHead(stream string) (streamVersion, error) {
	if h, ok := s.heads[stream]; ok {
		return h, nil
	}
	var h streamVersion
	prefix := streamPrefix(stream)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: prefixEnd(prefix)})
	if err != nil {
		return h, s.dbErr(fmt.Sprintf("read stream head %q", stream), err)
	}
	defer it.Close()
	if it.Last() {
		k := it.Key()
		h = streamVersion{version: binary.BigEndian.Uint64(k[len(k)-8:]), exists: true}
		s.heads[stream] = h
	} else if err := it.Error(); err != nil {
		return h, s.dbErr(fmt.Sprintf("read stream head %q", stream), err)
	}
	return h, nil
}

// retried recognises a repeated append: the events stored right after the
// expected version carry the same IDs. Only the committer calls it, between
// groups, so what it reads is durable.
func (s *Store) retried(r *appendReq, cur streamVersion) (events.AppendResult, bool) {
	if !cur.exists {
		return events.AppendResult{}, false
	}
	var from uint64
	n := uint64(len(r.evs))
	if v, ok := r.expected.Exact(); ok {
		from = v + 1
	} else if r.expected.IsAny() {
		// Any: a retry is recognised when the stream ends with these events.
		if cur.version+1 < n {
			return events.AppendResult{}, false
		}
		from = cur.version + 1 - n
	}
	for _, e := range r.evs {
		if e.ID == uuid.Nil {
			return events.AppendResult{}, false
		}
	}
	if from+n-1 > cur.version {
		return events.AppendResult{}, false
	}
	stored, err := s.readStream(r.stream, from, len(r.evs), math.MaxUint64)
	if err != nil || len(stored) != len(r.evs) {
		return events.AppendResult{}, false
	}
	for i, e := range r.evs {
		if stored[i].ID != e.ID {
			return events.AppendResult{}, false
		}
	}
	last := stored[len(stored)-1]
	return events.AppendResult{Version: last.Version, Position: last.Position}, true
}

func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// ReadStream implements events.Store. It shows durable events only:
// Pebble makes a batch visible before its WAL sync, so reads stop at the
// durable head.
func (s *Store) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	if err := events.ValidateStream(stream); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	release, err := s.use()
	if err != nil {
		return nil, err
	}
	defer release()
	head := s.Head().Commit
	out, err := s.readStream(stream, from, limit, head)
	if err != nil || len(out) > 0 {
		return out, err
	}
	// Nothing from "from" on: tell an empty read past the end from a
	// missing stream.
	v, closer, err := s.db.Get(streamKey(stream, 0))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("%w: %q", events.ErrStreamNotFound, stream)
	}
	if err != nil {
		return nil, s.dbErr(fmt.Sprintf("read stream %q", stream), err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return nil, fmt.Errorf("%w: stream index entry of %q in %s", ErrCorrupt, stream, s.dbDir)
	}
	if binary.BigEndian.Uint64(v) > head {
		return nil, fmt.Errorf("%w: %q", events.ErrStreamNotFound, stream)
	}
	return nil, nil
}

// readStream reads the events of stream from version from on, stopping at
// the first one positioned after head.
func (s *Store) readStream(stream string, from uint64, limit int, head uint64) ([]events.Recorded, error) {
	prefix := streamPrefix(stream)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: streamKey(stream, from), UpperBound: prefixEnd(prefix)})
	if err != nil {
		return nil, s.dbErr(fmt.Sprintf("read stream %q", stream), err)
	}
	defer it.Close()
	var out []events.Recorded
	for ok := it.First(); ok && (limit <= 0 || len(out) < limit); ok = it.Next() {
		v := it.Value()
		if len(v) != 8 {
			return out, fmt.Errorf("%w: stream index entry of %q in %s", ErrCorrupt, stream, s.dbDir)
		}
		pos := binary.BigEndian.Uint64(v)
		if pos > head {
			break
		}
		rec, err := s.get(pos)
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
	if err := it.Error(); err != nil {
		return out, s.dbErr(fmt.Sprintf("read stream %q", stream), err)
	}
	return out, nil
}

func (s *Store) get(pos uint64) (events.Recorded, error) {
	v, closer, err := s.db.Get(globalKey(pos))
	if errors.Is(err, pebble.ErrNotFound) {
		return events.Recorded{}, fmt.Errorf("%w: global position %d is indexed but missing in %s", ErrCorrupt, pos, s.dbDir)
	}
	if err != nil {
		return events.Recorded{}, s.dbErr(fmt.Sprintf("read global position %d", pos), err)
	}
	defer closer.Close()
	rec, err := decodeRecord(pos, v)
	if err != nil {
		return rec, fmt.Errorf("%w: record at global position %d in %s: %v", ErrCorrupt, pos, s.dbDir, err)
	}
	return rec, nil
}

// ReadAll implements events.Store.
func (s *Store) ReadAll(ctx context.Context, after events.Position, limit int) ([]events.Recorded, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	release, err := s.use()
	if err != nil {
		return nil, err
	}
	defer release()
	s.mu.RLock()
	head := s.head
	s.mu.RUnlock()
	return s.readAll(after.Commit, head, limit)
}

func (s *Store) readAll(after, head uint64, limit int) ([]events.Recorded, error) {
	if after >= head {
		return nil, nil
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: globalKey(after + 1), UpperBound: globalKey(head + 1)})
	if err != nil {
		return nil, s.dbErr("read global log", err)
	}
	defer it.Close()
	var out []events.Recorded
	for ok := it.First(); ok && (limit <= 0 || len(out) < limit); ok = it.Next() {
		pos := binary.BigEndian.Uint64(it.Key()[1:])
		rec, err := decodeRecord(pos, it.Value())
		if err != nil {
			return out, fmt.Errorf("%w: record at global position %d in %s: %v", ErrCorrupt, pos, s.dbDir, err)
		}
		out = append(out, rec)
	}
	if err := it.Error(); err != nil {
		return out, s.dbErr("read global log", err)
	}
	return out, nil
}

// subscribePage bounds how many events a subscriber holds in memory at once.
const subscribePage = 512

// Subscribe implements events.Store.
func (s *Store) Subscribe(ctx context.Context, after events.Position, handle func(events.Recorded) error) error {
	pos := after.Commit
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.mu.RLock()
		head, wake := s.head, s.notify
		s.mu.RUnlock()
		if pos >= head {
			select {
			case <-wake:
				continue
			case <-ctx.Done():
				return ctx.Err()
			case <-s.done:
				return events.ErrClosed
			}
		}
		release, err := s.use()
		if err != nil {
			return err
		}
		page, err := s.readAll(pos, head, subscribePage)
		release()
		if err != nil {
			return err
		}
		for _, r := range page {
			if err := handle(r); err != nil {
				return fmt.Errorf("embedded: subscriber: %w", err)
			}
			pos = r.Position.Commit
		}
	}
}

// Head returns the position of the last durable event.
func (s *Store) Head() events.Position {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return events.Position{Commit: s.head, Prepare: s.head}
}

// cleanShutdown is written by Close. A store reopened after a clean close
// must reach at least that head; if it does not, files were damaged or lost
// while it was closed, and opening fails instead of silently serving less.
type cleanShutdown struct {
	Head uint64 `json:"head"`
}

func (s *Store) writeCleanShutdown() error {
	b, _ := json.Marshal(cleanShutdown{Head: s.head})
	path := s.fs.PathJoin(s.dir, cleanFile)
	f, err := s.fs.Create(path)
	if err != nil {
		return fmt.Errorf("embedded: create %s: %w", path, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("embedded: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("embedded: sync %s: %w", path, err)
	}
	return f.Close()
}

func (s *Store) checkCleanShutdown(fs vfs.FS) error {
	path := fs.PathJoin(s.dir, cleanFile)
	f, err := fs.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("embedded: open %s: %w", path, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	f.Close()
	if err != nil {
		return fmt.Errorf("embedded: read %s: %w", path, err)
	}
	var c cleanShutdown
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCorrupt, path, err)
	}
	if s.head < c.Head {
		return fmt.Errorf("%w: %s: the log ends at position %d but was closed cleanly at %d; files under %s are damaged or missing",
			ErrCorrupt, s.dir, s.head, c.Head, fs.PathJoin(s.dir, eventsDir))
	}
	// From here on a crash is not a clean shutdown.
	if err := fs.Remove(path); err != nil {
		return fmt.Errorf("embedded: remove %s: %w", path, err)
	}
	return nil
}

// dbErr wraps an error from Pebble. Corruption becomes ErrCorrupt naming
// the damaged file where Pebble's message says which one.
func (s *Store) dbErr(op string, err error) error {
	if pebble.IsCorruptionError(err) {
		return fmt.Errorf("%w: %s: %s: %v", ErrCorrupt, op, corruptFile(s.fs, s.dbDir, err), err)
	}
	return fmt.Errorf("embedded: %s: %w", op, err)
}

// tableNumber finds the file number in Pebble's corruption messages
// ("invalid table 000014 (checksum mismatch …)", "… in 000007.sst …").
var tableNumber = regexp.MustCompile(`(?:table |\b)(\d{6,})(\.sst|\.log)?\b`)

// corruptFile names the damaged file: the path of the table or log Pebble
// mentions, else Pebble's directory.
func corruptFile(fs vfs.FS, dbDir string, err error) string {
	m := tableNumber.FindStringSubmatch(err.Error())
	if m == nil {
		return "in " + dbDir
	}
	ext := m[2]
	if ext == "" {
		ext = ".sst"
	}
	return "in file " + fs.PathJoin(dbDir, m[1]+ext)
}
