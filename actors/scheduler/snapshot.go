package scheduler

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Snapshots: a store that keeps them (events.SnapshotStore) holds, for
// every task, the record of its state as it last rested (record.go), keyed
// by its ID, and one meta entry: the head of the log when the snapshot was
// cut (its mark) and the tasks that had an actor then. Start reads those
// instead of the whole log, then folds the log after the mark onto them:
//
//   - a task's events up to its record's version are in the record, and
//     are skipped; the ones after it are applied in order;
//   - a task whose events after the mark do not follow on from its record
//     (or that has no record and does not begin there), and every task
//     that had an actor at the cut, is read from its own stream: the
//     events after its record's version (a record is the exact fold of its
//     stream up to its version, whenever it was cut), or the whole stream
//     when it has no record.
//
// A resting task has no event in flight, so its record holds every event
// of its stream up to the head when it came to rest; an event it gets
// after the cut is after the mark. So each task is either in its record,
// completed by the log after the mark, or read whole: the same state a fold
// of the whole log gives (TestSnapshotRecoveryIsTheFullFold).
//
// Stop makes every task rest in that sense before its last sweep: it
// stops the task actors first, and each hands over its state as it stops
// — open runs and all — once no append of it is in flight (Stopping waits
// for the store's answer; task.Actor.handOver). Its record then holds its
// stream up to the head as a resting task's does, and the task leaves the
// set of tasks with an actor. Only an actor that cannot vouch for its
// state (its last append failed) stays in that set, to be read whole. So
// the last sweep's mark is the head, its set is empty or nearly, and the
// next start reads one record per task and nothing of the log
// (TestCleanStopLeavesASnapshotAtTheHead).
//
// A sweep writes the records of the tasks that rested since the last one
// (each as it was when it rested), then the meta entry, then flushes: the
// store keeps its writes in order, so a crash during a sweep leaves the
// previous mark with some newer records — which the rules above read the
// same way.

// DefaultSnapshotEvery is Config.SnapshotEvery's default: about a second
// of a full wave's appends, or a minute's of a busy day.
const DefaultSnapshotEvery = 250_000

// snapshotFormat is the meta entry's first byte.
const snapshotFormat = 1

// metaKey is the meta entry's key; the tasks' keys are their 16-byte IDs.
var metaKey = []byte("meta")

// snapshotBatch is how many records a sweep writes per store call, and
// sweepPause how long a sweep in the background waits after each batch:
// paced, a sweep leaves the ticks enough of the CPU to keep the lag bar,
// where one written in one go did not (the figures: docs/performance.md,
// "Compactions and sweeps take their time"). The last sweep, in Stop, is
// not paced.
const (
	snapshotBatch = 256
	sweepPause    = 4 * time.Millisecond
)

// sweepCheck is how many tasks come to rest between two checks whether
// the log has grown by Config.SnapshotEvery since the last snapshot.
const sweepCheck = 4096

// snapshots is the Scheduler's side of its store's snapshot table.
type snapshots struct {
	store events.SnapshotStore
	head  events.HeadReader
	every uint64

	// Guarded by the Scheduler's mu: the records of the tasks that came to
	// rest since the last cut, and the tasks with an actor.
	dirty map[uuid.UUID]string
	live  map[uuid.UUID]struct{}

	// sweeping is held by a sweep; mark is the last durable snapshot's.
	sweeping sync.Mutex
	mark     atomic.Uint64
	rests    atomic.Uint64
	wake     chan struct{}
	quit     chan struct{}
	done     chan struct{}
}

// newSnapshots is the snapshot side of s's store, nil when it keeps none
// or the configuration turns them off.
func newSnapshots(cfg Config) *snapshots {
	ss, ok := cfg.Store.(events.SnapshotStore)
	hr, ok2 := cfg.Store.(events.HeadReader)
	if !ok || !ok2 || cfg.SnapshotEvery < 0 {
		return nil
	}
	return &snapshots{store: ss, head: hr, every: uint64(cfg.SnapshotEvery),
		dirty: map[uuid.UUID]string{}, live: map[uuid.UUID]struct{}{},
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// meta is the snapshot's meta entry.
type snapshotMeta struct {
	mark   events.Position
	active []uuid.UUID
}

func (m snapshotMeta) appendBinary(b []byte) []byte {
	b = append(b, snapshotFormat)
	b = binary.AppendUvarint(b, m.mark.Commit)
	b = binary.AppendUvarint(b, m.mark.Prepare)
	b = binary.AppendUvarint(b, uint64(len(m.active)))
	for _, id := range m.active {
		b = append(b, id[:]...)
	}
	return b
}

func (m *snapshotMeta) unmarshalBinary(b []byte) error {
	if len(b) == 0 || b[0] != snapshotFormat {
		return errors.New("scheduler: snapshot meta: unknown format")
	}
	b = b[1:]
	var vals [3]uint64
	for i := range vals {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return errors.New("scheduler: snapshot meta: truncated")
		}
		vals[i], b = v, b[n:]
	}
	if uint64(len(b)) != vals[2]*16 {
		return errors.New("scheduler: snapshot meta: bad length")
	}
	m.mark = events.Position{Commit: vals[0], Prepare: vals[1]}
	m.active = make([]uuid.UUID, vals[2])
	for i := range m.active {
		copy(m.active[i][:], b[i*16:])
	}
	return nil
}

// rested notes that task id came to rest as rec (its record; for a task
// that is deleted and idle too); s.mu must be held. Every sweepCheck rests
// it asks the sweeper to look at the log's growth.
func (sn *snapshots) rested(id uuid.UUID, rec string) {
	sn.dirty[id] = rec
	if sn.rests.Add(1)%sweepCheck == 0 {
		sn.poke()
	}
}

func (sn *snapshots) poke() {
	select {
	case sn.wake <- struct{}{}:
	default:
	}
}

// run is the sweeper: it snapshots whenever the log has grown by every
// events since the last snapshot, until quit.
func (s *Scheduler) runSweeper(sn *snapshots) {
	defer close(sn.done)
	for {
		select {
		case <-sn.quit:
			return
		case <-sn.wake:
		}
		if sn.head.Head().Commit-sn.mark.Load() < sn.every {
			continue
		}
		if err := s.sweep(context.Background(), sn.quit); err != nil {
			s.cfg.Logger.Warn("snapshot failed; a restart reads more of the log", "err", err)
		}
	}
}

// sweep cuts a snapshot: under s.mu, the log's head (the mark), the
// records that changed since the last cut and the tasks with an actor;
// then it writes the records, the meta entry, and flushes. What it could
// not write goes back to be written by the next sweep.
// A sweep given a quit channel is paced (sweepPause) until it closes.
func (s *Scheduler) sweep(ctx context.Context, quit <-chan struct{}) error {
	sn := s.snap
	sn.sweeping.Lock()
	defer sn.sweeping.Unlock()
	s.mu.Lock()
	meta := snapshotMeta{mark: sn.head.Head()}
	dirty := sn.dirty
	sn.dirty = make(map[uuid.UUID]string, len(dirty)/4)
	meta.active = make([]uuid.UUID, 0, len(sn.live))
	for id := range sn.live {
		meta.active = append(meta.active, id)
	}
	s.mu.Unlock()
	err := writeSnapshot(ctx, sn.store, dirty, meta, quit)
	if err != nil {
		s.mu.Lock()
		for id, rec := range dirty {
			if _, newer := sn.dirty[id]; !newer {
				sn.dirty[id] = rec
			}
		}
		s.mu.Unlock()
		return err
	}
	sn.mark.Store(meta.mark.Commit)
	s.cfg.Logger.Debug("snapshot written", "records", len(dirty), "actors", len(meta.active), "mark", meta.mark.Commit)
	return nil
}

func writeSnapshot(ctx context.Context, store events.SnapshotStore, dirty map[uuid.UUID]string, meta snapshotMeta, quit <-chan struct{}) error {
	var pause *time.Timer // wall clock: it paces real I/O and CPU
	if quit != nil {
		pause = time.NewTimer(sweepPause)
		defer pause.Stop()
	}
	batch := make([]events.SnapshotEntry, 0, min(len(dirty), snapshotBatch))
	keys := make([]byte, 0, 16*cap(batch))
	for id, rec := range dirty {
		keys = append(keys, id[:]...)
		batch = append(batch, events.SnapshotEntry{Key: keys[len(keys)-16:], Value: unsafe.Slice(unsafe.StringData(rec), len(rec))})
		if len(batch) == snapshotBatch {
			if err := store.WriteSnapshot(ctx, batch); err != nil {
				return err
			}
			batch, keys = batch[:0], keys[:0]
			if pause != nil {
				pause.Reset(sweepPause)
				select {
				case <-pause.C:
				case <-quit: // Stop: the rest at once
					pause = nil
				}
			}
		}
	}
	batch = append(batch, events.SnapshotEntry{Key: metaKey, Value: meta.appendBinary(nil)})
	if err := store.WriteSnapshot(ctx, batch); err != nil {
		return err
	}
	return store.FlushSnapshot(ctx)
}

// stopSweeper ends the sweeper goroutine and cuts the last snapshot, even
// when ctx has ended: what ctx bounds is the wait for runs, and the
// snapshot is a few local writes. Stop calls it once the task actors have
// stopped and handed over their state (see the comment at the top).
func (s *Scheduler) stopSweeper(ctx context.Context) {
	sn := s.snap
	close(sn.quit)
	<-sn.done
	// Bounded all the same: a store that cannot write (a file system gone
	// read-only under it) must not hold the stop for good.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lastSweepTimeout)
	defer cancel()
	if err := s.sweep(sctx, nil); err != nil {
		s.cfg.Logger.Warn("snapshot at stop failed; the next start reads more of the log", "err", err)
	}
}

// lastSweepTimeout bounds the snapshot a stop cuts: a few local writes,
// far less than this even at a million tasks' records.
const lastSweepTimeout = time.Minute

// ErrSnapshotsInUse: Start of a scheduler whose store's snapshot table
// another running Scheduler of the process uses. Two schedulers writing
// one table would interleave their records and marks; the second is
// refused before it reads anything. Give one of them a negative
// Config.SnapshotEvery (no snapshots), or Stop the first.
var ErrSnapshotsInUse = errors.New("scheduler: another running scheduler uses this store's snapshots")

// snapshotUsers holds the snapshot stores a started, not yet stopped,
// Scheduler of the process uses (claim): a guard, not a cache, emptied as
// they stop.
var snapshotUsers sync.Map // events.SnapshotStore → *Scheduler

// claim makes s the user of its store's snapshots, or says who is.
func (s *Scheduler) claimSnapshots() error {
	if other, taken := snapshotUsers.LoadOrStore(s.snap.store, s); taken && other != s {
		return fmt.Errorf("%w (%s, a scheduler started before; this one is %s): set Config.SnapshotEvery negative in one of them",
			ErrSnapshotsInUse, other.(*Scheduler).prefix, s.prefix)
	}
	s.claimed = s.snap.store
	return nil
}

// releaseSnapshots ends s's claim, if it holds one.
func (s *Scheduler) releaseSnapshots() {
	if s.claimed != nil {
		snapshotUsers.CompareAndDelete(s.claimed, s)
		s.claimed = nil
	}
}

// errNoSnapshot: the store holds no usable snapshot; recovery reads the
// whole log.
var errNoSnapshot = errors.New("scheduler: no snapshot")

// recoverFromSnapshot folds the store's snapshot and the log after its mark
// into the state of every task (see the comment at the top). It returns
// errNoSnapshot, wrapped with the reason, when there is none to use.
func (s *Scheduler) recoverFromSnapshot(ctx context.Context) (recovery, error) {
	sn := s.snap
	head := sn.head.Head()
	var (
		meta    snapshotMeta
		hasMeta bool
		recs    = map[uuid.UUID]string{}
	)
	err := sn.store.ReadSnapshot(ctx, func(k, v []byte) error {
		switch {
		case len(k) == 16:
			recs[uuid.UUID(k)] = string(v)
		case string(k) == string(metaKey):
			if err := meta.unmarshalBinary(v); err != nil {
				return err
			}
			hasMeta = true
		default:
			return fmt.Errorf("scheduler: snapshot: unknown key %x", k)
		}
		return nil
	})
	switch {
	case err != nil:
		return recovery{}, fmt.Errorf("%w: %w", errNoSnapshot, err)
	case !hasMeta:
		return recovery{}, fmt.Errorf("%w: none written", errNoSnapshot)
	case meta.mark.Commit > head.Commit:
		return recovery{}, fmt.Errorf("%w: its mark %d is past the log's head %d", errNoSnapshot, meta.mark.Commit, head.Commit)
	}
	states, err := decodeRecords(recs, head)
	if err != nil {
		return recovery{}, fmt.Errorf("%w: %w", errNoSnapshot, err)
	}
	sn.mark.Store(meta.mark.Commit)
	reread := make(map[uuid.UUID]struct{}, len(meta.active))
	for _, id := range meta.active {
		reread[id] = struct{}{}
	}
	// next is the version each task touched by the tail expects next.
	next := map[uuid.UUID]uint64{}
	tail := 0
	err = s.foldLog(ctx, meta.mark, func(r *events.Recorded, id uuid.UUID, e events.Event) {
		tail++
		if _, ok := reread[id]; ok {
			return
		}
		st := states[id]
		want, touched := next[id]
		switch {
		case touched:
		case st != nil:
			want = st.State.Version + 1
		default:
			st = &task.Initial{}
			states[id] = st
			want = 0
		}
		switch {
		case r.Version < want:
			next[id] = want // in the record already
			return
		case r.Version > want: // a gap: read it whole
			reread[id] = struct{}{}
			delete(next, id)
			return
		}
		st.State.Apply(r.Metadata, e)
		st.Position = r.Position
		next[id] = want + 1
	})
	if err != nil {
		return recovery{}, err
	}
	s.cfg.Logger.Info("tasks read from a snapshot", "tasks", len(states), "mark", meta.mark.Commit,
		"events_after", tail, "streams_read_whole", len(reread))
	if err := s.rereadTasks(ctx, reread, states, recs); err != nil {
		return recovery{}, err
	}
	readWhole := len(reread)
	changed := reread
	for id := range next {
		changed[id] = struct{}{}
	}
	for id := range changed {
		delete(recs, id)
	}
	return recovery{states: states, changed: changed, records: recs, readWhole: readWhole}, nil
}

// decodeRecords decodes the snapshot's records, in parallel; a record of an
// event past head is refused.
func decodeRecords(recs map[uuid.UUID]string, head events.Position) (map[uuid.UUID]*task.Initial, error) {
	type item struct {
		id  uuid.UUID
		rec string
	}
	items := make([]item, 0, len(recs))
	for id, rec := range recs {
		items = append(items, item{id, rec})
	}
	out := make([]task.Initial, len(items))
	err := inParallel(len(items), 1024, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			if err := readRecord(items[i].rec, &out[i]); err != nil {
				return fmt.Errorf("task %s: %w", items[i].id, err)
			}
			if out[i].Position.Commit > head.Commit {
				return fmt.Errorf("task %s: its record is of position %d, past the log's head %d",
					items[i].id, out[i].Position.Commit, head.Commit)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	states := make(map[uuid.UUID]*task.Initial, len(items))
	for i := range items {
		st := &out[i]
		st.Tracked = false // as recovered from the log: Start decides
		states[items[i].id] = st
	}
	return states, nil
}

// rereadTasks reads the streams of the tasks in ids, a few at a time —
// the events after the task's record in recs, or the whole stream when it
// has none — and puts their state in states (deleting it for a stream that
// does not exist).
func (s *Scheduler) rereadTasks(ctx context.Context, ids map[uuid.UUID]struct{}, states map[uuid.UUID]*task.Initial, recs map[uuid.UUID]string) error {
	list := make([]uuid.UUID, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	out := make([]*task.Initial, len(list))
	parts := min(4*parallelism(), len(list))
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			for i := p; i < len(list); i += parts {
				st, err := readTail(ctx, s.cfg.Store, list[i], recs[list[i]])
				if errors.Is(err, events.ErrStreamNotFound) {
					continue
				}
				if err != nil {
					errs[p] = fmt.Errorf("scheduler: recover: %w", err)
					return
				}
				out[i] = st
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for i, id := range list {
		if out[i] == nil {
			delete(states, id)
		} else {
			states[id] = out[i]
		}
	}
	return nil
}

// readTail is task id's state from its record rec ("": none) and the
// events of its stream after the record's version.
func readTail(ctx context.Context, store events.Store, id uuid.UUID, rec string) (*task.Initial, error) {
	st := &task.Initial{}
	var from uint64
	if rec != "" {
		if err := readRecord(rec, st); err != nil {
			return nil, fmt.Errorf("task %s: %w", id, err)
		}
		st.Tracked = false
		from = st.State.Version + 1
	}
	stream := events.TaskStream(id)
	recs, err := store.ReadStream(ctx, stream, from, 0)
	if err != nil {
		return nil, fmt.Errorf("%s after version %d: %w", stream, from, err)
	}
	for i := range recs {
		r := &recs[i]
		e, err := events.Decode(*r)
		if err != nil {
			return nil, fmt.Errorf("%s version %d: %w", stream, r.Version, err)
		}
		st.State.Apply(r.Metadata, e)
		st.Position = r.Position
	}
	return st, nil
}
