package history

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// TimeFormat renders the times of a table: Header names the first column,
// Format renders one time.
type TimeFormat struct {
	Header string
	Format func(time.Time) string
}

// Relative renders times as MM:SS after start (HH:MM:SS from one hour on;
// a leading "-" before start), the form of the worked example in
// docs/lifecycle.md and of simulation scenarios. The header is "MM:SS".
func Relative(start time.Time) TimeFormat {
	return TimeFormat{Header: "MM:SS", Format: func(t time.Time) string { return Clock(t.Sub(start)) }}
}

// Absolute renders times as RFC 3339 in UTC. The header is "Time".
func Absolute() TimeFormat {
	return TimeFormat{Header: "Time", Format: func(t time.Time) string { return t.UTC().Format(time.RFC3339) }}
}

// Clock renders an offset as MM:SS, or HH:MM:SS from one hour on; fractions
// of a second are truncated. Negative offsets get a leading "-".
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

// ParseClock parses MM:SS or HH:MM:SS (the forms Clock writes, without
// sign) into an offset.
func ParseClock(s string) (time.Duration, error) {
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, fmt.Errorf("history: time %q: want MM:SS or HH:MM:SS", s)
	}
	var total int64
	for i, p := range parts {
		if len(p) == 0 || len(p) > 4 {
			return 0, fmt.Errorf("history: time %q: want MM:SS or HH:MM:SS", s)
		}
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil {
			return 0, fmt.Errorf("history: time %q: %w", s, err)
		}
		if i > 0 && n > 59 {
			return 0, fmt.Errorf("history: time %q: %d out of 0..59", s, n)
		}
		total = total*60 + int64(n)
	}
	return time.Duration(total) * time.Second, nil
}

// spacingWords is R3's comparison in a start or too_soon drop row: the
// time since the previous start against interval - tolerance. When all
// three are whole seconds under an hour it keeps the worked example's
// published form, seconds written once: "57 s after 00:35 >= 60 - 5"
// (DESIGN §2). Otherwise each number is said by events.Span and the
// comparison by what is needed: "5.0 s after 00:00:01, needs ≥ 4.5 s".
func (r Row) spacingWords(tf TimeFormat, op string) string {
	prev := tf.Format(*r.PrevLastRun)
	if wholeSeconds(r.SinceLastStart) && wholeSeconds(r.Interval) && wholeSeconds(r.Tolerance) {
		return fmt.Sprintf("%s after %s %s %d - %d", events.Span(r.SinceLastStart), prev, op,
			r.Interval/time.Second, r.Tolerance/time.Second)
	}
	since, needed := events.Spans(r.SinceLastStart, r.Needed)
	return fmt.Sprintf("%s after %s, needs ≥ %s", since, prev, needed)
}

// wholeSeconds: d is a whole number of seconds, from 0 to under an hour.
func wholeSeconds(d time.Duration) bool {
	return d >= 0 && d < time.Hour && d%time.Second == 0
}

