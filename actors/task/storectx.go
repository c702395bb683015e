package task

import (
	"context"
	"sync"
	"time"
)

// storeDeadline is the context of one store call made for a message that
// carries no context of its own (a tick, a deadline, a worker's ask): it
// ends at its deadline as context.WithTimeout's does, but arms a timer only
// once the store asks for Done. A store that only checks Err (the embedded
// store's reads, and its appends while its queue has room) costs no timer,
// which context.WithTimeout would arm and stop for every call of every run.
type storeDeadline struct {
	parent   context.Context // never ends and has no deadline
	deadline time.Time

	mu    sync.Mutex
	err   error
	done  chan struct{} // made by the first Done
	timer *time.Timer   // armed by the first Done
	// use counts the resets (a flight's context serves each of its
	// appends): a timer armed in an earlier use ends nothing.
	use uint64
}

// storeCtx bounds one store call by Config.StoreTimeout (wall clock)
// within parent.
func (a *Actor) storeCtx(parent context.Context) (context.Context, context.CancelFunc) {
	if _, ok := parent.Deadline(); !ok && parent.Done() == nil {
		c := &storeDeadline{parent: parent, deadline: time.Now().Add(a.cfg.StoreTimeout)}
		return c, c.cancel
	}
	return context.WithTimeout(parent, a.cfg.StoreTimeout)
}

// appendCtx bounds f's append by Config.StoreTimeout within f.cctx, as
// storeCtx does, in the context f keeps for its appends (flights are
// reused, so an append allocates no context in the common case).
func (a *Actor) appendCtx(f *flight) (context.Context, context.CancelFunc) {
	if _, ok := f.cctx.Deadline(); !ok && f.cctx.Done() == nil {
		f.sd.reset(f.cctx, time.Now().Add(a.cfg.StoreTimeout))
		return f.sd, f.sdCancel
	}
	return context.WithTimeout(f.cctx, a.cfg.StoreTimeout)
}

// reset makes c a context ending at deadline within parent, for a new use:
// whatever the last use armed ended with its cancel, and its timer, should
// it fire late, no longer counts.
func (c *storeDeadline) reset(parent context.Context, deadline time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.parent, c.deadline, c.err, c.done, c.timer = parent, deadline, nil, nil, nil
	c.use++
}

// Deadline implements context.Context.
func (c *storeDeadline) Deadline() (time.Time, bool) { return c.deadline, true }

// Value implements context.Context.
func (c *storeDeadline) Value(key any) any { return c.parent.Value(key) }

// Err implements context.Context.
func (c *storeDeadline) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && !time.Now().Before(c.deadline) {
		c.end(context.DeadlineExceeded)
	}
	return c.err
}

// Done implements context.Context.
func (c *storeDeadline) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		} else {
			use := c.use
			c.timer = time.AfterFunc(time.Until(c.deadline), func() { c.expire(use) })
		}
	}
	return c.done
}

// expire is the timer of use: it ends the context at its deadline unless
// the context was reset since.
func (c *storeDeadline) expire(use uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.use == use {
		c.end(context.DeadlineExceeded)
	}
}

func (c *storeDeadline) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.end(context.Canceled)
}

// end ends the context with err unless it has ended; c.mu is held.
func (c *storeDeadline) end(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
	if c.timer != nil {
		c.timer.Stop()
	}
}

func (c *storeDeadline) String() string { return "task.storeCtx(" + c.deadline.String() + ")" }
