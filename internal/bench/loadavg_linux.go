//go:build linux

package bench

import (
	"bytes"
	"os"
	"strconv"
)

// loadAverage is the machine's 1-minute load average (/proc/loadavg), 0
// when it cannot be read.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(string(f[0]), 64)
	return v
}
