package scheduler

import "github.com/cronactor/cronactor/actors/worker"

// wrappedHandlers is the handler of every registered kind wrapped with
// Config.Middleware (first outermost), as the workers call them, with
// worker.Tracing(Config.TracerProvider) first when TracerProvider is set and
// the chain holds no Tracing of its own (worker.WithTracing). The
// registered handlers stay as they are for the payload checks.
func (s *Scheduler) wrappedHandlers() map[string]worker.Handler {
	mws := worker.WithTracing(s.cfg.TracerProvider, s.cfg.Middleware)
	if len(mws) == 0 {
		return s.handlers
	}
	out := make(map[string]worker.Handler, len(s.handlers))
	for kind, h := range s.handlers {
		out[kind] = worker.Chain(h, mws...)
	}
	return out
}
