package crontasks

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Sentinel errors.
var (
	// ErrNotFound: no task with that ID in the view.
	ErrNotFound = errors.New("crontasks: task not found")
	// ErrClosed: the view was closed.
	ErrClosed = errors.New("crontasks: view closed")
	// ErrForeignDB: the view's directory holds something else, or a view of
	// a newer format.
	ErrForeignDB = errors.New("crontasks: directory is not a cron_tasks view this build reads")
	// ErrAheadOfLog: the view's checkpoint is past the end of the log: the
	// log lost events, or the view was built from another log. The view is
	// kept as it is; rebuilding it would make a loss permanent.
	ErrAheadOfLog = errors.New("crontasks: view is ahead of the event log")
	// ErrBadQuery: a query parameter is invalid; the error names it.
	ErrBadQuery = errors.New("crontasks: bad query")
	// ErrCorrupt: a row, index entry or checkpoint of the view cannot be
	// read back as written. See Damaged.
	ErrCorrupt = errors.New("crontasks: the view's data is damaged")
	// ErrBroken: the view's database failed (Pebble gave up on a write or
	// hit corruption it treats as fatal) and cannot be used any more. See
	// Damaged.
	ErrBroken = errors.New("crontasks: the view's database failed")
)

// errReadLog marks an error of the log, not of the view.
var errReadLog = errors.New("crontasks: read the log")

// Config configures a View.
type Config struct {
	// Store is the event log the view folds. Required.
	Store events.Store
	// Dir is the view's Pebble directory, e.g. <data>/view. Empty: the view
	// lives in memory and is rebuilt from the log on every Open.
	Dir string
	// BatchSize caps the events applied in one atomic batch. Default 1024;
	// 1 to 65536.
	BatchSize int
	// Coalesce is how long the live applier waits, after events arrive,
	// for more to fold in the same batch: the rows of tasks with several
	// events then get written once. It adds at most this much lag. Default
	// 5ms; negative: apply at once; at most 1s. It is measured on the
	// Archetype's clock: under a virtual clock the batch waits until the
	// clock moves, so a test that does not move it sets Coalesce negative.
	Coalesce time.Duration
	// CacheRows is how many recently folded rows the applier keeps decoded
	// in memory (about 1 KiB each). Default 16384; 0 to 1<<22; -1 disables.
	CacheRows int
	// FS is the file system Dir is on. Default: the operating system's
	// (vfs.Default). Not used without Dir (a view in memory has its own).
	// Tests wrap it to inject faults.
	FS vfs.FS
	// RebuildRate caps the events a Keeper's background rebuild folds per
	// second (by the Archetype's clock), so that rebuilding a large view
	// does not take the disk and CPU the scheduler needs. Default 0: no cap;
	// at most 10,000,000.
	RebuildRate int
	// Sync makes every applied batch durable before it is acknowledged.
	// Default false: the view is rebuilt from the log's checkpoint after a
	// crash anyway, and a batch is always all-or-nothing.
	Sync bool
	// Archetype is the clock (lag, the coalescing timer, catch-up progress)
	// and the logger (catch-up progress and errors): the scheduler's, so a
	// virtual clock drives the view too. Default: the wall clock, a logger
	// that discards.
	Archetype archetype.Archetype
	// SnapshotEvery is how many folded events apart the view keeps a
	// snapshot of itself in memory, so that View.AsOf folds from the
	// nearest one instead of from the start of the log. A snapshot pins the
	// rows as they were then: rows changed since are kept twice until it
	// is dropped. Default 8192; -1 disables; at most 1<<24.
	SnapshotEvery int
	// KeepDamaged is how many damaged views a Keeper keeps moved aside
	// (<Dir>.damaged-<UTC time>), for an operator to look at: after moving
	// one aside it removes the oldest beyond this many. Default 3; 1 to
	// 100.
	KeepDamaged int
	// Snapshots caps the snapshots kept. Past it every other one is
	// dropped and the spacing doubles, so they keep spanning all the view
	// folded since it was opened. Default 32; 2 to 1024.
	Snapshots int
}

