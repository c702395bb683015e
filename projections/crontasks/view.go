package crontasks

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Errors of the view, matched with errors.Is.
var (
	// ErrForeignDir: the directory holds a database this view did not write.
	ErrForeignDir = errors.New("crontasks: directory does not hold a cron_tasks view")
	// ErrNewerFormat: a newer build wrote the view; rebuild it or upgrade.
	ErrNewerFormat = errors.New("crontasks: view format is newer than this build")
	// ErrBadCursor: a query cursor that this view did not hand out for that
	// query.
	ErrBadCursor = errors.New("crontasks: invalid cursor")
	// ErrClosed: the view was closed.
	ErrClosed = errors.New("crontasks: view closed")
	// ErrCorrupt: a stored row failed to decode.
	ErrCorrupt = errors.New("crontasks: view data corrupt")
)

const (
	formatName    = "cronactor-crontasks-view"
	formatVersion = 1
)

// Key layout. One byte names the keyspace.
const (
	keyMeta       = 'm' // format marker
	keyCheckpoint = 'c' // global position of the last applied event
	keyTask       = 't' // t<id16> → row JSON
	keyOwner      = 'o' // o<owner>\x00<id16>
	keyStatus     = 's' // s<status>\x00<id16>
	keyDue        = 'd' // d<nextRun unix nanos, sign-flipped BE8><id16>, active tasks only
)

// Config configures a View.
type Config struct {
	// Dir is the directory of the view's database (e.g. <data>/view). Empty:
	// the view lives in memory.
	Dir string
	// BatchSize caps the events applied in one atomic batch while following
	// the log. Default 1024; 1 to 1,000,000.
	BatchSize int
	// Sync makes every applied batch durable before it counts. Default false:
	// the view can be rebuilt, and an unsynced batch lost in a crash is
	// applied again from the log on restart (view and checkpoint are still
	// written atomically together).
	Sync bool
	// Logger receives the view's warnings. Default: discard.
	Logger *slog.Logger
	// Now is the wall clock used for lag. Default time.Now.
	Now func() time.Time
}

