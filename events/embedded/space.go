package embedded

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
	"github.com/cronactor/cronactor/events"
)

// ready tells the committer whether it may write a group: not after a
// failure that needs a restart, not while the file system is read-only, and
// not while free space is below MinFreeBytes. When a full disk or a
// read-only file system had stopped the database and the condition has
// ended, it reopens the database first. Only the committer calls it.
func (s *Store) ready() error {
	broken := s.brokenErr()
	if broken != nil && (s.stuck.Load() || errors.Is(broken, events.ErrWriteFailed)) {
		return broken
	}
	if broken != nil && errors.Is(broken, events.ErrReadOnly) {
		if err := s.probeWritable(); err != nil {
			return broken
		}
	}
	if err := s.checkSpace(); err != nil {
		s.refuse(err)
		return err
	}
	if broken != nil {
		if err := s.reopen(); err != nil {
			return err
		}
	}
	s.resume()
	return nil
}

// checkSpace fails with ErrNoSpace when the file system holding the store
// has less than MinFreeBytes free. A file system that cannot say (the
// in-memory one) passes; a failed write still reports a full disk.
func (s *Store) checkSpace() error {
	u, err := s.fs.GetDiskUsage(s.dbDir)
	if err != nil {
		return nil
	}
	if u.AvailBytes < s.opts.MinFreeBytes {
		return fmt.Errorf("%w: %s has %d bytes free, appends stop below %d (Options.MinFreeBytes): %w",
			ErrNoSpace, s.dir, u.AvailBytes, s.opts.MinFreeBytes, syscall.ENOSPC)
	}
	return nil
}

// reopen replaces a database that a failed write stopped (Pebble's log
// writer keeps its first error for good) by a fresh open of the same files.
// Readers wait for it (dbMu); appends keep queueing. Events of a group whose sync failed may
// turn out to be in the log after all: their appends were answered with an
// error, as an unknown outcome; a retry with the same event IDs is
// recognised. If the database cannot be opened for writing, it is opened
// read-only so reads go on, and the store stays refusing appends.
func (s *Store) reopen() error {
	select {
	case <-s.done: // closing: Close closes the database
		return s.brokenErr()
	default:
	}
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	if s.db != nil {
		closePebble(s.db)
		s.db = nil
	}
	damage, err := checkNewestWAL(s.fs, s.dbDir)
	if err == nil && damage != nil {
		err = damage
	}
	var db *pebble.DB
	if err == nil {
		db, err = openPebble(s.fs, s.dir, s.opts, true)
	}
	if err != nil {
		if ro, rerr := openPebbleReadOnly(s.fs, s.dir); rerr == nil {
			s.db = ro
		}
		return diskCondition(err)
	}
	s.db = db
	head, err := s.lastPosition()
	if err != nil {
		db.Close()
		s.db = nil
		s.mu.Lock()
		s.broken = fmt.Errorf("%w: %s: reopened database unreadable: %w", events.ErrWriteFailed, s.dir, err)
		err = s.broken
		s.mu.Unlock()
		s.refuse(err)
		return err
	}
	s.next, s.heads = head, newStreamHeads()
	s.mu.Lock()
	s.broken = nil
	s.tail.reset() // what the failed database wrote may follow it
	if head > s.head {
		s.head = head
		close(s.notify)
		s.notify = make(chan struct{})
	}
	s.mu.Unlock()
	return nil
}

// closePebble closes a database a failed write stopped; its error (the
// failure itself, again) and any panic are of no further use.
func closePebble(db *pebble.DB) {
	defer func() { _ = recover() }()
	_ = db.Close()
}

func openPebbleReadOnly(fs vfs.FS, dir string) (db *pebble.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, fmt.Errorf("embedded: open %s read-only: %v", dir, r)
		}
	}()
	return pebble.Open(fs.PathJoin(dir, eventsDir), &pebble.Options{FS: fs, Logger: quietLogger{}, ReadOnly: true})
}