// Validate names the first invalid field.
func (c Config) Validate() error {
	if c.Store == nil {
		return errors.New("crontasks: Config.Store is required")
	}
	if c.Coalesce > time.Second {
		return fmt.Errorf("crontasks: Config.Coalesce %s above 1s", c.Coalesce)
	}
	if c.CacheRows < -1 || c.CacheRows > 1<<22 {
		return fmt.Errorf("crontasks: Config.CacheRows %d out of -1..%d", c.CacheRows, 1<<22)
	}
	if c.RebuildRate < 0 || c.RebuildRate > 10_000_000 {
		return fmt.Errorf("crontasks: Config.RebuildRate %d out of 0..10000000", c.RebuildRate)
	}
	if c.BatchSize < 0 || c.BatchSize > 65536 {
		return fmt.Errorf("crontasks: Config.BatchSize %d out of 1..65536", c.BatchSize)
	}
	if c.SnapshotEvery < -1 || c.SnapshotEvery > 1<<24 {
		return fmt.Errorf("crontasks: Config.SnapshotEvery %d out of -1..%d", c.SnapshotEvery, 1<<24)
	}
	if c.KeepDamaged < 0 || c.KeepDamaged > 100 {
		return fmt.Errorf("crontasks: Config.KeepDamaged %d out of 1..100", c.KeepDamaged)
	}
	if c.Snapshots != 0 && (c.Snapshots < 2 || c.Snapshots > 1024) {
		return fmt.Errorf("crontasks: Config.Snapshots %d out of 2..1024", c.Snapshots)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.BatchSize == 0 {
		c.BatchSize = 1024
	}
	if c.Coalesce == 0 {
		c.Coalesce = 5 * time.Millisecond
	}
	if c.CacheRows == 0 {
		c.CacheRows = 16384
	}
	c.Archetype = c.Archetype.WithDefaults()
	if c.SnapshotEvery == 0 {
		c.SnapshotEvery = 8192
	}
	if c.Snapshots == 0 {
		c.Snapshots = 32
	}
	if c.KeepDamaged == 0 {
		c.KeepDamaged = 3
	}
	return c
}

// View is the cron_tasks view. See the package doc.
type View struct {
	cfg Config
	db  *pebble.DB

	// applyMu serialises appliers (Run, Apply, CatchUp).
	applyMu sync.Mutex
	// rows caches recently folded rows for the applier (under applyMu), so
	// that the events of one run (enqueued, started, ended) do not each
	// read and decode the row again.
	rows *rowCache
	// readers counts queries in progress; Close waits for them.
	readers sync.WaitGroup

	mu         sync.Mutex
	checkpoint events.Position
	notify     chan struct{} // closed and replaced after each applied batch
	failed     error         // why Run stopped applying, if it did
	broken     chan struct{} // closed when the database failed (brokenErr)
	// dbClosed is closed once the database has been closed (see abandon).
	dbClosed chan struct{}
	// dbOpen is set once pebble.Open has returned the database (see viewFS).
	dbOpen    atomic.Bool
	brokenErr error
	// lock is the database's directory lock (see viewFS).
	lock io.Closer
	// catchUpPage, when set, replaces BatchSize in catch-up (Keeper's
	// throttled rebuild).
	catchUpPage atomic.Int64
	closed      bool
	done        chan struct{}
	// queue holds events received from the subscription, not yet applied.
	queue     []events.Recorded
	queueWake chan struct{} // signalled when the queue gains events
	queueRoom chan struct{} // signalled when the queue loses events

	// snaps are the snapshots of a live view for AsOf (nil if disabled).
	snaps *snapshots
	// An as-of view (View.AsOf) reads base, the snapshot it started from,
	// under what it folded since, minus the hidden keys of base; release
	// gives base and the live view back when it closes.
	base    *pebble.Snapshot
	hidden  map[string]bool
	release func()
}

// Open opens (creating if needed) the view in cfg.Dir, or in memory. It
// reads the checkpoint but does not fold anything yet: call Run (follow the
// log) or CatchUp (fold what is there now).
//
// A damaged view (see Damaged) is refused with an error Damaged reports;
// OpenKeeper moves it aside and starts a fresh one instead.
func Open(cfg Config) (*View, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	log := &pebbleLogger{}
	opts := &pebble.Options{Logger: log, MemTableSize: 16 << 20, FS: cfg.FS}
	dir := cfg.Dir
	if dir == "" {
		opts.FS = vfs.NewMem()
		opts.MemTableSize = 4 << 20
		dir = "/view"
	} else if opts.FS == nil {
		opts.FS = vfs.Default
	}
	if err := opts.FS.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("crontasks: create %s: %w", dir, err)
	}
	v := &View{cfg: cfg, rows: newRowCache(cfg.CacheRows), notify: make(chan struct{}), done: make(chan struct{}),
		broken: make(chan struct{}), dbClosed: make(chan struct{}), queueWake: make(chan struct{}, 1), queueRoom: make(chan struct{}, 1), snaps: newSnapshots(cfg)}
	opts.FS = viewFS{FS: opts.FS, v: v}
	if err := v.open(dir, opts, log); err != nil {
		if v.db != nil {
			v.abandon()
		}
		return nil, err
	}
	return v, nil
}

