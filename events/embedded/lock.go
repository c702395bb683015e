package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// errWouldBlock is what tryLock returns when another holder has the lock.
var errWouldBlock = errors.New("lock held")

// dirLock is a held lock on a data directory.
type dirLock struct {
	f       *os.File
	created bool // this open created the lock file
}

// lockDir takes the data directory's lock file, exclusively and without
// waiting. The lock is the operating system's (flock on Unix, LockFileEx on
// Windows), so it ends with the process, however it ends.
func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockFile)
	created := true
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		created = false
		f, err = os.OpenFile(path, os.O_RDWR, 0o644)
	}
	if err != nil {
		return nil, diskCondition(fmt.Errorf("embedded: open lock file: %w", err))
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if created {
			os.Remove(path)
		}
		if errors.Is(err, errWouldBlock) {
			return nil, fmt.Errorf("%w: %s is held by another process (lock file %s)", ErrLocked, dir, path)
		}
		return nil, fmt.Errorf("embedded: lock %s: %w", path, err)
	}
	return &dirLock{f: f, created: created}, nil
}

// Close releases the lock.
func (l *dirLock) Close() error { return l.f.Close() }

// abandon releases the lock of an open that failed, and removes the lock
// file if that open created it, so a refused directory is left as it was
// found. It removes the file while still holding the lock: another process
// trying to lock meanwhile fails with ErrLocked instead of locking a file
// that is about to disappear.
func (l *dirLock) abandon() {
	if l.created {
		os.Remove(l.f.Name())
	}
	l.f.Close()
}
