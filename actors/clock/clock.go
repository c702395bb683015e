// Package clock owns time for the scheduler: the Clock interface (now and
// timers) that every component is given, the Real clock the daemon uses, and
// the Virtual clock that drives simulation and tests. It imports nothing but
// the standard library, so any package may take a Clock, projections
// included (see docs/architecture.md).
//
// Under a Virtual clock time moves only when nothing is in flight: every
// unit of work — a message sent between actors (package internal/counted
// does the counting), a goroutine running a handler — is counted with
// Clock.Begin and uncounted with Clock.End; a goroutine that waits on the
// clock uses Sleep, which uncounts it while it waits. The driver
// (Virtual.RunUntil) waits for the count to reach zero, then jumps to the
// earliest timer. That makes a simulation deterministic. Virtual.Freeze
// moves time on without firing timers, as a process frozen for a while
// sees it: its timers then fire late.
//
// WithDeadline gives a context that ends at an instant of the clock, with
// the standard library's contract: Deadline reports the instant and Err is
// context.DeadlineExceeded once it has passed.
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
// (handlers are); it is uncounted while it waits so time can move, and
// counted again from the instant it is woken — by its timer, or by a
// context of WithDeadline it derives from ending — not from the moment it
// happens to run again.
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
	s := watch(ctx, c) // a context ending on the clock counts us as it ends
	c.End()
	select {
	case <-woke:
		if s.wake() {
			c.End() // counted twice: by the timer and by the context
		}
		return nil
	case <-ctx.Done():
		counted := s.wake()
		if t.Stop() {
			if !counted {
				c.Begin()
			}
		} else {
			<-woke // the timer fired and counted us already
			if counted {
				c.End()
			}
		}
		return ctx.Err()
	}
}

// WithDeadline returns a context that ends when c reaches deadline (or
// parent ends, or cancel is called). Its Deadline reports deadline (or the
// parent's, when earlier) and once the deadline has passed its Err is
// context.DeadlineExceeded — under every clock. On the Real clock it is
// context.WithDeadline itself.
func WithDeadline(parent context.Context, c Clock, deadline time.Time) (context.Context, context.CancelFunc) {
	switch c.(type) {
	case Real, *Real:
		return context.WithDeadline(parent, deadline)
	}
	return newTimerContext(parent, c, deadline)
}