// open opens the database and reads the format marker and the checkpoint.
func (v *View) open(dir string, opts *pebble.Options, log *pebbleLogger) (err error) {
	if v.cfg.Dir != "" {
		if err := probe(dir, opts.FS.(viewFS).FS, v.cfg); err != nil {
			return err
		}
	}
	defer v.guard(&err)()
	cfg := v.cfg
	db, err := pebble.Open(dir, opts)
	if err == nil {
		err = log.attach(v)
	}
	if err != nil {
		if db != nil {
			v.db = db // closed by Open's abandon
		}
		return fmt.Errorf("crontasks: open %s: %w", dir, openFailure(err))
	}
	v.db = db
	v.dbOpen.Store(true)
	if err := v.checkFormat(); err != nil {
		return err
	}
	cp, err := v.readCheckpoint()
	if err != nil {
		return err
	}
	v.checkpoint = cp
	if h, ok := cfg.Store.(events.HeadReader); ok {
		if head := h.Head(); head.Less(cp) {
			return errAhead(cfg.Dir, cp, head)
		}
	}
	return nil
}

// errAhead is the refusal of a view whose checkpoint cp is past the log's
// head.
func errAhead(dir string, cp, head events.Position) error {
	return fmt.Errorf("%w: view %s is at position %s, the log ends at %s: the log has lost events the view saw, "+
		"or the view was built from another log. Nothing was changed. Do not rebuild the view now: a rebuild "+
		"makes the loss permanent, and the view may be the last record of those events. Restore the data "+
		"directory (log and view together) from a backup; rebuild the view only once the shorter log has been "+
		"accepted on purpose (a store opened with --accept-data-loss)",
		ErrAheadOfLog, dir, cp, head)
}

// probe opens an existing view read-only and reads what Open reads, so
// that a damaged view, or one ahead of the log, is refused as it was found:
// a read-write open would first replay its WAL and rotate its manifest.
func probe(dir string, fs vfs.FS, cfg Config) (err error) {
	store := cfg.Store
	if _, err := fs.Stat(fs.PathJoin(dir, "CURRENT")); err != nil {
		return checkUncreated(dir, fs)
	}
	pv := &View{cfg: cfg, broken: make(chan struct{}), done: make(chan struct{}), dbClosed: make(chan struct{})}
	log := &pebbleLogger{}
	// Closed after guard has recovered a failure (in the background then).
	defer func() {
		if pv.db != nil {
			pv.abandon()
		}
	}()
	defer pv.guard(&err)()
	db, err := pebble.Open(dir, &pebble.Options{ReadOnly: true, FS: viewFS{FS: fs, v: pv}, Logger: log})
	if db != nil {
		pv.db = db
	}
	if err == nil {
		err = log.attach(pv)
	}
	if err != nil {
		if err := openFailure(err); Damaged(err) {
			return fmt.Errorf("crontasks: open %s: %w", dir, err)
		}
		return nil // the read-write open reports it
	}
	for _, k := range [][]byte{keyFormat, keyCheckpoint} {
		val, c, err := db.Get(k)
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("crontasks: read %s of %s: %w", k, dir, err)
		}
		var cp events.Position
		if len(val) == 16 {
			cp = events.Position{Commit: binary.BigEndian.Uint64(val), Prepare: binary.BigEndian.Uint64(val[8:])}
		}
		c.Close()
		if h, ok := store.(events.HeadReader); ok && bytes.Equal(k, keyCheckpoint) {
			if head := h.Head(); head.Less(cp) {
				return errAhead(dir, cp, head)
			}
		}
	}
	return nil
}

// checkUncreated refuses a directory without Pebble's CURRENT file that
// holds files all the same (a MANIFEST, tables, logs: CURRENT was lost), as
// ErrCorrupt, before Pebble sees it: Pebble would take it for a new
// database, write a fresh MANIFEST over the old one and then panic
// replaying the old logs. An empty directory (or one with only the LOCK) is
// a new view.
func checkUncreated(dir string, fs vfs.FS) error {
	names, err := fs.List(dir)
	if err != nil {
		return fmt.Errorf("crontasks: list %s: %w", dir, err)
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == "LOCK" })
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return fmt.Errorf("%w: %s has no CURRENT file but holds %s", ErrCorrupt, dir, strings.Join(names, ", "))
}

// abandon lets go of the database: closed at once unless its instance
// failed (ErrBroken). A failed one has its directory lock released at once,
// so a fresh view can be opened at the same path, and is closed in the
// background, since a failed Pebble may be slow to finish its work; a panic
// of that close is recovered there and logged with its error. dbClosed is
// closed once the database is.
func (v *View) abandon() error {
	if !errors.Is(v.Broken(), ErrBroken) {
		defer close(v.dbClosed)
		v.snaps.close()
		return v.db.Close()
	}
	if v.lock != nil {
		_ = v.lock.Close()
	}
	go func() {
		defer close(v.dbClosed)
		err := v.closeBroken()
		v.cfg.Archetype.Logger.Info("cron_tasks view: closed a failed database", "dir", v.cfg.Dir, "err", err)
	}()
	return nil
}

// closeBroken closes a failed database, its snapshots first.
func (v *View) closeBroken() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: pebble panicked while closing: %v", ErrBroken, r)
		}
	}()
	v.snaps.close()
	return v.db.Close()
}

