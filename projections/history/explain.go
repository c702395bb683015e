package history

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/taskstate"
	"github.com/google/uuid"
)

// ErrNoEvents: Explain was given no events.
var ErrNoEvents = errors.New("history: the task has no events")

// Decision is one recorded decision and the rule behind it.
type Decision struct {
	Row Row
	// Rule is the scheduling rule that decided it ("R1", "R3", "R1, R8", …);
	// empty for decisions no rule makes (creation, completion).
	Rule string
}

// scheduleWords is the row's schedule in words ("every 60 s" for an
// interval task).
func (r Row) scheduleWords() string {
	if r.Schedule == "" {
		return "every " + events.Span(r.Interval)
	}
	return r.Schedule
}

// Text is the decision in words, past tense, e.g. "A3 was dropped (R3):
// started 28 s after the last start; needs ≥ 55 s". Durations are said by
// events.Span.
func (d Decision) Text(tf TimeFormat) string {
	r := d.Row
	run := fmt.Sprintf("%s%d", r.Task, r.Run)
	rule := ""
	if d.Rule != "" {
		rule = " (" + d.Rule + ")"
	}
	next := func() string { return fmtOpt(tf, r.NextRun) }
	switch r.Event {
	case "TaskCreated":
		if r.Incarnation > 1 {
			return fmt.Sprintf("%s was created again after it was deleted (incarnation %d, starting with no lastRun and no checkpoint): every %s, tolerance %s, timebox %s; first due at %s",
				r.Task, r.Incarnation, events.Span(r.Interval), events.Span(r.Tolerance), events.Span(r.Timebox), next())
		}
		return fmt.Sprintf("%s was created: %s, tolerance %s, timebox %s; first due at %s", r.Task, r.scheduleWords(), events.Span(r.Tolerance), events.Span(r.Timebox), next())
	case "TaskUpdated":
		return fmt.Sprintf("%s was updated: %s, tolerance %s, timebox %s; next due at %s", r.Task, r.scheduleWords(), events.Span(r.Tolerance), events.Span(r.Timebox), next())
	case "TaskFinished":
		return fmt.Sprintf("%s finished%s: %s; it enqueues nothing more, and its open runs still end", r.Task, rule, r.Detail)
	case "TaskPaused":
		if r.Reason == events.PauseFailures {
			return fmt.Sprintf("%s paused itself%s: the runs of %s in a row failed after their retries, its pause_after_failures; it enqueues nothing, and waiting runs are dropped, until it is resumed",
				r.Task, rule, plural(r.Failures, "slot"))
		}
		return fmt.Sprintf("%s was paused%s: it enqueues nothing, and waiting runs are dropped", r.Task, rule)
	case "TaskResumed":
		return fmt.Sprintf("%s was resumed%s: next due at %s", r.Task, rule, next())
	case "TaskDeleted":
		s := fmt.Sprintf("%s was deleted%s: it enqueues nothing, and waiting runs are dropped", r.Task, rule)
		if r.Detail != "" {
			s += " (" + r.Detail + ")"
		}
		return s
	case "TaskCompacted":
		return fmt.Sprintf("%s's history was compacted%s: %s; the state it carries is the state before it", r.Task, rule, r.Detail)
	case "SlotsMissed":
		return fmt.Sprintf("%s ran nothing for %s%s: %s; next due at %s", r.Task, plural(r.Missed, "missed slot"), rule, r.Detail, next())
	case "RunEnqueued":
		switch {
		case r.Trigger == events.TriggerManual:
			return fmt.Sprintf("%s was enqueued%s by a manual trigger: outside the schedule, nextRun and lastRun unchanged; next due at %s", run, rule, next())
		case r.Attempt > 1:
			return fmt.Sprintf("%s was enqueued%s as attempt %d, the %s; next due at %s", run, rule, r.Attempt, r.retryOf(), next())
		}
		s := fmt.Sprintf("%s was enqueued%s: the task was due", run, rule)
		if r.Backlog {
			s += " and had been held back while its bound of waiting runs was reached (backlog)"
		}
		switch {
		case r.Missed > 0 && r.Interval == 0 && r.Schedule != "":
			s += fmt.Sprintf(", %d slot(s) passed over and missed (R10)", r.Missed)
		case r.Missed > 0:
			s += fmt.Sprintf(", %d whole interval(s) missed, merged into this run", r.Missed)
		}
		return s + "; next due at " + next()
	case "RunStarted":
		switch {
		case r.Trigger == events.TriggerManual:
			return fmt.Sprintf("%s started%s: a manually triggered run, no spacing check and lastRun unchanged; deadline %s", run, rule, fmtOpt(tf, r.Deadline))
		case r.Attempt > 1:
			return fmt.Sprintf("%s started%s: attempt %d, a retry, no spacing check and lastRun unchanged; deadline %s", run, rule, r.Attempt, fmtOpt(tf, r.Deadline))
		}
		if r.PrevLastRun == nil {
			return fmt.Sprintf("%s started%s: no run had started before; deadline %s", run, rule, fmtOpt(tf, r.Deadline))
		}
		since, needed := events.Spans(r.SinceLastStart, r.Needed)
		return fmt.Sprintf("%s started%s: %s after the last start at %s; needs ≥ %s; deadline %s", run, rule,
			since, tf.Format(*r.PrevLastRun), needed, fmtOpt(tf, r.Deadline))
	case "RunCompleted":
		return run + " completed"
	case "RunFailed":
		return fmt.Sprintf("%s failed%s: %s%s", run, rule, r.Detail, r.retryDecision(tf))
	case "CheckpointSaved":
		return fmt.Sprintf("%s saved a checkpoint%s", run, rule)
	case "RunDropped":
		return fmt.Sprintf("%s was dropped%s: %s", run, rule, r.dropWords(tf))
	case "RunForcedEnd":
		return fmt.Sprintf("%s was forced to end%s: %s%s", run, rule, r.forcedWords(tf), r.retryDecision(tf))
	case EventTick:
		if r.held() {
			return fmt.Sprintf("a tick enqueued nothing (R18): not enqueued: %s already waiting", plural(r.Waiting, "run"))
		}
		return "a tick enqueued nothing"
	}
	return fmt.Sprintf("%s: %s", run, r.Event)
}

