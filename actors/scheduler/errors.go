package scheduler

import (
	"errors"
	"fmt"

	"github.com/cronactor/cronactor/actors/task/rules"
)

// Errors of the scheduler; test with errors.Is.
var (
	ErrTaskNotFound = errors.New("scheduler: task not found")
	// ErrInvalidConfig matches every *ConfigError: a Config that
	// Validate (and New) refuse.
	ErrInvalidConfig = errors.New("scheduler: invalid config")
	ErrNotStarted    = errors.New("scheduler: not started")
	ErrStarted       = errors.New("scheduler: already started")
	ErrUnknownKind   = errors.New("scheduler: no handler registered for kind")
	ErrTaskDeleted   = rules.ErrTaskDeleted
	// ErrVersionMismatch: a write's IfVersion is not the task's version;
	// nothing was recorded. The error is a *VersionMismatchError.
	ErrVersionMismatch = rules.ErrVersionMismatch
	// ErrInvalidSpec matches every *FieldError.
	ErrInvalidSpec = rules.ErrInvalidSpec
	// ErrCannotTrigger: Trigger of a task that is paused, finished, deleted
	// or at its bound of waiting runs; the error's text says which.
	ErrCannotTrigger = rules.ErrCannotTrigger
)

// FieldError names the field of a spec that is wrong.
type FieldError = rules.FieldError

// VersionMismatchError says which version a write expected and which the
// task is at. It matches ErrVersionMismatch.
type VersionMismatchError = rules.VersionMismatchError

// ConfigError names the Config field that is out of its limits. It matches
// ErrInvalidConfig and not ErrInvalidSpec: a FieldError is about a task's
// spec, a ConfigError about the scheduler's.
type ConfigError struct {
	Field   string // the Config field, e.g. "Workers"
	Message string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("scheduler: config: %s: %s", e.Field, e.Message)
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }
