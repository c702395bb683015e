package history

import (
	"fmt"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/taskstate"
)

// A page of a long task stream can be folded from the middle without an
// exact starting point (a Mark, see mark.go): a reader that shows versions
// [lo, hi] reads the stream's first event (its TaskCreated) and the
// Lookback events before lo, seeds a Tracker with the first (Seed) and
// folds the look-back and the page. The cost is one point read and
// Lookback + page events, whatever the stream's length; projections/audit
// does this only for a reader that keeps no Marks and bounds what it
// folds (the CLI), and says the page is not exact.
//
// What the rows of the page say is then exact when the look-back holds the
// events that set each field the rows show: nextRun is set by every
// scheduled enqueue (and SlotsMissed, TaskUpdated, TaskResumed), lastRun
// by every scheduled start, a run's attempt and trigger by its enqueue, the
// waiting runs by their enqueues and starts. The status is inferred from
// the events read (a scheduled enqueue means active, a resume means it was
// paused, a pause or finish that it was active). What the look-back cannot
// show comes from the TaskCreated: the spec (interval, tolerance, timebox,
// schedule) of a task last updated more than Lookback events before the
// page, and the incarnation of a task created again that long before. See
// docs/projections.md ("Paged audit") for why, and what it costs.

// Lookback is how many events before a page its readers fold to learn the
// task's state at the page's start (see above).
const Lookback = 500

// Seed prepares t to fold a task stream from the middle: created is the
// stream's first event (its TaskCreated, version 0), rest the events t will
// be given next, in stream order, rest[0] past version 0. The task's state
// starts as the TaskCreated leaves it, with the status the events of rest
// show it had (see above). Seed adds no row.
func (t *Tracker) Seed(created events.Recorded, rest []events.Recorded) error {
	if _, err := t.Apply(created); err != nil {
		return err
	}
	id, err := events.TaskIDFromStream(created.Stream)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	st := t.tasks[id]
	if st == nil {
		return fmt.Errorf("%w: %s@%d is a %s", ErrUnknownTask, created.Stream, created.Version, created.Type)
	}
	st.Status = seedStatus(rest)
	return nil
}

// seedStatus is the status a task had before recs, as the first of them
// that says tells.
func seedStatus(recs []events.Recorded) taskstate.Status {
	for _, r := range recs {
		switch r.Type {
		case "TaskResumed":
			return taskstate.StatusPaused
		case "TaskPaused", "TaskFinished", "SlotsMissed", "TaskCreated":
			return taskstate.StatusActive
		case "RunEnqueued":
			ev, err := events.Decode(r)
			if err != nil {
				continue
			}
			if e, ok := ev.(events.RunEnqueued); ok && e.RetryOf == nil && e.Trigger == "" {
				return taskstate.StatusActive // a scheduled run: only an active task makes one
			}
		}
	}
	return taskstate.StatusActive
}

// RowsFrom folds recs, consecutive events of one task stream, and returns
// the rows of recs[from:] (the events before are the look-back). When recs
// do not start at version 0, the fold starts from created, the stream's
// TaskCreated, as Seed says.
func RowsFrom(created events.Recorded, recs []events.Recorded, from int) ([]Row, error) {
	var t Tracker
	if len(recs) > 0 && recs[0].Version > 0 {
		if err := t.Seed(created, recs); err != nil {
			return nil, err
		}
	}
	out := make([]Row, 0, max(len(recs)-from, 0))
	for i, r := range recs {
		row, err := t.Apply(r)
		if err != nil {
			return out, err
		}
		if i >= from {
			out = append(out, row)
		}
	}
	return out, nil
}