// Text is the Event column of the row: what happened, in the words of the
// worked example in docs/lifecycle.md ("Cron enqueues A2", "A2 begins execution (57 s
// after 00:35 >= 60 - 5)", "A3 is dropped (…)"). Times inside use tf.
func (r Row) Text(tf TimeFormat) string {
	run := r.Task + strconv.Itoa(r.Run)
	switch r.Event {
	case EventTick, "SlotsMissed":
		if r.Skipped {
			return fmt.Sprintf("Cron executes (%s missed: skipped, none enqueued)", plural(r.Missed, r.unit()))
		}
		if r.held() {
			return fmt.Sprintf("Cron executes (%s of %s waiting: none enqueued)", plural(r.Waiting, "run"), r.Task)
		}
		return "Cron executes"
	case "TaskCreated":
		if r.Incarnation > 1 {
			return fmt.Sprintf("%s is created again (incarnation %d: no lastRun, no checkpoint)", r.Task, r.Incarnation)
		}
		return "Initial state"
	case "TaskUpdated":
		if r.Interval == 0 && r.Schedule != "" {
			return fmt.Sprintf("%s is updated (%s, tolerance %s, timebox %s)", r.Task, r.Schedule, events.Span(r.Tolerance), events.Span(r.Timebox))
		}
		return fmt.Sprintf("%s is updated (interval %s, tolerance %s, timebox %s)", r.Task, events.Span(r.Interval), events.Span(r.Tolerance), events.Span(r.Timebox))
	case "TaskPaused":
		if r.Reason == events.PauseFailures {
			return fmt.Sprintf("%s is paused (%s failed in a row: pause_after_failures)", r.Task, plural(r.Failures, "slot"))
		}
		return r.Task + " is paused"
	case "TaskResumed":
		return r.Task + " is resumed"
	case "TaskFinished":
		if r.Detail != "" {
			return fmt.Sprintf("%s is finished (%s)", r.Task, r.Detail)
		}
		return r.Task + " is finished"
	case "TaskCompacted":
		return fmt.Sprintf("%s's history is compacted (%s)", r.Task, r.Detail)
	case "TaskDeleted":
		if r.Detail != "" {
			return fmt.Sprintf("%s is deleted (%s)", r.Task, r.Detail)
		}
		return r.Task + " is deleted"
	case "RunEnqueued":
		unit := r.unit()
		switch {
		case r.Trigger == events.TriggerManual:
			return "Manual trigger enqueues " + run
		case r.Attempt > 1:
			return fmt.Sprintf("Cron enqueues %s (%s)", run, r.retryWords())
		}
		switch {
		case r.Backlog && r.Missed == 1:
			return fmt.Sprintf("Cron enqueues %s (backlog, 1 interval missed)", run)
		case r.Backlog && r.Missed > 1:
			return fmt.Sprintf("Cron enqueues %s (backlog, %d intervals missed)", run, r.Missed)
		case r.Backlog:
			return fmt.Sprintf("Cron enqueues %s (backlog)", run)
		case r.Missed == 1:
			return fmt.Sprintf("Cron enqueues %s (1 %s missed)", run, unit)
		case r.Missed > 1:
			return fmt.Sprintf("Cron enqueues %s (%d %ss missed)", run, r.Missed, unit)
		}
		return "Cron enqueues " + run
	case "RunStarted":
		switch {
		case r.Trigger == events.TriggerManual:
			return run + " begins execution (manual trigger: no spacing check)"
		case r.Attempt > 1:
			return fmt.Sprintf("%s begins execution (%s: no spacing check)", run, r.retryWords())
		}
		if r.PrevLastRun == nil {
			return run + " begins execution"
		}
		return fmt.Sprintf("%s begins execution (%s)", run, r.spacingWords(tf, ">="))
	case "RunCompleted":
		return run + " ends execution"
	case "RunFailed":
		why := r.Detail
		if r.Fatal && r.NoRetry == "" {
			why += "; not retryable"
		}
		return fmt.Sprintf("%s fails (%s%s)", run, why, r.retryOutcome(tf))
	case "CheckpointSaved":
		return run + " saves a checkpoint"
	case "RunDropped":
		return fmt.Sprintf("%s is dropped (%s)", run, r.dropWhy(tf))
	case "RunForcedEnd":
		return fmt.Sprintf("%s is forced to end (%s%s)", run, r.forcedWhy(tf), r.retryOutcome(tf))
	}
	return fmt.Sprintf("%s %s", run, r.Event)
}

// unit is what a task's missed count counts: intervals, or the slots of a
// cron or at task passed over (R10).
func (r Row) unit() string {
	if r.Interval == 0 && r.Schedule != "" {
		return "slot"
	}
	return "interval"
}

// retryWords names a retry: "attempt 2, retry of A1".
func (r Row) retryWords() string {
	if r.RetryOfRun > 0 {
		return fmt.Sprintf("attempt %d, retry of %s%d", r.Attempt, r.Task, r.RetryOfRun)
	}
	return fmt.Sprintf("attempt %d", r.Attempt)
}

// retryOutcome is what a failure or forced end says of its retry (R13):
// "; retry at 00:45 after 10 s backoff" or "; no retry: attempts used up".
func (r Row) retryOutcome(tf TimeFormat) string {
	switch {
	case r.RetryAt != nil:
		return fmt.Sprintf("; retry at %s after %s backoff", tf.Format(*r.RetryAt), events.Span(r.Backoff))
	case r.NoRetry != "":
		return "; no retry: " + r.NoRetry
	}
	return ""
}

// plural is "1 run", "3 runs".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func (r Row) dropWhy(tf TimeFormat) string {
	switch r.Reason {
	case events.DropTooSoon:
		if r.PrevLastRun != nil {
			return r.spacingWords(tf, "<")
		}
	case events.DropPaused:
		return "task paused"
	case events.DropDeleted:
		return "task deleted"
	case events.DropOverlap:
		if r.Detail != "" {
			return "overlap: " + r.Detail
		}
		return "overlap: another run of " + r.Task + " is running"
	case events.DropTooLate:
		if r.Detail != "" {
			return "too late: " + r.Detail
		}
		return "too late: past the start deadline"
	}
	if r.Detail != "" {
		return r.Detail
	}
	return r.Reason
}

func (r Row) forcedWhy(tf TimeFormat) string {
	switch r.Reason {
	case events.ForcedTimebox:
		if r.Deadline != nil {
			return fmt.Sprintf("timebox %s ended at %s", events.Span(r.Timebox), tf.Format(*r.Deadline))
		}
	case events.ForcedProcessLost:
		if r.Deadline != nil {
			return fmt.Sprintf("process lost; deadline %s passed", tf.Format(*r.Deadline))
		}
	case events.ForcedHeartbeat:
		if r.Detail != "" {
			return "heartbeat timeout: " + r.Detail
		}
		return "heartbeat timeout"
	case events.ForcedReplaced:
		if r.Detail != "" {
			return "replaced: " + r.Detail
		}
		return "replaced by a newer run (overlap cancel_other)"
	}
	if r.Detail != "" {
		return r.Detail
	}
	return r.Reason
}