func (v *View) checkFormat() error {
	val, closer, err := v.db.Get(keyFormat)
	if errors.Is(err, pebble.ErrNotFound) {
		it, err := v.db.NewIter(nil)
		if err != nil {
			return fmt.Errorf("crontasks: %w", err)
		}
		nonEmpty := it.First()
		it.Close()
		if nonEmpty {
			return fmt.Errorf("%w: %s has keys but no format marker", ErrForeignDB, v.cfg.Dir)
		}
		if err := v.db.Set(keyFormat, []byte(formatValue), pebble.NoSync); err != nil {
			return fmt.Errorf("crontasks: write format marker: %w", err)
		}
		if err := v.db.Flush(); err != nil {
			return fmt.Errorf("crontasks: write format marker: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("crontasks: read format marker: %w", err)
	}
	marker := string(val)
	closer.Close()
	if marker == formatValue {
		return nil
	}
	if olderFormat(marker) {
		// Written by an older build: the view is derived data, so clear it
		// and let the next catch-up fold the log again from zero.
		v.cfg.Archetype.Logger.Warn("cron_tasks view of an older format: rebuilding from the log", "dir", v.cfg.Dir, "format", marker)
		b := v.db.NewBatch()
		defer b.Close()
		if err := b.DeleteRange([]byte{0}, []byte{0xFF}, nil); err != nil {
			return fmt.Errorf("crontasks: clear an older view: %w", err)
		}
		if err := b.Set(keyFormat, []byte(formatValue), nil); err != nil {
			return fmt.Errorf("crontasks: clear an older view: %w", err)
		}
		if err := b.Commit(pebble.Sync); err != nil {
			return fmt.Errorf("crontasks: clear an older view: %w", err)
		}
		return nil
	}
	return fmt.Errorf("%w: %s says %q, this build writes %q", ErrForeignDB, v.cfg.Dir, marker, formatValue)
}

func (v *View) readCheckpoint() (events.Position, error) {
	val, closer, err := v.db.Get(keyCheckpoint)
	if errors.Is(err, pebble.ErrNotFound) {
		return events.Start, nil
	}
	if err != nil {
		return events.Position{}, fmt.Errorf("crontasks: read checkpoint: %w", err)
	}
	defer closer.Close()
	if len(val) != 16 {
		return events.Position{}, fmt.Errorf("%w: checkpoint of %d bytes", ErrCorrupt, len(val))
	}
	return events.Position{Commit: binary.BigEndian.Uint64(val), Prepare: binary.BigEndian.Uint64(val[8:])}, nil
}

// Close stops the view. A running Run returns ErrClosed.
func (v *View) Close() error {
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return nil
	}
	v.closed = true
	close(v.done)
	v.mu.Unlock()
	v.readers.Wait()
	v.applyMu.Lock()
	defer v.applyMu.Unlock()
	err := v.abandon()
	if v.release != nil {
		v.release()
	}
	return err
}

// Checkpoint is the global position of the last event folded.
func (v *View) Checkpoint() events.Position {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.checkpoint
}

// WaitFor blocks until the view has folded the event at pos (or later), so
// a caller that just appended can read its own write. It returns early with
// ctx's error, ErrClosed, or the error that stopped the view.
func (v *View) WaitFor(ctx context.Context, pos events.Position) error {
	for {
		v.mu.Lock()
		cp, wake, failed, closed, broken := v.checkpoint, v.notify, v.failed, v.closed, v.brokenErr
		v.mu.Unlock()
		if !cp.Less(pos) {
			return nil
		}
		if broken != nil {
			return broken
		}
		if failed != nil {
			return failed
		}
		if closed {
			return ErrClosed
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		case <-v.done:
		case <-v.broken:
		}
	}
}

// Lag is how far the view trails the log.
type Lag struct {
	// Checkpoint is the view's position; Head the log's last position when
	// the store tells it (the embedded store does), else the last position
	// the view has received.
	Checkpoint events.Position
	Head       events.Position
	// Events not folded yet: Head - Checkpoint on a store numbering events
	// 1, 2, 3… (the embedded store), else the events received and waiting.
	Events uint64
	// Time is how long ago (by the Archetype's clock) the oldest event received but not
	// yet folded was decided; 0 when none waits.
	Time time.Duration
}

// Lag reports how far the view trails the log.
func (v *View) Lag() Lag {
	v.mu.Lock()
	// The applier trims the queue just after it moved the checkpoint:
	// events at or before the checkpoint are folded already.
	waiting := v.queue
	for len(waiting) > 0 && !v.checkpoint.Less(waiting[0].Position) {
		waiting = waiting[1:]
	}
	l := Lag{Checkpoint: v.checkpoint, Head: v.checkpoint, Events: uint64(len(waiting))}
	if n := len(waiting); n > 0 {
		l.Head = waiting[n-1].Position
		l.Time = v.cfg.Archetype.Now().Sub(waiting[0].At)
		if l.Time < 0 {
			l.Time = 0
		}
	}
	v.mu.Unlock()
	if h, ok := v.cfg.Store.(events.HeadReader); ok {
		head := h.Head()
		if l.Head.Less(head) {
			l.Head = head
		}
		if head.Commit == head.Prepare && l.Checkpoint.Commit == l.Checkpoint.Prepare && l.Checkpoint.Commit <= head.Commit {
			l.Events = head.Commit - l.Checkpoint.Commit
		}
	}
	return l
}

// cached is a row being changed by a batch and the index keys it had.
type cached struct {
	task    *Task
	oldKeys [][]byte
}

// Apply folds recs (in global log order) in one atomic batch together with
// the new checkpoint. Events at or before the checkpoint are skipped, so
// applying the same events twice changes nothing; events of streams that
// are not task streams are skipped too. It is what Run uses; Rebuild, AsOf
// and tests call it directly.
func (v *View) Apply(recs []events.Recorded) error {
	v.applyMu.Lock()
	defer v.applyMu.Unlock()
	return v.apply(recs)
}

func (v *View) apply(recs []events.Recorded) (err error) {
	v.mu.Lock()
	cp, closed, broken := v.checkpoint, v.closed, v.brokenErr
	v.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if broken != nil {
		return broken
	}
	defer v.guard(&err)()
	rows := map[uuid.UUID]*cached{}
	newCP := cp
	var foldErr error
	for _, r := range recs {
		if !newCP.Less(r.Position) {
			continue
		}
		id, err := events.TaskIDFromStream(r.Stream)
		if err != nil {
			newCP = r.Position
			continue // not a task stream: not this view's business
		}
		ev, err := events.Decode(r)
		if err != nil {
			foldErr = fmt.Errorf("crontasks: fold %s@%d (position %s): %w", r.Stream, r.Version, r.Position, err)
			break
		}
		c := rows[id]
		if c == nil {
			cur, ok := v.rows.get(id)
			if !ok {
				var err error
				cur, err = v.lookup(v.db, id)
				if err != nil && !errors.Is(err, ErrNotFound) {
					return err
				}
			}
			c = &cached{}
			if cur != nil {
				c.task, c.oldKeys = cur, indexKeys(cur)
			}
			rows[id] = c
		}
		next, err := Evolve(c.task, r.Metadata, ev)
		if err != nil {
			foldErr = fmt.Errorf("crontasks: fold position %s: %w", r.Position, err)
			break
		}
		c.task = next
		newCP = r.Position
	}
	// What folded before an event that cannot be folded is still written,
	// so the view stops right before it.
	if newCP == cp {
		return foldErr
	}
	b := v.db.NewBatch()
	defer b.Close()
	for id, c := range rows {
		if c.task == nil {
			continue
		}
		val, err := encodeRow(c.task)
		if err != nil {
			return fmt.Errorf("crontasks: encode task %s: %w", id, err)
		}
		if err := b.Set(taskKey(id), val, nil); err != nil {
			return fmt.Errorf("crontasks: batch: %w", err)
		}
		// Most events (starts, outcomes) leave the index keys as they were.
		newKeys := indexKeys(c.task)
		for _, k := range c.oldKeys {
			if !containsKey(newKeys, k) {
				if err := b.Delete(k, nil); err != nil {
					return fmt.Errorf("crontasks: batch: %w", err)
				}
			}
		}
		for _, k := range newKeys {
			if !containsKey(c.oldKeys, k) {
				if err := b.Set(k, nil, nil); err != nil {
					return fmt.Errorf("crontasks: batch: %w", err)
				}
			}
		}
	}
	cpv := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, newCP.Commit), newCP.Prepare)
	if err := b.Set(keyCheckpoint, cpv, nil); err != nil {
		return fmt.Errorf("crontasks: batch: %w", err)
	}
	wo := pebble.NoSync
	if v.cfg.Sync {
		wo = pebble.Sync
	}
	if err := v.commit(b, wo); err != nil {
		return fmt.Errorf("crontasks: apply batch up to position %s: %w", newCP, err)
	}
	if err := v.Broken(); err != nil {
		// Pebble's Fatalf returned after a failed commit, which then
		// returned nil (see fault.go).
		return fmt.Errorf("crontasks: apply batch up to position %s: %w", newCP, err)
	}
	// Rows enter the cache only once written, so a batch that failed is
	// folded again from the rows on disk.
	for id, c := range rows {
		if c.task != nil {
			v.rows.put(id, c.task)
		}
	}
	v.mu.Lock()
	v.checkpoint = newCP
	close(v.notify)
	v.notify = make(chan struct{})
	v.mu.Unlock()
	v.snaps.folded(v.db, recs, cp, newCP)
	return foldErr
}