// Validate names the first field out of its limits.
func (c Config) Validate() error {
	if c.BatchSize < 0 || c.BatchSize > 1_000_000 {
		return fmt.Errorf("crontasks: Config.BatchSize %d outside 1..1000000", c.BatchSize)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.BatchSize == 0 {
		c.BatchSize = 1024
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// View is the persisted cron_tasks view. See the package doc.
type View struct {
	cfg Config
	db  *pebble.DB

	// applyMu serialises appliers.
	applyMu sync.Mutex

	// mu guards the fields below.
	mu         sync.Mutex
	checkpoint events.Position
	applied    chan struct{} // closed and replaced after each applied batch
	done       chan struct{} // closed by Close
	closed     bool
	queue      []pending // received from the log, not yet applied
	inFlight   time.Time // receive time of the oldest event being applied
	head       func() events.Position
	lastBatch  time.Duration

	// beforeCommit, when set (tests), runs before a batch is committed; an
	// error aborts the batch as a crash would.
	beforeCommit func() error
}

type pending struct {
	rec events.Recorded
	at  time.Time
}

// Open opens (creating if needed) the view described by cfg.
func Open(cfg Config) (*View, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	opts := &pebble.Options{Logger: quietLogger{}}
	dir := cfg.Dir
	if dir == "" {
		opts.FS, dir = vfs.NewMem(), "/view"
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("crontasks: open %s: %w", dir, err)
	}
	v := &View{cfg: cfg, db: db, applied: make(chan struct{}), done: make(chan struct{})}
	if err := v.checkFormat(); err != nil {
		db.Close()
		return nil, err
	}
	cp, err := v.readCheckpoint()
	if err != nil {
		db.Close()
		return nil, err
	}
	v.checkpoint = cp
	return v, nil
}

type marker struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
}

func (v *View) checkFormat() error {
	val, closer, err := v.db.Get([]byte{keyMeta})
	if errors.Is(err, pebble.ErrNotFound) {
		it, err := v.db.NewIter(nil)
		if err != nil {
			return fmt.Errorf("crontasks: %w", err)
		}
		nonEmpty := it.First()
		it.Close()
		if nonEmpty {
			return fmt.Errorf("%w: %s has keys but no format marker", ErrForeignDir, v.cfg.Dir)
		}
		b, _ := json.Marshal(marker{Format: formatName, Version: formatVersion})
		if err := v.db.Set([]byte{keyMeta}, b, pebble.Sync); err != nil {
			return fmt.Errorf("crontasks: write format marker: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("crontasks: read format marker: %w", err)
	}
	defer closer.Close()
	var m marker
	if err := json.Unmarshal(val, &m); err != nil || m.Format != formatName {
		return fmt.Errorf("%w: %s: format marker %q", ErrForeignDir, v.cfg.Dir, val)
	}
	if m.Version > formatVersion {
		return fmt.Errorf("%w: %s is version %d, this build reads up to %d", ErrNewerFormat, v.cfg.Dir, m.Version, formatVersion)
	}
	return nil
}

func (v *View) readCheckpoint() (events.Position, error) {
	val, closer, err := v.db.Get([]byte{keyCheckpoint})
	if errors.Is(err, pebble.ErrNotFound) {
		return events.Start, nil
	}
	if err != nil {
		return events.Position{}, fmt.Errorf("crontasks: read checkpoint: %w", err)
	}
	defer closer.Close()
	if len(val) != 16 {
		return events.Position{}, fmt.Errorf("%w: checkpoint is %d bytes", ErrCorrupt, len(val))
	}
	return events.Position{Commit: binary.BigEndian.Uint64(val), Prepare: binary.BigEndian.Uint64(val[8:])}, nil
}

// Close releases the view. A running Run returns.
func (v *View) Close() error {
	v.applyMu.Lock()
	defer v.applyMu.Unlock()
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return nil
	}
	v.closed = true
	close(v.applied)
	close(v.done)
	v.mu.Unlock()
	return v.db.Close()
}

// Checkpoint returns the global position of the last event applied.
func (v *View) Checkpoint() events.Position {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.checkpoint
}

func taskKey(id uuid.UUID) []byte { return append([]byte{keyTask}, id[:]...) }

func ownerKey(owner string, id uuid.UUID) []byte {
	k := append([]byte{keyOwner}, owner...)
	k = append(k, 0)
	return append(k, id[:]...)
}

func statusKey(status string, id uuid.UUID) []byte {
	k := append([]byte{keyStatus}, status...)
	k = append(k, 0)
	return append(k, id[:]...)
}

// timeKey orders times (as unix nanoseconds) bytewise.
func timeKey(t time.Time) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(t.UnixNano())^(1<<63))
	return b[:]
}

func dueKey(t time.Time, id uuid.UUID) []byte {
	k := append([]byte{keyDue}, timeKey(t)...)
	return append(k, id[:]...)
}

// indexKeys lists the secondary index keys of a row.
func indexKeys(t *Task) [][]byte {
	if t == nil {
		return nil
	}
	keys := [][]byte{ownerKey(t.Owner, t.ID), statusKey(t.Status, t.ID)}
	if t.Status == StatusActive && t.NextRun != nil {
		keys = append(keys, dueKey(*t.NextRun, t.ID))
	}
	return keys
}

// Apply folds recs into the view in one atomic batch with the new
// checkpoint. Events at or before the checkpoint are skipped, so applying
// the same events again changes nothing. recs must be in log order.
func (v *View) Apply(recs []events.Recorded) error {
	v.applyMu.Lock()
	defer v.applyMu.Unlock()
	return v.apply(recs)
}

func (v *View) apply(recs []events.Recorded) error {
	v.mu.Lock()
	cp, closed := v.checkpoint, v.closed
	v.mu.Unlock()
	if closed {
		return ErrClosed
	}
	// before is each touched row as stored, after its new value.
	before := map[uuid.UUID]*Task{}
	after := map[uuid.UUID]*Task{}
	newCP := cp
	for _, rec := range recs {
		if !cp.Less(rec.Position) {
			continue
		}
		if !newCP.Less(rec.Position) {
			return fmt.Errorf("crontasks: events out of order: %s after %s", rec.Position, newCP)
		}
		newCP = rec.Position
		id, err := events.TaskIDFromStream(rec.Stream)
		if err != nil {
			continue // not a task stream
		}
		ev, err := events.Decode(rec)
		if err != nil {
			return fmt.Errorf("crontasks: event at %s of %s: %w", rec.Position, rec.Stream, err)
		}
		cur, seen := after[id]
		if !seen {
			if cur, err = v.get(id); err != nil {
				return err
			}
			before[id] = cur
		}
		next, err := Evolve(cur, rec.Metadata, ev)
		if err != nil {
			return err
		}
		after[id] = next
	}
	if newCP == cp {
		return nil
	}
	b := v.db.NewBatch()
	defer b.Close()
	for id, t := range after {
		for _, k := range indexKeys(before[id]) {
			if err := b.Delete(k, nil); err != nil {
				return fmt.Errorf("crontasks: %w", err)
			}
		}
		row, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("crontasks: encode row %s: %w", id, err)
		}
		if err := b.Set(taskKey(id), row, nil); err != nil {
			return fmt.Errorf("crontasks: %w", err)
		}
		for _, k := range indexKeys(t) {
			if err := b.Set(k, nil, nil); err != nil {
				return fmt.Errorf("crontasks: %w", err)
			}
		}
	}
	var cpb [16]byte
	binary.BigEndian.PutUint64(cpb[:], newCP.Commit)
	binary.BigEndian.PutUint64(cpb[8:], newCP.Prepare)
	if err := b.Set([]byte{keyCheckpoint}, cpb[:], nil); err != nil {
		return fmt.Errorf("crontasks: %w", err)
	}
	if v.beforeCommit != nil {
		if err := v.beforeCommit(); err != nil {
			return err
		}
	}
	opt := pebble.NoSync
	if v.cfg.Sync {
		opt = pebble.Sync
	}
	if err := b.Commit(opt); err != nil {
		return fmt.Errorf("crontasks: commit batch up to %s: %w", newCP, err)
	}
	v.mu.Lock()
	v.checkpoint = newCP
	close(v.applied)
	v.applied = make(chan struct{})
	v.mu.Unlock()
	return nil
}

