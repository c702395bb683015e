package clock

import (
	"context"
	"sync"
	"time"
)

// timerContext is a context that ends at an instant of a clock that is not
// the wall clock. context.WithDeadline cannot serve: it measures the
// deadline with the wall clock.
//
// It keeps its own done channel and answers Value from its parent (but for
// its own key, see sleeper), so the standard library treats it as a foreign
// context: contexts derived from it learn that it ended by watching Done
// and copy its Err, hence they end with context.DeadlineExceeded too.
type timerContext struct {
	parent   context.Context
	deadline time.Time
	done     chan struct{}

	mu       sync.Mutex
	err      error
	timer    Timer
	stop     func() bool // stops following the parent
	sleepers map[*sleeper]struct{}
}

// timerContextKey finds, through Value, the nearest timerContext a context
// is or derives from.
type timerContextKey struct{}

// sleeper is a goroutine in Sleep on a context derived from timerContexts.
// Woken by its context, it would be counted in flight again only once it
// runs, and meanwhile the clock could move on: a Virtual clock ends a
// timerContext inside Step, and Step returns as soon as its timer function
// has. So the first of those contexts to end counts the sleeper (Begin on
// its clock) as it ends.
type sleeper struct {
	c       Clock
	in      []*timerContext
	mu      sync.Mutex
	counted bool // a context's end counted it
	awake   bool // it has left Sleep
}

// watch registers a sleeper on c with every timerContext ctx derives from.
// The caller is still counted: one that has ended already counts the
// sleeper at once.
func watch(ctx context.Context, c Clock) *sleeper {
	s := &sleeper{c: c}
	t, _ := ctx.Value(timerContextKey{}).(*timerContext)
	for ; t != nil; t, _ = t.parent.Value(timerContextKey{}).(*timerContext) {
		t.mu.Lock()
		if t.err != nil {
			t.mu.Unlock()
			s.count()
			break
		}
		if t.sleepers == nil {
			t.sleepers = map[*sleeper]struct{}{}
		}
		t.sleepers[s] = struct{}{}
		t.mu.Unlock()
		s.in = append(s.in, t)
	}
	return s
}

func (s *sleeper) count() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.counted && !s.awake {
		s.counted = true
		s.c.Begin()
	}
}

// wake unregisters the sleeper; it reports whether a context's end counted
// it.
func (s *sleeper) wake() bool {
	s.mu.Lock()
	s.awake = true
	counted := s.counted
	s.mu.Unlock()
	for _, t := range s.in {
		t.mu.Lock()
		delete(t.sleepers, s)
		t.mu.Unlock()
	}
	return counted
}

func newTimerContext(parent context.Context, c Clock, deadline time.Time) (context.Context, context.CancelFunc) {
	t := &timerContext{parent: parent, deadline: deadline, done: make(chan struct{})}
	if d, ok := parent.Deadline(); ok && d.Before(deadline) {
		t.deadline = d
	}
	if err := parent.Err(); err != nil {
		t.end(err)
		return t, func() {}
	}
	t.mu.Lock()
	t.stop = context.AfterFunc(parent, func() { t.end(parent.Err()) })
	t.timer = c.AfterFunc(deadline.Sub(c.Now()), func() { t.end(context.DeadlineExceeded) })
	t.mu.Unlock()
	return t, func() { t.end(context.Canceled) }
}

// end ends the context with err, unless it has ended already.
func (t *timerContext) end(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return
	}
	t.err = err
	for s := range t.sleepers {
		s.count()
	}
	t.sleepers = nil
	close(t.done)
	if t.timer != nil {
		t.timer.Stop()
	}
	if t.stop != nil {
		t.stop()
	}
}

// Deadline implements context.Context.
func (t *timerContext) Deadline() (time.Time, bool) { return t.deadline, true }

// Done implements context.Context.
func (t *timerContext) Done() <-chan struct{} { return t.done }

// Err implements context.Context.
func (t *timerContext) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// Value implements context.Context.
func (t *timerContext) Value(key any) any {
	if key == (timerContextKey{}) {
		return t
	}
	return t.parent.Value(key)
}

func (t *timerContext) String() string { return "clock.WithDeadline(" + t.deadline.String() + ")" }
