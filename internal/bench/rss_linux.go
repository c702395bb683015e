//go:build linux

package bench

import (
	"bytes"
	"os"
	"strconv"
)

// residentBytes is the process's resident set now: the second field of
// /proc/self/statm (pages) times the page size. ok is false when it cannot
// be read.
func residentBytes() (n int64, ok bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseInt(string(f[1]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * int64(os.Getpagesize()), true
}
