//go:build !windows

package embedded

// isOSNoSpace: outside Windows, ENOSPC and EDQUOT say it all.
func isOSNoSpace(error) bool { return false }

// isOSReadOnly: outside Windows, EROFS says it all.
func isOSReadOnly(error) bool { return false }
