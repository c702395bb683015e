package rules

import (
	"errors"
	"fmt"
)

// Rejections. Decide returns them (wrapped with context) when a command does
// not apply to the state; test with errors.Is.
var (
	ErrNotCreated     = errors.New("rules: task does not exist")
	ErrAlreadyExists  = errors.New("rules: task already exists")
	ErrTaskDeleted    = errors.New("rules: task is deleted")
	ErrUnknownRun     = errors.New("rules: no such open run")
	ErrRunNotWaiting  = errors.New("rules: run already started")
	ErrRunNotStarted  = errors.New("rules: run has not started")
	ErrDeadlineNotDue = errors.New("rules: run's deadline has not passed")
	// ErrHeartbeatNotDue: a forced end for want of heartbeats (R16) of a
	// run that heartbeated within its task's heartbeat_timeout, or of a
	// task without one.
	ErrHeartbeatNotDue  = errors.New("rules: run's heartbeat_timeout has not passed")
	ErrInvalidSpec      = errors.New("rules: invalid task spec")
	ErrUnknownCommand   = errors.New("rules: unknown command")
	ErrEmptyCheckpoint  = errors.New("rules: checkpoint is empty")
	ErrUnknownForceKind = errors.New("rules: unknown forced-end reason")
	// ErrVersionMismatch: a command's expected version is not the task's
	// version (a stale If-Match); nothing is recorded.
	ErrVersionMismatch = errors.New("rules: task version does not match the expected one")
	// ErrCannotTrigger: a manual trigger (R15) of a task that is paused,
	// finished or deleted; the error's text says which.
	ErrCannotTrigger = errors.New("rules: the task cannot be triggered")
	// ErrCannotBackfill: a backfill (DESIGN §8.4) of a task that is paused,
	// finished or deleted; the error's text says which.
	ErrCannotBackfill = errors.New("rules: the task cannot be backfilled")
)

// VersionMismatchError is the rejection of a command whose IfVersion is not
// the task's version. It matches ErrVersionMismatch.
type VersionMismatchError struct {
	Expected, Actual uint64
}

func (e *VersionMismatchError) Error() string {
	return fmt.Sprintf("rules: the task is at version %d, not the expected %d", e.Actual, e.Expected)
}

// Is makes errors.Is(err, ErrVersionMismatch) true.
func (e *VersionMismatchError) Is(target error) bool { return target == ErrVersionMismatch }

// FieldError names the spec field a value is wrong for. It matches
// ErrInvalidSpec.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return fmt.Sprintf("rules: %s: %s", e.Field, e.Message) }

// Is makes errors.Is(err, ErrInvalidSpec) true.
func (e *FieldError) Is(target error) bool { return target == ErrInvalidSpec }
