package history

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// TimelineEntry is one moment of a timeline of several tasks: a recorded
// event, or (Tick) a tick that enqueued nothing for the task. A tick's
// Record, when set, is what the tick recorded instead of an enqueue (a
// SlotsMissed, R14); it is folded and shown as a tick row.
type TimelineEntry struct {
	At     time.Time
	TaskID uuid.UUID
	Tick   bool
	Record events.Recorded
}

// WriteTimeline renders entries, already in time order, as the table of
// the worked example in docs/lifecycle.md (format "table") or as JSON lines ("json"), with times relative to
// start. Checkpoint saves are left out, and an error's detail is cut to its
// first line (a panic's stack trace differs between builds). A table of
// several tasks has a Task column (see WriteTimelineWith). It is what
// `cronactor simulate` prints.
func WriteTimeline(w io.Writer, entries []TimelineEntry, start time.Time, format string) error {
	return WriteTimelineAs(w, entries, Relative(start), format)
}

// WriteTimelineAs is WriteTimeline with times rendered by tf: Absolute for
// a simulation whose scenario gives its start instant.
func WriteTimelineAs(w io.Writer, entries []TimelineEntry, tf TimeFormat, format string) error {
	return WriteTimelineWith(w, entries, tf, format, TimelineOptions{})
}

// TimelineOptions choose what a timeline shows beyond its published form.
type TimelineOptions struct {
	// HideIdle leaves out the ticks that found nothing to do: the plain
	// "Cron executes" rows and their "Tick" lines (`cronactor simulate
	// --hide-idle`). A tick that decided something stays: one that found
	// a slot missed and skipped it (R14) or the task at its bound of
	// waiting runs (R18).
	HideIdle bool
}

// WriteTimelineWith is WriteTimelineAs with options. A table of several
// tasks gains a Task column after the time, so the rows of each task can
// be told apart and followed (their text stays the worked example's,
// "Cron enqueues A1"); a table of one task is exactly the worked example's.
func WriteTimelineWith(w io.Writer, entries []TimelineEntry, tf TimeFormat, format string, opt TimelineOptions) error {
	var tr Tracker
	rows := make([]Row, 0, len(entries))
	tasks := map[string]bool{}
	for _, e := range entries {
		var row Row
		var err error
		switch {
		case e.Tick && e.Record.Type != "":
			// A tick that recorded what it decided (SlotsMissed, R14):
			// the event is folded and shown as the tick it was.
			row, err = tr.Apply(e.Record)
			row.Event = EventTick
		case e.Tick:
			row, err = tr.Tick(e.TaskID, e.At)
		default:
			row, err = tr.Apply(e.Record)
		}
		if err != nil {
			return fmt.Errorf("history: timeline: %w", err)
		}
		tasks[row.Task] = true
		if row.Event == "CheckpointSaved" || opt.HideIdle && row.idle() {
			continue
		}
		row.Detail, _, _ = strings.Cut(row.Detail, "\n")
		rows = append(rows, row)
	}
	if format == "json" {
		return WriteLines(w, rows, tf, LineFields{})
	}
	return writeTable(w, rows, tf, len(tasks) > 1)
}

// idle: a tick row that decided nothing (no skip, no bound reached).
func (r Row) idle() bool {
	return r.Event == EventTick && !r.Skipped && !r.held()
}