// retryDecision is what a failure or forced end decided about its retry.
func (r Row) retryDecision(tf TimeFormat) string {
	switch {
	case r.RetryAt != nil:
		return fmt.Sprintf("; retried as attempt %d, due at %s after a backoff of %s", max(r.Attempt, 1)+1, tf.Format(*r.RetryAt), events.Span(r.Backoff))
	case r.NoRetry != "":
		return "; not retried: " + r.NoRetry
	case r.Fatal:
		return "; the error was marked not retryable"
	}
	return ""
}

func (r Row) dropWords(tf TimeFormat) string {
	// R3's numbers are the event's own (or derived from the spec), said
	// in one unit; the detail an older event carries may say them in Go's
	// duration form ("28.0012s … needs 55s").
	if r.Reason == events.DropTooSoon && r.Needed > 0 {
		since, needed := events.Spans(r.SinceLastStart, r.Needed)
		return fmt.Sprintf("started %s after the last start; needs ≥ %s", since, needed)
	}
	if r.Detail != "" {
		return r.Detail
	}
	switch r.Reason {
	case events.DropTooSoon:
		return "it asked to start too soon after the last start"
	case events.DropPaused:
		return "the task was paused"
	case events.DropDeleted:
		return "the task was deleted"
	case events.DropOverlap:
		return "another run of the task was running (overlap)"
	case events.DropTooLate:
		return "it asked to start after its slot + start_deadline (too_late)"
	}
	return r.Reason
}

func (r Row) forcedWords(tf TimeFormat) string {
	s := r.Detail
	if s == "" {
		s = r.Reason
		switch r.Reason {
		case events.ForcedHeartbeat:
			s = "no heartbeat within the task's heartbeat_timeout"
		case events.ForcedReplaced:
			s = "another run of the task asked to start and replaced it (overlap cancel_other)"
		}
	}
	if r.Deadline != nil {
		s += "; deadline " + tf.Format(*r.Deadline)
	}
	return s
}

