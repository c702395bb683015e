package embedded

import (
	"errors"
	"fmt"
	"syscall"
)

// noSpace marks err as ErrNoSpace when the file system reported that it is
// full, keeping err's own text and chain.
func noSpace(err error) error {
	if err == nil || errors.Is(err, ErrNoSpace) || !isNoSpace(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrNoSpace, err)
}

// isNoSpace reports a full disk (or exhausted quota).
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || isOSNoSpace(err)
}
