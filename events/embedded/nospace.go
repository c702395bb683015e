package embedded

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/cronactor/cronactor/events"
)

// diskCondition marks err with the condition of the file system it reports:
// events.ErrNoSpace for a full disk, events.ErrReadOnly for a read-only file
// system, keeping err's own text and chain. Other errors are returned as
// they are.
func diskCondition(err error) error {
	switch {
	case err == nil || errors.Is(err, events.ErrUnwritable):
		return err
	case isNoSpace(err):
		return fmt.Errorf("%w: %w", events.ErrNoSpace, err)
	case isReadOnly(err):
		return fmt.Errorf("%w: %w", events.ErrReadOnly, err)
	}
	return err
}

// isNoSpace reports a full disk (or exhausted quota).
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || isOSNoSpace(err)
}

// isReadOnly reports a file system that refuses writes as read-only: one
// remounted read-only by the kernel after a disk error (ext4
// errors=remount-ro), or by an operator.
func isReadOnly(err error) bool {
	return errors.Is(err, syscall.EROFS) || isOSReadOnly(err)
}