// ruleOf names the rule behind a row.
func ruleOf(r Row) string {
	switch r.Event {
	case "RunEnqueued":
		switch {
		case r.Trigger == events.TriggerManual:
			return "R15"
		case r.Attempt > 1:
			return "R13"
		}
		rule := "R1"
		if r.Missed > 0 {
			rule += ", R8"
		}
		if r.Backlog {
			rule += ", R18"
		}
		return rule
	case "RunStarted":
		switch {
		case r.Trigger == events.TriggerManual:
			return "R15"
		case r.Attempt > 1:
			return "R13"
		}
		return "R3"
	case "RunDropped":
		switch r.Reason {
		case events.DropPaused, events.DropDeleted:
			return "R7"
		case events.DropOverlap:
			return "R12"
		case events.DropTooLate:
			return "R14"
		}
		return "R3"
	case "RunFailed":
		if r.RetryAt != nil || r.NoRetry != "" {
			return "R13"
		}
	case "RunForcedEnd":
		rule := "R4"
		switch r.Reason {
		case events.ForcedProcessLost:
			rule = "R9"
		case events.ForcedHeartbeat:
			rule = "R16"
		case events.ForcedReplaced:
			rule = "R12"
		}
		if r.RetryAt != nil || r.NoRetry != "" {
			rule += ", R13"
		}
		return rule
	case "TaskPaused":
		if r.Reason == events.PauseFailures {
			return "R7, pause_after_failures"
		}
		return "R7"
	case "TaskResumed", "TaskDeleted":
		return "R7"
	case "SlotsMissed":
		return "R14"
	case "CheckpointSaved":
		return "R5"
	}
	return ""
}

// retryOf names the run a retry retries: "retry of A2", or its ID when
// the Tracker did not see it.
func (r Row) retryOf() string {
	if r.RetryOfRun > 0 {
		return fmt.Sprintf("retry of %s%d", r.Task, r.RetryOfRun)
	}
	return "retry of run " + r.RetryOf.String()
}

// RunState is a run in flight at the explained time.
type RunState struct {
	Run      int
	RunID    uuid.UUID
	Since    time.Time  // enqueued or started
	Deadline *time.Time // running runs only
	// Attempt is the run's try of its slot (R13); Trigger is
	// events.TriggerManual for a manually triggered run (R15).
	Attempt int
	Trigger string
}

// PendingRetry is a retry a failure promised and no tick had enqueued yet
// at the explained time (R13).
type PendingRetry struct {
	// Of and OfID name the failed run; Attempt is the retry's.
	Of      int
	OfID    uuid.UUID
	Attempt int
	Due     time.Time
	Backoff time.Duration
}

// Explanation answers "why did (or didn't) the task run at At?".
type Explanation struct {
	TaskID uuid.UUID
	Task   string
	At     time.Time
	// Exists is false when At is before the task was created; the fields
	// below are then zero.
	Exists bool
	// Status, NextRun and LastRun are the task's state at At (after every
	// event decided at or before it); Since is when Status began.
	Status  string
	Since   time.Time
	NextRun *time.Time
	LastRun *time.Time
	// Queued are runs enqueued and not yet started or dropped; Running
	// started and not yet ended.
	Queued  []RunState
	Running []RunState
	// Retries are the retries due and not yet enqueued (R13).
	Retries []PendingRetry
	// MaxWaiting is the task's bound on waiting runs at At (R18).
	MaxWaiting int
	// Decisions are those within Window of At, plus the last one before
	// and the first one after it, in order. Before counts those at or
	// before At.
	Decisions []Decision
	Before    int
	Window    time.Duration
	// created is when the task was created.
	created time.Time
}

// Explain folds a task's events (one stream, in order) and explains what
// the scheduler decided around at and why. window bounds the decisions
// listed on each side of at; 0 means one interval of the task.
func Explain(recs []events.Recorded, at time.Time, window time.Duration) (Explanation, error) {
	if len(recs) == 0 {
		return Explanation{}, ErrNoEvents
	}
	return ExplainFrom(recs[0], recs, at, window)
}

// ExplainFrom is Explain for consecutive events of a task stream that may
// start past version 0 (a reader that reads only around at): the fold then
// starts from created, the stream's TaskCreated, as Tracker.Seed says, and
// the status found before the first of recs is taken to hold since the
// task was created when it is active, since the first of recs otherwise.
// ExplainMark is exact where this is not.
func ExplainFrom(created events.Recorded, recs []events.Recorded, at time.Time, window time.Duration) (Explanation, error) {
	if len(recs) == 0 {
		return Explanation{}, ErrNoEvents
	}
	if window < 0 {
		return Explanation{}, fmt.Errorf("history: negative window %s", window)
	}
	at = at.UTC()
	// The task's state as of at is the one fold's (the pending retries).
	var tr Tracker
	var e exState
	var seed taskstate.State
	if recs[0].Version > 0 {
		if err := tr.Seed(created, recs); err != nil {
			return Explanation{}, err
		}
		if id, err := events.TaskIDFromStream(created.Stream); err == nil {
			seed, _ = tr.State(id)
		}
		if !at.Before(created.At.UTC()) {
			e.exists, e.status, e.since = true, seed.Status.String(), created.At.UTC()
			if seed.Status != taskstate.StatusActive {
				e.since = recs[0].At.UTC()
			}
			e.nextRun, e.lastRun, e.maxWaiting = tz(seed.NextRun), tz(seed.LastRun), seed.Spec.WaitingBound()
		}
	}
	return explainRows(&tr, e, seed, "", created.At.UTC(), recs, at, window)
}

