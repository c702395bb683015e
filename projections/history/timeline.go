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
// first line (a panic's stack trace differs between builds). It is what
// `cronactor simulate` prints.
func WriteTimeline(w io.Writer, entries []TimelineEntry, start time.Time, format string) error {
	return WriteTimelineAs(w, entries, Relative(start), format)
}

// WriteTimelineAs is WriteTimeline with times rendered by tf: Absolute for
// a simulation whose scenario gives its start instant.
func WriteTimelineAs(w io.Writer, entries []TimelineEntry, tf TimeFormat, format string) error {
	var tr Tracker
	rows := make([]Row, 0, len(entries))
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
		if row.Event == "CheckpointSaved" {
			continue
		}
		row.Detail, _, _ = strings.Cut(row.Detail, "\n")
		rows = append(rows, row)
	}
	if format == "json" {
		return WriteLines(w, rows, tf, LineFields{})
	}
	return WriteTable(w, rows, tf)
}
