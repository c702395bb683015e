package scheduler

import (
	"errors"

	"github.com/cronactor/cronactor/actors/task/rules"
)

// Errors of the scheduler; test with errors.Is.
var (
	ErrTaskNotFound = errors.New("scheduler: task not found")
	ErrNotStarted   = errors.New("scheduler: not started")
	ErrStarted      = errors.New("scheduler: already started")
	ErrUnknownKind  = errors.New("scheduler: no handler registered for kind")
	ErrTaskDeleted  = rules.ErrTaskDeleted
	// ErrVersionMismatch: a write's IfVersion is not the task's version;
	// nothing was recorded. The error is a *VersionMismatchError.
	ErrVersionMismatch = rules.ErrVersionMismatch
	// ErrInvalidSpec matches every *FieldError.
	ErrInvalidSpec = rules.ErrInvalidSpec
	// ErrCannotTrigger: Trigger of a task that is paused, finished, deleted
	// or at its bound of waiting runs; the error's text says which.
	ErrCannotTrigger = rules.ErrCannotTrigger
	// ErrCannotBackfill: Backfill of a task that is paused, finished or
	// deleted; the error's text says which.
	ErrCannotBackfill = rules.ErrCannotBackfill
)

// FieldError names the field of a spec that is wrong.
type FieldError = rules.FieldError

// VersionMismatchError says which version a write expected and which the
// task is at. It matches ErrVersionMismatch.
type VersionMismatchError = rules.VersionMismatchError
