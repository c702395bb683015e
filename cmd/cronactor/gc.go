package main

import "runtime/debug"

// recoveryGCPercent is the garbage collector's target the daemon sets
// while a scheduler's Start rebuilds its tasks (scheduler.Config.RecoveryGC):
// recovery builds a heap that only grows out of short-lived decoded events,
// and at the default target the collector marks it again and again
// (docs/performance.md, "Recovery and the GC target"). The library leaves
// the process's settings alone; this is the daemon's choice.
const recoveryGCPercent = 400

// raiseGCForRecovery raises the GC target to recoveryGCPercent (unless the
// process set a higher one, or turned the collector off) and returns what
// restores it.
func raiseGCForRecovery() (restore func()) {
	prev := debug.SetGCPercent(recoveryGCPercent)
	if prev < 0 || prev > recoveryGCPercent {
		debug.SetGCPercent(prev)
		return nil
	}
	return func() { debug.SetGCPercent(prev) }
}