// commit writes the batch; a test hook replaces it to simulate a crash.
var commitHook func(b *pebble.Batch, wo *pebble.WriteOptions) error

func (v *View) commit(b *pebble.Batch, wo *pebble.WriteOptions) error {
	if commitHook != nil {
		return commitHook(b, wo)
	}
	return b.Commit(wo)
}

func containsKey(keys [][]byte, k []byte) bool {
	for _, x := range keys {
		if bytes.Equal(x, k) {
			return true
		}
	}
	return false
}

type reader interface {
	Get(key []byte) ([]byte, io.Closer, error)
}

func (v *View) get(r reader, id uuid.UUID) (*Task, error) {
	val, closer, err := r.Get(taskKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("crontasks: read task %s: %w", id, err)
	}
	defer closer.Close()
	var t Task
	if err := json.Unmarshal(val, &t); err != nil {
		return nil, fmt.Errorf("%w: task %s: %v", ErrCorrupt, id, err)
	}
	return &t, nil
}

// QueryError is an ErrBadQuery (errors.Is) that names the query
// parameter at fault, as the HTTP API's error names its field.
type QueryError struct {
	// Param is the parameter: owner, status, due_before, limit, cursor or
	// as_of.
	Param string
	msg   string
}

func (e *QueryError) Error() string { return ErrBadQuery.Error() + ": " + e.msg }

