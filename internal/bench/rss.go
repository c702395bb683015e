package bench

import (
	"runtime"
	"runtime/debug"
)

// settledRSS is the resident set once the garbage is collected and the
// freed heap handed back to the OS (what an idle process settles to when
// the runtime's scavenger has run): the figure that counts what is kept,
// not what was allocated on the way. ok is false where the platform does
// not say (only Linux does, see residentBytes).
func settledRSS() (n int64, ok bool) {
	runtime.GC()
	debug.FreeOSMemory()
	return residentBytes()
}

// perTask is (after − before) / tasks, 0 when not measured.
func perTask(before, after int64, ok bool, tasks int) float64 {
	if !ok || tasks <= 0 {
		return 0
	}
	return float64(after-before) / float64(tasks)
}
