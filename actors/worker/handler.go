package worker

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/google/uuid"
)

// Run is what a handler gets for one granted run.
type Run struct {
	TaskID   uuid.UUID
	TaskName string
	Owner    string
	Kind     string
	RunID    uuid.UUID
	// Number counts the task's runs from 1.
	Number  int
	Payload json.RawMessage
	// Checkpoint is what the previous run saved (R5); nil on the first run.
	Checkpoint json.RawMessage
	// Deadline is start + timebox; the handler's context ends then (R4).
	Deadline time.Time
	// Attempt is 1 for a slot's first try, n for its (n-1)th retry (R13);
	// RetryOf is the ID of the failed run it retries (uuid.Nil on a first
	// attempt). Trigger is "manual" for a manually triggered run (R15).
	Attempt int
	RetryOf uuid.UUID
	Trigger string

	saver checkpointSaver // the worker's run (handling), or NewRun's function
	beats *beats
}

// checkpointSaver records a run's checkpoint (Run.SaveCheckpoint).
type checkpointSaver interface {
	saveCheckpoint(ctx context.Context, checkpoint json.RawMessage) error
}

// saveFunc is NewRun's save as a checkpointSaver.
type saveFunc func(ctx context.Context, checkpoint json.RawMessage) error

func (f saveFunc) saveCheckpoint(ctx context.Context, cp json.RawMessage) error { return f(ctx, cp) }

// ErrNoSaver is returned by SaveCheckpoint on a Run built without a saver.
var ErrNoSaver = errors.New("worker: run has no checkpoint saver")

// NewRun builds a Run whose SaveCheckpoint calls save. The worker uses it;
// tests of handlers may too.
func NewRun(r Run, save func(ctx context.Context, checkpoint json.RawMessage) error) *Run {
	if save != nil {
		r.saver = saveFunc(save)
	}
	return &r
}

// SaveCheckpoint durably records progress so that, should the run be forced
// to end, the next run resumes from here (R5). It returns once recorded.
func (r *Run) SaveCheckpoint(ctx context.Context, checkpoint json.RawMessage) error {
	if r.saver == nil {
		return ErrNoSaver
	}
	return r.saver.saveCheckpoint(ctx, checkpoint)
}

// Heartbeat tells the scheduler the run is alive (R16): a task with a
// heartbeat_timeout forces a run to end when it has not heartbeated (or
// saved a checkpoint) for that long. It does not block and is cheap
// enough to call in a loop: a call less than HeartbeatGap after the last
// heartbeat sent (the run's start counts as one) sends nothing. Calls
// after the handler returned send nothing. On a Run built without the
// worker it does nothing.
func (r *Run) Heartbeat() {
	if r.beats != nil {
		r.beats.beat()
	}
}

// KeepAlive heartbeats for the run until stop is called (or the handler
// returns), every third of the task's heartbeat_timeout (every
// KeepAliveEvery at most, and when the task has none), on the scheduler's
// clock. A handler that waits on something it trusts to end — a request in
// flight, a child process — calls it around the wait:
//
//	stop := run.KeepAlive()
//	defer stop()
//
// On a Run built without the worker it does nothing.
func (r *Run) KeepAlive() (stop func()) {
	if r.beats == nil {
		return func() {}
	}
	return r.beats.keepAlive()
}

// HeartbeatTo makes r's heartbeats (Heartbeat, KeepAlive) call send,
// spaced on c as the worker spaces a run's whose task has heartbeat_timeout
// timeout (0: none); the moment of the call counts as the first. The worker
// uses it; tests of handlers may too. It returns r.
func (r *Run) HeartbeatTo(c clock.Clock, timeout time.Duration, send func()) *Run {
	r.beats = newBeats(c, timeout, send)
	return r
}

// PermanentError marks a handler's error as not retryable (R13): the run
// fails and no retry is made, whatever the task's retry policy.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }

// Unwrap returns the marked error.
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent marks err as not retryable; Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// IsPermanent reports whether err, or an error it wraps, was marked with
// Permanent.
func IsPermanent(err error) bool {
	var p *PermanentError
	return errors.As(err, &p)
}

// Handler executes runs of one kind. Handle must return when ctx ends (the
// run's deadline, its forced end by the task actor — then
// context.Cause(ctx) is a *ForcedEndError naming the reason — or
// shutdown). The returned checkpoint (may be nil: keep the
// last saved one) is handed to the next run; a non-nil error records
// RunFailed. A panic is recorded as RunFailed with the panic message.
type Handler interface {
	Handle(ctx context.Context, run *Run) (checkpoint json.RawMessage, err error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, run *Run) (json.RawMessage, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, run *Run) (json.RawMessage, error) {
	return f(ctx, run)
}