// ExplainMark is Explain for the events of a task stream after a Mark:
// recs are the events right after m's version, in order, and hold the last
// event decided at or before at (m is older than it) and the decisions
// around at that the explanation lists. created is the stream's first
// event. The explanation is the one the fold of the whole stream gives,
// however long the stream before m (m nil: recs start with created).
func ExplainMark(created events.Recorded, m *Mark, recs []events.Recorded, at time.Time, window time.Duration) (Explanation, error) {
	if m == nil {
		if len(recs) == 0 || recs[0].Version != created.Version {
			return Explanation{}, fmt.Errorf("%w: no mark and no first event", ErrNoEvents)
		}
		return Explain(recs, at, window)
	}
	if len(recs) == 0 {
		return Explanation{}, ErrNoEvents
	}
	if recs[0].Version != m.Version+1 {
		return Explanation{}, fmt.Errorf("history: explain from the mark of version %d: the events start at %d", m.Version, recs[0].Version)
	}
	if window < 0 {
		return Explanation{}, fmt.Errorf("history: negative window %s", window)
	}
	var f Fold
	f.Resume(m)
	return explainRows(&f.tr, f.ex, m.state, m.first, created.At.UTC(), recs, at.UTC(), window)
}

// explainRows folds recs with tr and explains at: e is what the
// explanation folded of the rows before recs, asOf the task's state
// before them, name the task's name in the first row (empty: the first of
// recs').
func explainRows(tr *Tracker, e exState, asOf taskstate.State, name string, created time.Time, recs []events.Recorded, at time.Time, window time.Duration) (Explanation, error) {
	rows := make([]Row, 0, len(recs))
	for _, rec := range recs {
		row, err := tr.Apply(rec)
		if err != nil {
			return Explanation{}, err
		}
		rows = append(rows, row)
		if !row.At.After(at) {
			asOf, _ = tr.State(row.TaskID)
		}
	}
	if name == "" {
		name = rows[0].Task
	}
	ex := Explanation{TaskID: rows[0].TaskID, Task: name, At: at, created: created}
	before := 0
	for i, r := range rows {
		if r.At.After(at) {
			break
		}
		before = i + 1
		e.step(r)
	}
	e.init()
	ex.Exists, ex.Status, ex.Since = e.exists, e.status, e.since
	ex.NextRun, ex.LastRun, ex.MaxWaiting = e.nextRun, e.lastRun, e.maxWaiting
	ex.Queued, ex.Running = sortedRuns(e.queued), sortedRuns(e.running)
	for _, p := range asOf.Retries {
		ex.Retries = append(ex.Retries, PendingRetry{Of: p.Run, OfID: p.Of, Attempt: p.Attempt, Due: p.At.UTC(), Backoff: e.backoff[p.Of]})
	}
	if window == 0 {
		window = rows[0].Interval
		if before > 0 {
			window = rows[before-1].Interval
		}
	}
	ex.Window = window
	for i, r := range rows {
		near := !r.At.Before(at.Add(-window)) && !r.At.After(at.Add(window))
		if near || i == before-1 || i == before {
			ex.Decisions = append(ex.Decisions, Decision{Row: r, Rule: ruleOf(r)})
			if i < before {
				ex.Before++
			}
		}
	}
	return ex, nil
}

// what says what kind of run r is: " (attempt 2)", " (manual trigger)".
func (r RunState) what() string {
	switch {
	case r.Trigger == events.TriggerManual:
		return " (manual trigger)"
	case r.Attempt > 1:
		return fmt.Sprintf(" (attempt %d)", r.Attempt)
	}
	return ""
}

func sortedRuns(m map[int]RunState) []RunState {
	out := make([]RunState, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Run < out[j].Run })
	return out
}

