package worker

import (
	"context"
	"errors"
	"sync"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/google/uuid"
)

// StopRun tells the worker executing run RunID that the task actor has
// recorded the run's forced end, with reason Reason: heartbeat_timeout when
// R16 caught a silent run, timebox when the actor's deadline timer came
// before the worker noticed the deadline (R4), replaced when another run of
// a task with overlap cancel_other asked to start. The task actor sends it,
// counted (package internal/counted), to the worker that asked to start
// the run, as soon as the forced end is durable.
//
// The worker cancels the handler's context with a *ForcedEndError as its
// cause, stops the run's heartbeats and reports nothing more for the run
// (its outcome is recorded); its slot is free once the handler has
// returned. A worker whose handler for the run has returned ignores it.
type StopRun struct {
	RunID  uuid.UUID
	Reason string
}

// ErrForcedEnd is what a handler's context was cancelled for when its run
// was forced to end by the task actor (see StopRun): context.Cause of the
// context is a *ForcedEndError, which wraps it.
var ErrForcedEnd = errors.New("worker: forced to end")

// ForcedEndError is the cause of a handler's context cancelled because its
// run was forced to end; Reason is the forced end's (events.ForcedTimebox,
// events.ForcedHeartbeat, events.ForcedReplaced). Its text reads "worker: forced to end: <reason>".
type ForcedEndError struct{ Reason string }

func (e *ForcedEndError) Error() string { return ErrForcedEnd.Error() + ": " + e.Reason }

// Unwrap returns ErrForcedEnd.
func (e *ForcedEndError) Unwrap() error { return ErrForcedEnd }

// execution is the run a worker is executing, shared by its actor (which
// stops it on StopRun) and the handler's goroutine (which marks its end).
type execution struct {
	id uuid.UUID
	c  clock.Clock
	// cancel ends the handler's context with a cause: it is the worker's
	// (Worker.stopRun), so the worker makes a new one for its next run. (A
	// handler's context kept after it returned is cancelled then; under a
	// Virtual clock, whose deadline contexts have no cause of their own,
	// context.Cause of it reads the worker's, which a later run's StopRun
	// may set.)
	cancel context.CancelCauseFunc
	beats  *beats

	mu       sync.Mutex
	returned bool   // the handler has returned
	stopped  bool   // stop has cancelled the handler's context
	reason   string // the forced end's, once stopped
}

// stop cancels the handler's context with the forced end's reason and
// stops the run's heartbeats, unless the handler has returned or was
// stopped already. Until the handler returns it counts one more unit of
// work in flight on the clock: a handler woken by the cancel (one waiting
// in clock.Sleep, say) counts itself again only once it runs, and a
// virtual clock must not move in between, or it could start the run's
// retry before the stopped handler has returned.
func (x *execution) stop(reason string) {
	x.mu.Lock()
	if x.returned || x.stopped {
		x.mu.Unlock()
		return
	}
	x.stopped, x.reason = true, reason
	x.c.Begin()
	x.mu.Unlock()
	x.beats.stop()
	x.cancel(&ForcedEndError{Reason: reason})
}

// end marks the handler returned. It reports whether it was stopped, and
// for what reason.
func (x *execution) end() (stopped bool, reason string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.returned = true
	if x.stopped {
		x.c.End() // stop's count: the handler's goroutine still counts itself
	}
	return x.stopped, x.reason
}
