package schedule

import "errors"

// ErrInvalid is what every rejection of a schedule wraps: test with
// errors.Is(err, ErrInvalid), or errors.As(err, **Error) for the field.
var ErrInvalid = errors.New("schedule: invalid")

// Error is a rejected schedule, naming the field of the task's schedule it
// concerns (cron, at, timezone, dst_gap, dst_overlap, start_at, end_at,
// max_runs, jitter) and, for a cron expression, the position inside it
// ("field 2 (hour): 24 is above 23").
type Error struct {
	// Field is the schedule field as the API names it; for the second and
	// later expressions of a cron list it is "cron[1]", "cron[2]", …
	Field   string
	Message string
}

func (e *Error) Error() string { return e.Field + ": " + e.Message }

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *Error) Unwrap() error { return ErrInvalid }
