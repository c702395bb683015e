package history

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// ErrUnknownEvent: an event of a type the audit trail does not know.
var ErrUnknownEvent = errors.New("history: unknown event type")

// Tick is the Event of a row that is not an event: a clock tick that
// enqueued nothing for the task (see Tracker.Tick).
const Tick = "Tick"

// Row is one line of a task's audit trail.
type Row struct {
	// At is when the decision was made (the event's time).
	At time.Time
	// Task is the task's name (from TaskCreated).
	Task string
	// TaskID is the task's ID (from TaskCreated).
	TaskID uuid.UUID
	// Event is the event type name, or Tick.
	Event string
	// Run and RunID name the run of a run event; zero otherwise.
	Run   int
	RunID uuid.UUID
	// NextRun and LastRun are the task's values after the event; nil when
	// unset.
	NextRun *time.Time
	LastRun *time.Time
	// Reason is the machine reason of a drop or forced end.
	Reason string
	// Detail is the reason in words: of a drop or forced end, the error of a
	// failed run, the reason of a deletion.
	Detail string
	// Missed is the number of whole intervals skipped (RunEnqueued, R8).
	Missed int
	// PrevLastRun is lastRun before a RunStarted (nil for the first start).
	PrevLastRun *time.Time
	// Interval and Tolerance are the task's spec when the event happened.
	Interval  time.Duration
	Tolerance time.Duration
	// Position and Version place the event in the log (zero for a Tick).
	Position events.Position
	Version  uint64
}

// Tracker folds one task's events into rows, one event at a time. The zero
// value is ready to use.
type Tracker struct {
	name      string
	id        uuid.UUID
	nextRun   *time.Time
	lastRun   *time.Time
	interval  time.Duration
	tolerance time.Duration
}

// NextRun returns the task's nextRun so far (nil when unset).
func (t *Tracker) NextRun() *time.Time { return t.nextRun }

// LastRun returns the task's lastRun so far (nil when unset).
func (t *Tracker) LastRun() *time.Time { return t.lastRun }

// Name returns the task's name so far.
func (t *Tracker) Name() string { return t.name }

func ptr(t time.Time) *time.Time {
	u := t.UTC()
	return &u
}

// Apply decodes rec and returns its row.
func (t *Tracker) Apply(rec events.Recorded) (Row, error) {
	ev, err := events.Decode(rec)
	if err != nil {
		return Row{}, fmt.Errorf("history: event %s of %s: %w", rec.Position, rec.Stream, err)
	}
	return t.ApplyEvent(rec.Metadata, ev)
}

// ApplyEvent returns the row of an already decoded event.
func (t *Tracker) ApplyEvent(md events.Metadata, ev events.Event) (Row, error) {
	r := Row{At: md.At.UTC(), Event: ev.EventType(), Position: md.Position, Version: md.Version}
	switch e := ev.(type) {
	case events.TaskCreated:
		t.name, t.id = e.Name, e.TaskID
		t.interval, t.tolerance = e.Schedule.Interval.D(), e.Tolerance.D()
		t.nextRun = ptr(e.NextRun)
	case events.TaskUpdated:
		t.interval, t.tolerance = e.Schedule.Interval.D(), e.Tolerance.D()
		if !e.NextRun.IsZero() {
			t.nextRun = ptr(e.NextRun)
		}
	case events.TaskPaused:
	case events.TaskResumed:
		if !e.NextRun.IsZero() {
			t.nextRun = ptr(e.NextRun)
		}
	case events.TaskDeleted:
		r.Detail = e.Reason
	case events.RunEnqueued:
		r.Run, r.RunID, r.Missed = e.Run, e.RunID, e.Missed
		t.nextRun = ptr(e.NextRun)
	case events.RunStarted:
		r.Run, r.RunID = e.Run, e.RunID
		r.PrevLastRun = t.lastRun
		t.lastRun = ptr(md.At)
	case events.RunCompleted:
		r.Run, r.RunID = e.Run, e.RunID
	case events.RunFailed:
		r.Run, r.RunID, r.Detail = e.Run, e.RunID, e.Error
	case events.RunDropped:
		r.Run, r.RunID, r.Reason, r.Detail = e.Run, e.RunID, e.Reason, e.Detail
		if r.Detail == "" {
			r.Detail = dropDetail(e)
		}
	case events.RunForcedEnd:
		r.Run, r.RunID, r.Reason, r.Detail = e.Run, e.RunID, e.Reason, e.Detail
		if r.Detail == "" {
			r.Detail = e.Reason
		}
	case events.CheckpointSaved:
		r.Run, r.RunID = e.Run, e.RunID
	default:
		return Row{}, fmt.Errorf("%w: %s", ErrUnknownEvent, ev.EventType())
	}
	t.fill(&r)
	return r, nil
}

// Tick returns the row of a clock tick at `at` that enqueued nothing for
// the task ("Cron executes"). Ticks are not events; a caller that knows
// them (the simulation) supplies them.
func (t *Tracker) Tick(at time.Time) Row {
	r := Row{At: at.UTC(), Event: Tick}
	t.fill(&r)
	return r
}

func (t *Tracker) fill(r *Row) {
	r.Task, r.TaskID = t.name, t.id
	r.NextRun, r.LastRun = t.nextRun, t.lastRun
	r.Interval, r.Tolerance = t.interval, t.tolerance
}

