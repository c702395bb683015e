package scheduler

// SetStopHook sets the function Stop calls once no run may start any more.
func SetStopHook(f func()) { stopHook = f }
