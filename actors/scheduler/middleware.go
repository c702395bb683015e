package scheduler

import "github.com/cronactor/cronactor/actors/worker"

// wrappedHandlers is the handler of every registered kind wrapped with
// Config.Middleware (first outermost), as the workers call them. The
// registered handlers stay as they are for the payload checks.
func (s *Scheduler) wrappedHandlers() map[string]worker.Handler {
	if len(s.cfg.Middleware) == 0 {
		return s.handlers
	}
	out := make(map[string]worker.Handler, len(s.handlers))
	for kind, h := range s.handlers {
		out[kind] = worker.Chain(h, s.cfg.Middleware...)
	}
	return out
}
