package worker

// Middleware wraps a Handler: logging, metrics, tenancy, a recover that
// turns a panic into a failure of its own, the handler's span (Tracing). It gets the handler of one kind
// and returns the handler the workers call instead; what it does before and
// after calling next.Handle runs on the run's goroutine, inside the run's
// timebox, and what it returns is the run's outcome.
//
// The scheduler wraps every registered handler with its
// Config.Middleware once, at Start. Payload checks (PayloadValidator) are
// asked of the registered handler, not of the wrapped one, so a middleware
// need not pass them on.
type Middleware func(next Handler) Handler

// Chain wraps h with mws, the first outermost: Chain(h, a, b) is a(b(h)),
// so a sees every run first and its result last. Nil middlewares are
// skipped.
func Chain(h Handler, mws ...Middleware) Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			h = mws[i](h)
		}
	}
	return h
}