// Verdict is the answer in one sentence, with the rule that applied.
func (e Explanation) Verdict(tf TimeFormat) string {
	t := tf.Format(e.At)
	if !e.Exists {
		return fmt.Sprintf("At %s %s did not exist yet: it was created at %s.", t, e.Task, tf.Format(e.created))
	}
	var b strings.Builder
	switch {
	case e.Status == StatusDeleted:
		fmt.Fprintf(&b, "At %s %s was deleted (since %s), so it enqueued nothing and its waiting runs were dropped (R7).", t, e.Task, tf.Format(e.Since))
	case e.Status == StatusPaused:
		fmt.Fprintf(&b, "At %s %s was paused (since %s), so it enqueued nothing and its waiting runs were dropped (R7).", t, e.Task, tf.Format(e.Since))
	case e.NextRun != nil && e.NextRun.After(e.At):
		next := tf.Format(*e.NextRun)
		if next == t {
			// Shown to the second, both read the same: say how much later.
			next += ", " + events.Span(e.NextRun.Sub(e.At)) + " later"
		}
		fmt.Fprintf(&b, "At %s %s was not due: nextRun was %s, and a tick enqueues a run only once nextRun <= now (R1).", t, e.Task, next)
	case e.NextRun != nil && e.MaxWaiting > 0 && len(e.Queued) >= e.MaxWaiting:
		fmt.Fprintf(&b, "At %s %s was due since %s but not enqueued: %s already waiting (R18). nextRun stays; the first tick after one of them leaves the queue enqueues one run, with the intervals missed meanwhile (R8) and the reason backlog.",
			t, e.Task, tf.Format(*e.NextRun), plural(len(e.Queued), "run"))
	case e.NextRun != nil:
		fmt.Fprintf(&b, "At %s %s was due since %s: the next tick enqueues one run for it (R1)", t, e.Task, tf.Format(*e.NextRun))
		if e.At.Sub(*e.NextRun) > e.Window {
			b.WriteString("; after downtime the missed intervals merge into that one run (R8)")
		}
		b.WriteString(".")
	}
	for _, r := range e.Running {
		fmt.Fprintf(&b, " %s%d%s was running (started %s, deadline %s).", e.Task, r.Run, r.what(), tf.Format(r.Since), fmtOpt(tf, r.Deadline))
	}
	for _, p := range e.Retries {
		fmt.Fprintf(&b, " %s%d had failed; its retry (attempt %d) was due at %s after a backoff of %s, enqueued on the first tick at or after it (R13).",
			e.Task, p.Of, p.Attempt, tf.Format(p.Due), events.Span(p.Backoff))
	}
	for _, r := range e.Queued {
		if e.Status == StatusActive && (r.Attempt > 1 || r.Trigger != "") {
			fmt.Fprintf(&b, " %s%d%s was waiting in the queue since %s; no spacing check applies to it, only that no other run of the task is running (R12).", e.Task, r.Run, r.what(), tf.Format(r.Since))
			continue
		}
		if e.Status == StatusActive {
			fmt.Fprintf(&b, " %s%d was waiting in the queue since %s; it may start once a worker asks, if lastRun + interval - tolerance has passed (R3).", e.Task, r.Run, tf.Format(r.Since))
		} else {
			fmt.Fprintf(&b, " %s%d was waiting in the queue since %s; it is dropped when a worker asks (R7).", e.Task, r.Run, tf.Format(r.Since))
		}
	}
	return b.String()
}

// Write prints the explanation: the verdict, the state at the time, and
// the decisions around it with a marker at the explained time.
func (e Explanation) Write(w io.Writer, tf TimeFormat) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s) at %s\n%s\n", printable(e.Task), e.TaskID, tf.Format(e.At), printable(e.Verdict(tf)))
	if e.Exists {
		fmt.Fprintf(&b, "state: %s; nextRun %s; lastRun %s\n", e.Status, fmtOpt(tf, e.NextRun), fmtOpt(tf, e.LastRun))
	}
	// Say what is listed: the window, and the nearest decision on each side
	// of it however far away (one five days off is not "within 5s").
	fmt.Fprintf(&b, "decisions within %s of %s, and the last before and the first after it:\n", events.Span(e.Window), tf.Format(e.At))
	for i, d := range e.Decisions {
		if i == e.Before {
			fmt.Fprintf(&b, "  ---- %s ----\n", tf.Format(e.At))
		}
		fmt.Fprintf(&b, "  %s: %s\n", tf.Format(d.Row.At), printable(d.Text(tf)))
	}
	if e.Before == len(e.Decisions) {
		fmt.Fprintf(&b, "  ---- %s ----\n", tf.Format(e.At))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
