//go:build !linux

package chaos

import (
	"errors"
	"os"
)

// fillTo needs Linux's statfs and fallocate; the disk-full case mounts a
// tmpfs first, so it never gets here elsewhere.
func fillTo(dir, file string, leave int64) error {
	os.Remove(file)
	return errors.New("chaos: filling a file system is implemented on Linux only")
}
