package embedded

import (
	"errors"
	"fmt"

	"github.com/cronactor/cronactor/events"
)

// probeFile is the file the store writes, syncs and removes to learn
// whether a read-only data directory is writable again.
const probeFile = "WRITE_PROBE"

// classify turns the error of a failed write into the reason appends are
// refused from now on: the condition it shows (events.ErrNoSpace,
// events.ErrReadOnly), or events.ErrWriteFailed for anything else (an I/O
// error above all: after a failed fsync the kernel may have dropped the
// pages it could not write, so nothing short of a restart, after the disk
// is checked, may append again).
func (s *Store) classify(err error) error {
	restart := "restart the process to append again"
	switch {
	case isNoSpace(err):
		return fmt.Errorf("%w: %s: appends refused until space is free again: %w", events.ErrNoSpace, s.dir, err)
	case isReadOnly(err) && !s.stuck.Load():
		return fmt.Errorf("%w: %s: appends refused until the file system is writable again: %w", events.ErrReadOnly, s.dir, err)
	case isReadOnly(err):
		return fmt.Errorf("%w: %s: appends refused, %s: %w", events.ErrReadOnly, s.dir, restart, err)
	}
	return fmt.Errorf("%w: %s: appends refused, %s: %w", events.ErrWriteFailed, s.dir, restart, err)
}

// restartNeeded reports whether the refusal err lasts until the process
// restarts: Pebble stopped (stuck), or a write failed for another reason
// than a full disk or a read-only file system.
func (s *Store) restartNeeded(err error) bool {
	return s.stuck.Load() || errors.Is(err, events.ErrWriteFailed)
}

// refuse records that appends are refused for err, and logs it once per
// condition: while the condition lasts the appends refused are only
// counted (refused), and the count is logged when it changes. Only the
// committer calls it.
func (s *Store) refuse(err error) {
	s.mu.Lock()
	prev := s.refusing
	s.refusing = err
	s.mu.Unlock()
	cond := events.Condition(err)
	if prev != nil && events.Condition(prev) == cond {
		return
	}
	restart := s.restartNeeded(err)
	attrs := []any{"condition", cond, "dir", s.dir, "restart_needed", restart, "err", err}
	if prev != nil {
		attrs = append(attrs, "previous_condition", events.Condition(prev), "refused_appends", s.refused.Swap(0))
	} else {
		s.refused.Store(0)
	}
	var msg string
	switch {
	case cond == "no_space":
		msg = "embedded: disk full: appends refused until space is free again; reads go on"
	case restart:
		msg = "embedded: appends refused until the process restarts (restart needed); reads go on"
	case cond == "read_only":
		msg = "embedded: data directory is read-only: appends refused until it is writable again; reads go on"
	default:
		msg = "embedded: appends refused; reads go on"
	}
	s.opts.Logger.Error(msg, attrs...)
}

// resume records that appends are accepted again, and logs it with the
// count of those refused meanwhile. Only the committer calls it.
func (s *Store) resume() {
	s.mu.Lock()
	prev := s.refusing
	s.refusing = nil
	s.mu.Unlock()
	if prev == nil {
		return
	}
	msg := "embedded: appends resume"
	switch events.Condition(prev) {
	case "no_space":
		msg = "embedded: space is free again: appends resume"
	case "read_only":
		msg = "embedded: data directory is writable again: appends resume"
	}
	s.opts.Logger.Info(msg, "condition", events.Condition(prev), "dir", s.dir,
		"refused_appends", s.refused.Swap(0), "head", s.Head().Commit)
}

// countRefused adds n appends refused with err to the count, when err is a
// refusal of the store rather than of the appends.
func (s *Store) countRefused(err error, n int) {
	if errors.Is(err, events.ErrUnwritable) {
		s.refused.Add(uint64(n))
	}
}

// WriteStatus implements events.WriteStatusReader. While appends are
// refused for a condition that may end (a full disk, a read-only file
// system), each call also asks the committer to check it, so a store that
// nothing appends to still recovers while its status is polled.
func (s *Store) WriteStatus() events.WriteStatus {
	s.mu.RLock()
	err := s.refusing
	s.mu.RUnlock()
	if err == nil {
		return events.WriteStatus{}
	}
	st := events.WriteStatus{Err: err, Refused: s.refused.Load(), RestartNeeded: s.restartNeeded(err)}
	if !st.RestartNeeded {
		select {
		case s.probe <- struct{}{}:
		default:
		}
	}
	return st
}

var _ events.WriteStatusReader = (*Store)(nil)

// probeWritable writes, syncs and removes a small file in the data
// directory: it fails while the file system is read-only.
func (s *Store) probeWritable() error {
	name := s.fs.PathJoin(s.dir, probeFile)
	f, err := s.fs.Create(name)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte("cronactor write probe\n"))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if rerr := s.fs.Remove(name); err == nil {
		err = rerr
	}
	return err
}
