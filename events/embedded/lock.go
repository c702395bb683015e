package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// errWouldBlock is what tryLock returns when another holder has the lock.
var errWouldBlock = errors.New("lock held")

// lockDir takes the data directory's lock file, exclusively and without
// waiting. The lock is the operating system's (flock on Unix, LockFileEx on
// Windows), so it ends with the process, however it ends.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("embedded: open lock file: %w", err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, errWouldBlock) {
			return nil, fmt.Errorf("%w: %s is held by another process (lock file %s)", ErrLocked, dir, path)
		}
		return nil, fmt.Errorf("embedded: lock %s: %w", path, err)
	}
	return f, nil
}