// Unwrap makes a QueryError an ErrBadQuery.
func (e *QueryError) Unwrap() error { return ErrBadQuery }

func badQuery(param, format string, args ...any) error {
	return &QueryError{Param: param, msg: fmt.Sprintf(format, args...)}
}

// Progress reports catch-up work.
type Progress struct {
	// Applied counts events folded so far by this call.
	Applied uint64
	// Position is the view's checkpoint; Head the log's end when known
	// (zero otherwise).
	Position events.Position
	Head     events.Position
	Elapsed  time.Duration
}

// CatchUp folds every event now in the log after the checkpoint, in pages
// of BatchSize, one atomic batch per page, calling progress (if not nil)
// after each. It returns when a read comes back empty.
func (v *View) CatchUp(ctx context.Context, progress func(Progress)) error {
	return v.catchUp(ctx, progress, nil)
}

// catchUp folds pages; filter (if not nil) picks the events of each page to
// fold and says when to stop reading.
func (v *View) catchUp(ctx context.Context, progress func(Progress), filter func([]events.Recorded) ([]events.Recorded, bool)) error {
	c := v.cfg.Archetype.Clock
	start := c.Now()
	var head events.Position
	if h, ok := v.cfg.Store.(events.HeadReader); ok {
		head = h.Head()
	}
	var applied uint64
	after := v.Checkpoint()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		page, err := v.cfg.Store.ReadAll(ctx, after, v.pageSize())
		if err != nil {
			return fmt.Errorf("%w after %s: %w", errReadLog, after, err)
		}
		if len(page) == 0 {
			return nil
		}
		after = page[len(page)-1].Position
		keep, stop := page, false
		if filter != nil {
			keep, stop = filter(page)
		}
		if err := v.Apply(keep); err != nil {
			return err
		}
		applied += uint64(len(keep))
		if progress != nil {
			progress(Progress{Applied: applied, Position: v.Checkpoint(), Head: head, Elapsed: c.Now().Sub(start)})
		}
		if stop {
			return nil
		}
	}
}

// pageSize is how many events catch-up reads and folds at once: BatchSize,
// or less while a Keeper's rebuild is throttled.
func (v *View) pageSize() int {
	if n := v.catchUpPage.Load(); n > 0 {
		return int(n)
	}
	return v.cfg.BatchSize
}

