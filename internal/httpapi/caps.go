package httpapi

import (
	"fmt"
	"net/http"
	"sync/atomic"
)

// Caps per endpoint kind: the requests that hold something for long (an
// event stream holds a store subscription for as long as the client stays;
// a view as of a past point opens a view and folds the log into it) are
// counted, and one past the bound is refused at once with 429 Too Many
// Requests, a Retry-After, and an error that says the bound and which
// serve flag raises it, instead of queueing without end.

// Defaults of the caps (Config.MaxAsOf, StreamConfig.MaxSubscribers).
const (
	DefaultMaxSubscribers = 256
	DefaultMaxAsOf        = 8
)

// limiter counts requests of one kind in flight against a bound.
type limiter struct {
	max int64 // <= 0: no bound
	n   atomic.Int64
}

func newLimiter(configured, def int) *limiter {
	l := &limiter{max: int64(configured)}
	if configured == 0 {
		l.max = int64(def)
	}
	return l
}

// acquire counts one more request, false (and nothing counted) at the
// bound.
func (l *limiter) acquire() bool {
	if l.max <= 0 {
		l.n.Add(1)
		return true
	}
	for {
		n := l.n.Load()
		if n >= l.max {
			return false
		}
		if l.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (l *limiter) release() { l.n.Add(-1) }

// tooMany answers a request refused by l.
func (a *api) tooMany(w http.ResponseWriter, l *limiter, field string) {
	what, flag := "event-stream subscribers (GET /v1/events/stream)", "--max-stream-clients"
	if l == a.asOfs {
		what, flag = "requests with as_of (views of the past)", "--max-as-of"
	}
	w.Header().Set("Retry-After", "1")
	writeErr(w, http.StatusTooManyRequests, field,
		fmt.Sprintf("too many %s at once: at most %d; try again later, or raise the bound with cronactor serve %s", what, l.max, flag))
}
