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
// It keeps its own done channel and answers Value from its parent, so the
// standard library treats it as a foreign context: contexts derived from it
// learn that it ended by watching Done and copy its Err, hence they end with
// context.DeadlineExceeded too.
type timerContext struct {
	parent   context.Context
	deadline time.Time
	done     chan struct{}

	mu    sync.Mutex
	err   error
	timer Timer
	stop  func() bool // stops following the parent
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
func (t *timerContext) Value(key any) any { return t.parent.Value(key) }

func (t *timerContext) String() string { return "clock.WithDeadline(" + t.deadline.String() + ")" }