// maxQueue bounds the events held between the subscription and the
// applier.
func (v *View) maxQueue() int { return 4 * v.cfg.BatchSize }

// Run catches up from the checkpoint, then follows the log live, applying
// what arrives in batches of up to BatchSize. It returns when ctx ends
// (ctx.Err()), the view is closed (ErrClosed), or folding fails (that error,
// which WaitFor then returns too). Run one Run at a time; it may be run
// again after it returned.
func (v *View) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	v.mu.Lock()
	v.queue = nil // left over from an earlier Run; the log delivers them again
	v.failed = nil
	v.mu.Unlock()
	if err := v.CatchUp(ctx, nil); err != nil {
		return v.stop(err)
	}
	v.cfg.Archetype.Logger.Info("cron_tasks view caught up", "position", v.Checkpoint().String())
	subErr := make(chan error, 1)
	go func() {
		subErr <- v.cfg.Store.Subscribe(ctx, v.Checkpoint(), func(r events.Recorded) error {
			return v.enqueue(ctx, r)
		})
	}()
	for {
		batch, err := v.take(ctx, subErr)
		if err != nil {
			return v.stop(err)
		}
		if err := v.Apply(batch); err != nil {
			return v.stop(err)
		}
		v.mu.Lock()
		v.queue = v.queue[len(batch):]
		v.mu.Unlock()
		select {
		case v.queueRoom <- struct{}{}:
		default:
		}
	}
}

func (v *View) stop(err error) error {
	if errors.Is(err, events.ErrClosed) {
		err = fmt.Errorf("crontasks: %w", err)
	}
	select {
	case <-v.done:
		return ErrClosed
	default:
	}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		v.mu.Lock()
		v.failed = err
		close(v.notify)
		v.notify = make(chan struct{})
		v.mu.Unlock()
		v.cfg.Archetype.Logger.Error("cron_tasks view stopped", "err", err)
	}
	return err
}

// enqueue hands one event from the subscription to the applier, waiting
// while the queue is full.
func (v *View) enqueue(ctx context.Context, r events.Recorded) error {
	for {
		v.mu.Lock()
		if len(v.queue) < v.maxQueue() {
			v.queue = append(v.queue, r)
			v.mu.Unlock()
			select {
			case v.queueWake <- struct{}{}:
			default:
			}
			return nil
		}
		v.mu.Unlock()
		select {
		case <-v.queueRoom:
		case <-ctx.Done():
			return ctx.Err()
		case <-v.done:
			return ErrClosed
		}
	}
}

// take waits for queued events and returns up to BatchSize of them,
// leaving them queued (so Lag sees them) until applied.
func (v *View) take(ctx context.Context, subErr <-chan error) ([]events.Recorded, error) {
	var deadline chan struct{}
	for {
		v.mu.Lock()
		n := min(len(v.queue), v.cfg.BatchSize)
		batch := v.queue[:n:n]
		v.mu.Unlock()
		if n == v.cfg.BatchSize || (n > 0 && v.cfg.Coalesce <= 0) {
			return batch, nil
		}
		if n > 0 && deadline == nil {
			// Wait a little for more: under load the events of one task
			// come close together, and one batch then writes its row once.
			fired := make(chan struct{})
			t := v.cfg.Archetype.Clock.AfterFunc(v.cfg.Coalesce, func() { close(fired) })
			defer t.Stop()
			deadline = fired
		}
		select {
		case <-v.queueWake:
		case <-deadline:
			v.mu.Lock()
			n := min(len(v.queue), v.cfg.BatchSize)
			batch := v.queue[:n:n]
			v.mu.Unlock()
			return batch, nil
		case err := <-subErr:
			if err == nil {
				err = errors.New("ended")
			}
			return nil, fmt.Errorf("%w (subscription): %w", errReadLog, err)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-v.done:
			return nil, ErrClosed
		case <-v.broken:
			return nil, v.Broken()
		}
	}
}
