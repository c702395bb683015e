//go:build !unix && !windows

package embedded

import (
	"errors"
	"os"
)

// tryLock: this platform has no advisory file lock the store knows how to
// take, so opening a data directory fails rather than risk two writers.
func tryLock(*os.File) error {
	return errors.New("embedded: no exclusive file lock on this platform")
}
