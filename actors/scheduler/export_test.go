package scheduler

// SetStopHook sets the function s.Stop calls once no run may start any
// more. Per scheduler: tests running at once never see each other's hook.
func SetStopHook(s *Scheduler, f func()) { s.stopHook = f }
