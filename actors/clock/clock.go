// Package clock owns time for the scheduler: the Clock interface (now and
// timers) that every actor is given, the Real clock the daemon uses, the
// Virtual clock that drives simulation and tests, and the ticker actors that
// turn time into ticks for the tasks that are due.
//
// Under a Virtual clock time moves only when the actor system is quiescent:
// every counted message send calls Activity.Begin and its processing ends
// with Activity.End; goroutines that do work (handlers) are counted too, and
// wait on the clock with Sleep, which uncounts them while they wait. The
// driver (Virtual.RunUntil) waits for the count to reach zero, then jumps to
// the earliest timer. That makes a simulation deterministic.
//
// Concurrency: Real and Virtual are safe for concurrent use.
package clock

import (
	"context"
	"time"
)

// Clock is the scheduler's only source of time.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
	// Begin counts one unit of work in flight (a message sent, a goroutine
	// working); End uncounts it. The Real clock ignores both.
	Begin()
	End()
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not started; it reports whether it
	// did so.
	Stop() bool
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now in UTC.
func (Real) Now() time.Time { return time.Now().UTC() }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Begin does nothing on the wall clock.
func (Real) Begin() {}

// End does nothing on the wall clock.
func (Real) End() {}

// Sleep waits d on c, or until ctx ends (returning ctx.Err()). Under a
// Virtual clock the waiting goroutine must have been counted with Begin
// (handlers are); it is uncounted while it waits so time can move.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	woke := make(chan struct{})
	t := c.AfterFunc(d, func() {
		c.Begin() // counted for the sleeper, which wakes and goes on working
		close(woke)
	})
	c.End()
	select {
	case <-woke:
		return nil
	case <-ctx.Done():
		if t.Stop() {
			c.Begin()
		} else {
			<-woke // the timer fired and counted us already
		}
		return ctx.Err()
	}
}

// WithDeadline returns a context that ends when c reaches deadline.
func WithDeadline(parent context.Context, c Clock, deadline time.Time) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	t := c.AfterFunc(deadline.Sub(c.Now()), func() { cancel(context.DeadlineExceeded) })
	return ctx, func() {
		t.Stop()
		cancel(context.Canceled)
	}
}