func dropDetail(e events.RunDropped) string {
	if e.Reason == events.DropTooSoon && e.Needed > 0 {
		return fmt.Sprintf("started %s after the last start; needs %s", e.SinceLastStart, e.Needed)
	}
	return e.Reason
}

// Rows folds a task's recorded events, in stream order, into its rows.
func Rows(recs []events.Recorded) ([]Row, error) {
	var t Tracker
	out := make([]Row, 0, len(recs))
	for _, rec := range recs {
		r, err := t.Apply(rec)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// TimeFormat renders the times of a table.
type TimeFormat interface {
	// Header is the title of the time column.
	Header() string
	// Format renders one time.
	Format(time.Time) string
}

// Relative formats times as MM:SS from Start (HH:MM:SS from one hour on; a
// leading '-' before Start). Fractions of a second are truncated.
type Relative struct{ Start time.Time }

// Header implements TimeFormat.
func (Relative) Header() string { return "MM:SS" }

// Format implements TimeFormat.
func (f Relative) Format(t time.Time) string { return Clock(t.Sub(f.Start)) }

// Clock renders an offset as MM:SS, or HH:MM:SS from one hour on.
func Clock(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	s := int64(d / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%s%02d:%02d:%02d", sign, s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%s%02d:%02d", sign, s/60, s%60)
}

// ParseClock parses MM:SS or HH:MM:SS (as Clock renders them) into an
// offset.
func ParseClock(s string) (time.Duration, error) {
	neg := strings.HasPrefix(s, "-")
	parts := strings.Split(strings.TrimPrefix(s, "-"), ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, fmt.Errorf("history: time %q is not MM:SS or HH:MM:SS", s)
	}
	var total int64
	for i, p := range parts {
		if p == "" || len(p) > 6 {
			return 0, fmt.Errorf("history: time %q is not MM:SS or HH:MM:SS", s)
		}
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("history: time %q is not MM:SS or HH:MM:SS", s)
		}
		if i > 0 && n >= 60 {
			return 0, fmt.Errorf("history: time %q: field %q is 60 or more", s, p)
		}
		total = total*60 + int64(n)
	}
	d := time.Duration(total) * time.Second
	if neg {
		d = -d
	}
	return d, nil
}

// Absolute formats times as RFC 3339 in UTC.
type Absolute struct{}

// Header implements TimeFormat.
func (Absolute) Header() string { return "Time" }

// Format implements TimeFormat.
func (Absolute) Format(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// RunLabel names run n of a task: "A1", or "backup#1" when the name ends
// in a digit.
func RunLabel(task string, n int) string {
	if task == "" {
		task = "run"
	}
	last := rune(task[len(task)-1])
	if unicode.IsDigit(last) {
		return task + "#" + strconv.Itoa(n)
	}
	return task + strconv.Itoa(n)
}

// seconds renders a duration as whole seconds when it is one ("57 s").
func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10)
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// Text is the row's description in the table, e.g. "Cron enqueues A1" or
// "A2 begins execution (57 s after 00:35 >= 60 - 5)".
func (r Row) Text(f TimeFormat) string {
	run := RunLabel(r.Task, r.Run)
	paren := func(s, detail string) string {
		if detail == "" {
			return s
		}
		return s + " (" + detail + ")"
	}
	switch r.Event {
	case Tick:
		return "Cron executes"
	case "TaskCreated":
		return "Initial state"
	case "TaskUpdated":
		return r.Task + " is updated"
	case "TaskPaused":
		return r.Task + " is paused"
	case "TaskResumed":
		return r.Task + " is resumed"
	case "TaskDeleted":
		return paren(r.Task+" is deleted", r.Detail)
	case "RunEnqueued":
		s := "Cron enqueues " + run
		switch {
		case r.Missed == 1:
			s += " (1 missed interval)"
		case r.Missed > 1:
			s += fmt.Sprintf(" (%d missed intervals)", r.Missed)
		}
		return s
	case "RunStarted":
		s := run + " begins execution"
		if r.PrevLastRun != nil {
			s += fmt.Sprintf(" (%s s after %s >= %s - %s)", seconds(r.At.Sub(*r.PrevLastRun)),
				f.Format(*r.PrevLastRun), seconds(r.Interval), seconds(r.Tolerance))
		}
		return s
	case "RunCompleted":
		return run + " ends execution"
	case "RunFailed":
		return paren(run+" fails", r.Detail)
	case "RunDropped":
		return paren(run+" is dropped", r.Detail)
	case "RunForcedEnd":
		return paren(run+" is forced to end", r.Detail)
	case "CheckpointSaved":
		return run + " saves a checkpoint"
	}
	return r.Event
}

func optTime(f TimeFormat, t *time.Time) string {
	if t == nil {
		return "-"
	}
	return f.Format(*t)
}

// WriteTable renders rows as the Markdown table of the design's worked
// example: "| MM:SS | Event | nextRun | lastRun |".
func WriteTable(w io.Writer, rows []Row, f TimeFormat) error {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | Event | nextRun | lastRun |\n|---|---|---|---|\n", f.Header())
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", f.Format(r.At), cell(r.Text(f)), optTime(f, r.NextRun), optTime(f, r.LastRun))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell keeps a text from breaking the table.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
