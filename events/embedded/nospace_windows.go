//go:build windows

package embedded

import (
	"errors"

	"golang.org/x/sys/windows"
)

// isOSNoSpace: Windows reports a full disk with its own codes.
func isOSNoSpace(err error) bool {
	return errors.Is(err, windows.ERROR_DISK_FULL) || errors.Is(err, windows.ERROR_HANDLE_DISK_FULL)
}

// isOSReadOnly: Windows reports a write-protected volume with its own code.
func isOSReadOnly(err error) bool {
	return errors.Is(err, windows.ERROR_WRITE_PROTECT)
}