func fmtOpt(tf TimeFormat, t *time.Time) string {
	if t == nil {
		return "-"
	}
	return tf.Format(*t)
}

// WriteTable writes rows as the Markdown table of the worked example in
// docs/lifecycle.md:
//
//	| MM:SS | Event | nextRun | lastRun |
//	|---|---|---|---|
//	| 00:00 | Initial state | 00:30 | - |
func WriteTable(w io.Writer, rows []Row, tf TimeFormat) error {
	return writeTable(w, rows, tf, false)
}

// writeTable is WriteTable, with a Task column after the time when
// taskColumn (a timeline of several tasks):
//
//	| MM:SS | Task | Event | nextRun | lastRun |
//	|---|---|---|---|---|
//	| 00:30 | A | Cron enqueues A1 | 01:30 | - |
func writeTable(w io.Writer, rows []Row, tf TimeFormat, taskColumn bool) error {
	var b strings.Builder
	if taskColumn {
		fmt.Fprintf(&b, "| %s | Task | Event | nextRun | lastRun |\n|---|---|---|---|---|\n", tf.Header)
	} else {
		fmt.Fprintf(&b, "| %s | Event | nextRun | lastRun |\n|---|---|---|---|\n", tf.Header)
	}
	for _, r := range rows {
		if taskColumn {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", tf.Format(r.At), escapeCell(r.Task), escapeCell(r.Text(tf)), fmtOpt(tf, r.NextRun), fmtOpt(tf, r.LastRun))
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", tf.Format(r.At), escapeCell(r.Text(tf)), fmtOpt(tf, r.NextRun), fmtOpt(tf, r.LastRun))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// escapeCell keeps free text (errors, reasons, names) from breaking the
// table or driving the terminal (see printable).
func escapeCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return printable(strings.ReplaceAll(s, "\n", " "))
}

// Line is the JSON form of a row, one object per line in `cronactor
// simulate --format json` and `cronactor history --format json`:
//
//	{"at":"00:35","task":"A","event":"RunStarted","run":1,"next_run":"01:30","last_run":"00:35"}
//
// Times are rendered with the caller's TimeFormat; next_run and last_run are
// null when unset; reason is set for drops and forced ends; attempt is set on
// the run events of a retry (attempt 2 and up, R13) and trigger ("manual")
// on the RunEnqueued of a manually triggered run (R15). run_id and detail
// (the event's words: a drop's numbers, a failure's error) are added only
// when LineFields asks for them, so the simulation prints exactly the fields
// of its published contract.
type Line struct {
	At      string  `json:"at"`
	Task    string  `json:"task"`
	Event   string  `json:"event"`
	Run     int     `json:"run,omitempty"`
	Attempt int     `json:"attempt,omitempty"`
	Trigger string  `json:"trigger,omitempty"`
	RunID   string  `json:"run_id,omitempty"`
	NextRun *string `json:"next_run"`
	LastRun *string `json:"last_run"`
	Reason  string  `json:"reason,omitempty"`
	Detail  string  `json:"detail,omitempty"`
	// RetryOf, RetryAt, Backoff and NoRetry are added only when
	// LineFields asks for them: the run a retry retries (on its
	// RunEnqueued), and what a failure or forced end says of its retry.
	RetryOf string  `json:"retry_of,omitempty"`
	RetryAt *string `json:"retry_at,omitempty"`
	Backoff string  `json:"backoff,omitempty"`
	NoRetry string  `json:"no_retry,omitempty"`
}

// LineFields chooses the optional fields of a Line.
type LineFields struct {
	RunID  bool // run_id on run events
	Detail bool // detail when the event carries words
	Retry  bool // retry_of, retry_at, backoff, no_retry (R13)
}

// Line returns the JSON form of r with the optional fields f asks for.
func (r Row) Line(tf TimeFormat, f LineFields) Line {
	opt := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := tf.Format(*t)
		return &s
	}
	l := Line{At: tf.Format(r.At), Task: r.Task, Event: r.Event, Run: r.Run,
		NextRun: opt(r.NextRun), LastRun: opt(r.LastRun), Reason: r.Reason}
	if r.Attempt > 1 {
		l.Attempt = r.Attempt
	}
	if r.Event == "RunEnqueued" {
		l.Trigger = r.Trigger
	}
	if f.Detail {
		l.Detail = r.Detail
	}
	if f.RunID && r.Run > 0 {
		l.RunID = r.RunID.String()
	}
	if f.Retry {
		if r.RetryOf != uuid.Nil && r.Event == "RunEnqueued" {
			l.RetryOf = r.RetryOf.String()
		}
		l.RetryAt, l.NoRetry = opt(r.RetryAt), r.NoRetry
		if r.RetryAt != nil {
			l.Backoff = r.Backoff.String()
		}
	}
	return l
}

// WriteLines writes rows as JSON lines (see Line).
func WriteLines(w io.Writer, rows []Row, tf TimeFormat, f LineFields) error {
	enc := json.NewEncoder(w)
	for _, r := range rows {
		if err := enc.Encode(r.Line(tf, f)); err != nil {
			return err
		}
	}
	return nil
}