// get reads a row; nil when the task is not in the view.
func (v *View) get(id uuid.UUID) (*Task, error) {
	val, closer, err := v.db.Get(taskKey(id))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		if errors.Is(err, pebble.ErrClosed) {
			return nil, ErrClosed
		}
		return nil, fmt.Errorf("crontasks: read task %s: %w", id, err)
	}
	defer closer.Close()
	var t Task
	if err := json.Unmarshal(val, &t); err != nil {
		return nil, fmt.Errorf("%w: task %s: %v", ErrCorrupt, id, err)
	}
	return &t, nil
}

// Get returns the row of a task; ok is false when the view has none.
func (v *View) Get(id uuid.UUID) (t Task, ok bool, err error) {
	if err := v.open(); err != nil {
		return Task{}, false, err
	}
	p, err := v.get(id)
	if err != nil || p == nil {
		return Task{}, false, err
	}
	return *p, true, nil
}

func (v *View) open() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return ErrClosed
	}
	return nil
}

// WaitFor blocks until the view has applied the event at pos (or a later
// one), so a writer can read its own writes; or until ctx ends.
func (v *View) WaitFor(ctx context.Context, pos events.Position) error {
	for {
		v.mu.Lock()
		done, closed, wake := !v.checkpoint.Less(pos), v.closed, v.applied
		v.mu.Unlock()
		if done {
			return nil
		}
		if closed {
			return ErrClosed
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{})  {}
func (quietLogger) Errorf(string, ...interface{}) {}
func (quietLogger) Fatalf(format string, args ...interface{}) {
	panic(fmt.Sprintf(format, args...))
}
