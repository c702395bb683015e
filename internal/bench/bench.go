// Package bench holds the measurements behind `cronactor bench`: the
// embedded store's append rate next to a raw group-committed file, the live
// cron_tasks view under append load, and the scheduler end to end.
//
// Each measurement takes a Config and returns a result with JSON tags (the
// published figures) and a Text form; flags, environment and where the
// output goes stay in cmd/cronactor. Progress notes go to the Progress
// callback of each Config (nil: none). A measurement uses the real clock
// and real disks on purpose: it is run by an operator, never as a unit test.
package bench

import (
	"os"
)

// Progress receives a short note about what a measurement is doing now.
type Progress func(format string, args ...any)

func (p Progress) note(format string, args ...any) {
	if p != nil {
		p(format, args...)
	}
}

// percentile returns the p-th percentile (0..100) of sorted values.
func percentile[T any](sorted []T, p float64) T {
	var zero T
	if len(sorted) == 0 {
		return zero
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

// workDir returns the directory a benchmark writes under: dir if given
// (kept afterwards), else a new temporary one removed by cleanup.
func workDir(dir string) (base string, cleanup func(), err error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	d, err := os.MkdirTemp("", "cronactor-bench-")
	if err != nil {
		return "", nil, err
	}
	return d, func() { os.RemoveAll(d) }, nil
}
