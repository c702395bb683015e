package events

import "errors"

// Conditions under which a store refuses every append, whatever the append.
// Each matches ErrUnwritable with errors.Is; a backend wraps its own
// condition in the one that names it (the embedded store wraps ENOSPC in
// ErrNoSpace and EROFS in ErrReadOnly), so callers need no backend's
// errors to tell them apart.
var (
	// ErrUnwritable: the store refuses appends for a condition of its own
	// (its disk), not because of the append. Reads go on.
	ErrUnwritable = errors.New("events: store refuses appends")
	// ErrNoSpace: the store's disk is full.
	ErrNoSpace error = &unwritable{"events: no space left on device"}
	// ErrReadOnly: the store's data directory is on a file system that
	// turned read-only (as ext4 errors=remount-ro does after a disk error).
	ErrReadOnly error = &unwritable{"events: data directory is read-only"}
	// ErrWriteFailed: a write failed in a way the store cannot recover
	// from by itself (an I/O error, or the storage engine stopped); appends
	// are refused until the process restarts.
	ErrWriteFailed error = &unwritable{"events: store write failed"}
	// ErrUnreachable: the store's server (a networked backend such as
	// EventStoreDB) cannot be reached; the store reconnects by itself and
	// accepts appends again once it answers.
	ErrUnreachable error = &unwritable{"events: store server unreachable"}
)

// unwritable is a condition that matches ErrUnwritable.
type unwritable struct{ msg string }

func (e *unwritable) Error() string        { return e.msg }
func (e *unwritable) Is(target error) bool { return target == ErrUnwritable }

// WriteStatus is what a store says about its appends (WriteStatusReader).
type WriteStatus struct {
	// Err is nil while appends are accepted; otherwise why they are refused,
	// matching ErrUnwritable and the condition (ErrNoSpace, ErrReadOnly,
	// ErrWriteFailed).
	Err error
	// Refused counts the appends refused since the condition began.
	Refused uint64
	// RestartNeeded is set when only a restart of the process can make the
	// store accept appends again; otherwise it resumes by itself once the
	// condition ends.
	RestartNeeded bool
}

// Condition names Err's condition in snake_case: "no_space", "read_only",
// "write_failed", "unreachable", "unwritable" (another refusal), or "" when
// appends are accepted.
func (w WriteStatus) Condition() string { return Condition(w.Err) }

// Condition names the condition err matches, as WriteStatus.Condition does:
// "" for an error that is not a refusal of the store.
func Condition(err error) string {
	switch {
	case err == nil || !errors.Is(err, ErrUnwritable):
		return ""
	case errors.Is(err, ErrNoSpace):
		return "no_space"
	case errors.Is(err, ErrReadOnly):
		return "read_only"
	case errors.Is(err, ErrWriteFailed):
		return "write_failed"
	case errors.Is(err, ErrUnreachable):
		return "unreachable"
	}
	return "unwritable"
}

// WriteStatusReader is implemented by stores that know whether they accept
// appends (the embedded store does). Callers test for it with a type
// assertion. WriteStatus does not block; a store that refuses appends may
// use the call to check, in the background, whether its condition has
// ended, so that a caller polling it (a health check) sees the store
// recover even while nothing appends.
type WriteStatusReader interface {
	WriteStatus() WriteStatus
}
