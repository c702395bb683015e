package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble"
	"github.com/cronactor/cronactor/events"
)

// The snapshot table (events.SnapshotStore) is a Pebble database of its
// own under <dir>/snapshots, apart from the log's: its writes never share a
// batch, a write-ahead log or a failure with the events, and losing it
// costs a longer restart, nothing else. It has no write-ahead log: a write
// lives in the memtable until a flush makes it durable, and memtables are
// flushed in the order they were filled, so a crash keeps the writes up to
// some point, in order (what events.SnapshotStore promises).
const snapshotsDir = "snapshots"

// snapshotMemTableSize is the snapshot table's memtable (a sweep of the
// scheduler writes about 130 bytes per task that changed), and
// snapshotCacheSize its block cache: the table is read once, by a start.
const (
	snapshotMemTableSize = 4 << 20
	snapshotCacheSize    = 1 << 20
)

var _ events.SnapshotStore = (*Store)(nil)

// openedSnapshots opens the snapshot table if it is not open; s.use must
// be held.
func (s *Store) openedSnapshots() error {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	if s.snapDB != nil {
		return nil
	}
	if err := s.brokenErr(); err != nil {
		return err // a full disk, say: the log comes first
	}
	db, err := openSnapshots(s, s.fs.PathJoin(s.dir, snapshotsDir))
	if err != nil {
		return err
	}
	s.snapDB = db
	return nil
}

func openSnapshots(s *Store, dir string) (db *pebble.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, diskCondition(fmt.Errorf("embedded: open the snapshot table %s: %v", dir, r))
		}
	}()
	cache := pebble.NewCache(snapshotCacheSize)
	defer cache.Unref() // the database holds its own reference
	pace := newPacer(pacedSnapshotSublevels)
	db, err = pebble.Open(dir, &pebble.Options{
		FS:            pace.fs(s.fs),
		MemTableSize:  snapshotMemTableSize,
		Cache:         cache,
		DisableWAL:    true,
		Logger:        quietLogger{},
		EventListener: pace.listener(),
	})
	if err != nil {
		return nil, diskCondition(fmt.Errorf("embedded: open the snapshot table %s: %w", dir, err))
	}
	pace.opened(db)
	return db, nil
}

// snapshotOp runs op on the snapshot table, turning a panic of Pebble's
// into an error.
func (s *Store) snapshotOp(ctx context.Context, what string, op func(db *pebble.DB) error) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.use(); err != nil {
		return err
	}
	defer s.release()
	if err := s.openedSnapshots(); err != nil {
		return err
	}
	s.snapMu.RLock()
	defer s.snapMu.RUnlock()
	db := s.snapDB
	if db == nil {
		return errors.New("embedded: snapshot table: cleared meanwhile")
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("embedded: snapshot table: %s: %v", what, r)
		}
	}()
	if err := op(db); err != nil {
		return diskCondition(fmt.Errorf("embedded: snapshot table: %s: %w", what, err))
	}
	return nil
}

// writable refuses a snapshot write while the store refuses appends: the
// snapshot table lives on the same file system, and Pebble's flush on a
// file system that turned read-only waits for good (a stop's last sweep
// would never return).
func (s *Store) writable() error {
	if err := s.brokenErr(); err != nil {
		return fmt.Errorf("embedded: snapshot table: %w", err)
	}
	return nil
}

// WriteSnapshot implements events.SnapshotStore.
func (s *Store) WriteSnapshot(ctx context.Context, entries []events.SnapshotEntry) error {
	if err := s.writable(); err != nil {
		return err
	}
	return s.snapshotOp(ctx, "write", func(db *pebble.DB) error {
		b := db.NewBatch()
		defer b.Close()
		for _, e := range entries {
			if len(e.Key) == 0 {
				return errors.New("empty key")
			}
			if err := b.Set(e.Key, e.Value, nil); err != nil {
				return err
			}
		}
		return b.Commit(pebble.NoSync)
	})
}

// FlushSnapshot implements events.SnapshotStore.
func (s *Store) FlushSnapshot(ctx context.Context) error {
	if err := s.writable(); err != nil {
		return err
	}
	return s.snapshotOp(ctx, "flush", func(db *pebble.DB) error {
		done, err := db.AsyncFlush()
		if err != nil {
			return err
		}
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("flush not done: %w", ctx.Err())
		}
	})
}

// ReadSnapshot implements events.SnapshotStore.
func (s *Store) ReadSnapshot(ctx context.Context, fn func(key, value []byte) error) error {
	var fnErr error
	err := s.snapshotOp(ctx, "read", func(db *pebble.DB) error {
		it, err := db.NewIter(nil)
		if err != nil {
			return err
		}
		defer it.Close()
		for ok := it.First(); ok; ok = it.Next() {
			if err := fn(it.Key(), it.Value()); err != nil {
				fnErr = err
				return nil
			}
		}
		return it.Error()
	})
	if fnErr != nil {
		return fnErr
	}
	return err
}

var _ events.SnapshotReader = (*Store)(nil)

// ReadSnapshotKey implements events.SnapshotReader: a point read of the
// snapshot table.
func (s *Store) ReadSnapshotKey(ctx context.Context, key []byte) (value []byte, found bool, err error) {
	err = s.snapshotOp(ctx, "read key", func(db *pebble.DB) error {
		v, closer, err := db.Get(key)
		if errors.Is(err, pebble.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		value, found = append([]byte(nil), v...), true
		return closer.Close()
	})
	if err != nil {
		return nil, false, err
	}
	return value, found, nil
}

// ClearSnapshot implements events.SnapshotStore: the table's files are
// deleted, and the next use starts an empty one.
func (s *Store) ClearSnapshot(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.use(); err != nil {
		return err
	}
	defer s.release()
	if err := s.closeSnapshots(); err != nil {
		return fmt.Errorf("embedded: snapshot table: clear: %w", err)
	}
	return dropSnapshots(s)
}

// closeSnapshots closes the snapshot table if it was opened.
func (s *Store) closeSnapshots() error {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	if s.snapDB == nil {
		return nil
	}
	err := s.snapDB.Close()
	s.snapDB = nil
	return err
}

// dropSnapshots deletes the snapshot table's files: after a cut of the log
// (Options.AcceptDataLoss) they may describe events that are gone.
func dropSnapshots(s *Store) error {
	dir := s.fs.PathJoin(s.dir, snapshotsDir)
	if err := s.fs.RemoveAll(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("embedded: remove the snapshot table %s: %w", dir, err)
	}
	return nil
}
