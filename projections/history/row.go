package history

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/taskstate"
	"github.com/google/uuid"
)

// EventTick is the Row.Event of a tick that enqueued nothing for the task
// ("Cron executes"). It is not an event type: callers that drive the clock
// add these rows with Tracker.Tick.
const EventTick = "Tick"

// Task statuses after an event (Row.Status), the same words as the
// cron_tasks view.
const (
	StatusActive  = "active"
	StatusPaused  = "paused"
	StatusDeleted = "deleted"
)

// ErrUnknownTask: an event or tick names a task whose TaskCreated the
// Tracker has not seen.
var ErrUnknownTask = errors.New("history: task not created yet")

// Row is one line of a task's audit trail: an event (or a tick) and the
// task's state right after it.
type Row struct {
	// At is when the event was decided (the scheduler's clock).
	At     time.Time
	TaskID uuid.UUID
	// Task is the task's name.
	Task string
	// Event is the event type (events.TaskCreated{}.EventType(), …) or
	// EventTick.
	Event string
	// Run and RunID name the run of a run event; zero otherwise.
	Run   int
	RunID uuid.UUID
	// Attempt is the run's try of its slot on a run event (1 for the first,
	// n for its (n-1)th retry, R13); RetryOf and RetryOfRun name the failed
	// run a retry retries. Trigger is events.TriggerManual for a manually
	// triggered run (R15). Zero on other events.
	Attempt    int
	RetryOf    uuid.UUID
	RetryOfRun int
	Trigger    string
	// Fatal, RetryAt, Backoff and NoRetry are what a failure or forced end
	// says of retries (R13): the error was not retryable; the retry falls
	// due at RetryAt after Backoff; or why no retry is made.
	Fatal   bool
	RetryAt *time.Time
	Backoff time.Duration
	NoRetry string
	// NextRun and LastRun are the task's values after the event; nil when
	// unset. LastRun is the start of the latest run that started (R3).
	NextRun *time.Time
	LastRun *time.Time
	// Status is active, paused or deleted after the event.
	Status string
	// Incarnation counts the task's TaskCreated events so far: above 1
	// once the task was deleted and created again (a new incarnation that
	// starts clean; see package events/taskstate).
	Incarnation int
	// Reason is the machine reason of a drop or forced end
	// (events.DropTooSoon, events.ForcedTimebox, …), or of a pause the task
	// decided itself (events.PauseFailures, with Failures the count of
	// consecutive failed slots).
	Reason   string
	Failures int
	// Detail is the reason in words: a drop's or forced end's detail, a
	// failure's error, a deletion's reason.
	Detail string

	// PrevLastRun is lastRun before a RunStarted or RunDropped decision
	// (what R3 compared against); nil when no run had started.
	PrevLastRun *time.Time
	// SinceLastStart and Needed are R3's numbers for a start or a too_soon
	// drop: the time since the previous start, and interval - tolerance.
	SinceLastStart time.Duration
	Needed         time.Duration
	// Interval, Tolerance and Timebox are the task's spec after the event
	// (for every event but TaskUpdated, the spec it was decided under).
	Interval  time.Duration
	Tolerance time.Duration
	Timebox   time.Duration
	// Schedule is the schedule in words: "every 60 s", or a cron or at
	// schedule as written with its zone.
	Schedule string
	// Deadline is the deadline of a started or forced-ended run.
	Deadline *time.Time
	// Missed counts the whole intervals an enqueue skipped (R8), or the
	// slots a tick skipped (SlotsMissed, R14).
	Missed int
	// Skipped marks a tick row (or a SlotsMissed row) whose tick found the
	// slot missed under missed_run_policy skip and enqueued nothing (R14).
	Skipped bool
	// Backlog marks an enqueue that carries the reason backlog (R18): the
	// task fell due while it already had MaxWaiting runs waiting.
	Backlog bool
	// Waiting counts the task's runs waiting after the event, MaxWaiting is
	// its bound (R18).
	Waiting    int
	MaxWaiting int

	// Position and Version place the event in the global log and its
	// stream; zero for tick rows.
	Position events.Position
	Version  uint64
}

// Tracker folds task events into Rows. It keeps the state of every task it
// has seen, so events of several tasks may be applied interleaved, in the
// order they were recorded. The zero value is ready to use.
//
// A row's task fields (status, nextRun, lastRun, spec) are the task's state
// as the one fold of a task stream (events/taskstate) leaves it; the row
// adds only what the event itself says and R3's numbers.
type Tracker struct {
	tasks map[uuid.UUID]*taskstate.State
	// numbers maps a run ID to its number, to name the run a retry
	// retries (the failed run has left the task's open runs by then).
	numbers map[uuid.UUID]int
}

// NewTracker returns an empty Tracker.
func NewTracker() *Tracker { return &Tracker{} }

func tp(t time.Time) *time.Time { return &t }

// tpp is *t in UTC, nil when unset.
func tpp(t *time.Time) *time.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	return tp(t.UTC())
}

// tz is t in UTC, nil when unset.
func tz(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return tp(t.UTC())
}

// Apply folds one recorded event of a task stream and returns its row.
// Events of a stream must be applied in stream order, starting with its
// TaskCreated.
func (t *Tracker) Apply(r events.Recorded) (Row, error) {
	ev, err := events.Decode(r)
	if err != nil {
		return Row{}, fmt.Errorf("history: %s@%d: %w", r.Stream, r.Version, err)
	}
	return t.ApplyEvent(r.Metadata, ev)
}

// ApplyEvent is Apply for an event already decoded.
func (t *Tracker) ApplyEvent(m events.Metadata, ev events.Event) (Row, error) {
	if t.tasks == nil {
		t.tasks = map[uuid.UUID]*taskstate.State{}
		t.numbers = map[uuid.UUID]int{}
	}
	var id uuid.UUID
	if c, ok := ev.(events.TaskCreated); ok {
		id = c.TaskID
	} else {
		var err error
		if id, err = events.TaskIDFromStream(m.Stream); err != nil {
			return Row{}, fmt.Errorf("history: %w", err)
		}
	}
	st := t.tasks[id]
	_, compacted := ev.(events.TaskCompacted)
	removed := st == nil && compacted // the stream begins with it: history retention removed the events before it
	if st == nil {
		if _, ok := ev.(events.TaskCreated); !ok && !compacted {
			return Row{}, fmt.Errorf("%w: %s %s@%d comes before TaskCreated", ErrUnknownTask, ev.EventType(), m.Stream, m.Version)
		}
		st = &taskstate.State{}
		t.tasks[id] = st
	}
	prev := *st
	at := m.At.UTC()
	var spacing time.Duration // a cron or at run's spacing, shown as its interval
	row := Row{At: at, TaskID: id, Event: ev.EventType(), Position: m.Position, Version: m.Version}
	switch e := ev.(type) {
	case events.TaskCreated, events.TaskUpdated, events.TaskResumed:
	case events.TaskPaused:
		row.Reason, row.Failures = e.Reason, e.Failures
	case events.TaskFinished:
		row.Detail = e.Reason
	case events.TaskDeleted:
		row.Detail = e.Reason
	case events.RunEnqueued:
		row.Run, row.RunID, row.Missed = e.Run, e.RunID, e.Missed
		row.Backlog = e.Reason == events.EnqueueBacklog
		row.Attempt, row.Trigger = max(e.Attempt, 1), e.Trigger
		if e.RetryOf != nil {
			row.RetryOf, row.RetryOfRun = *e.RetryOf, t.numbers[*e.RetryOf]
		}
		t.numbers[e.RunID] = e.Run
	case events.SlotsMissed:
		row.Missed, row.Detail, row.Skipped = e.Missed, e.Detail, true
	case events.RunStarted:
		row.Run, row.RunID = e.Run, e.RunID
		row.Deadline = tp(e.Deadline.UTC())
		row.Needed = prev.Interval() - prev.Spec.Tolerance
		if r, ok := prev.Run(e.RunID); ok && !prev.Spec.Schedule.IsInterval() {
			// R11: a cron or at run's interval is its slot's spacing.
			spacing = r.Spacing
			row.Needed = spacing - prev.Spec.Tolerance
		}
		if !prev.LastRun.IsZero() {
			row.PrevLastRun = tz(prev.LastRun)
			row.SinceLastStart = at.Sub(prev.LastRun)
		}
	case events.RunCompleted:
		row.Run, row.RunID = e.Run, e.RunID
	case events.RunFailed:
		row.Run, row.RunID, row.Detail = e.Run, e.RunID, e.Error
		row.Fatal, row.RetryAt, row.Backoff, row.NoRetry = e.Fatal, tpp(e.RetryAt), e.Backoff.D(), e.NoRetry
	case events.RunDropped:
		row.Run, row.RunID, row.Reason, row.Detail = e.Run, e.RunID, e.Reason, e.Detail
		row.PrevLastRun = tz(prev.LastRun)
		if e.LastRun != nil {
			row.PrevLastRun = tp(e.LastRun.UTC())
		}
		row.SinceLastStart, row.Needed = e.SinceLastStart.D(), e.Needed.D()
		// A drop that carries only its words gets R3's numbers from the
		// task's own state, which is what the decision compared.
		if e.Reason == events.DropTooSoon && row.SinceLastStart == 0 && row.PrevLastRun != nil {
			row.SinceLastStart = at.Sub(*row.PrevLastRun)
		}
		if e.Reason == events.DropTooSoon && row.Needed == 0 {
			row.Needed = prev.Interval() - prev.Spec.Tolerance
		}
		if r, ok := prev.Run(e.RunID); ok && !prev.Spec.Schedule.IsInterval() {
			spacing = r.Spacing
		}
	case events.RunForcedEnd:
		row.Run, row.RunID, row.Reason, row.Detail = e.Run, e.RunID, e.Reason, e.Detail
		row.Deadline = tp(e.Deadline.UTC())
		row.RetryAt, row.Backoff, row.NoRetry = tpp(e.RetryAt), e.Backoff.D(), e.NoRetry
	case events.CheckpointSaved:
		row.Run, row.RunID = e.Run, e.RunID
	case events.TaskCompacted:
		row.Detail = compactedDetail(e, removed)
	default:
		return Row{}, fmt.Errorf("history: %s %s@%d: no rule to fold this event type", ev.EventType(), m.Stream, m.Version)
	}
	if r, ok := prev.Run(row.RunID); ok && row.Run > 0 && row.Attempt == 0 {
		// A run event after the enqueue: the run's attempt and trigger,
		// as its RunEnqueued recorded them.
		row.Attempt, row.RetryOf, row.Trigger = max(r.Attempt, 1), r.RetryOf, r.Trigger
		if r.RetryOf != uuid.Nil {
			row.RetryOfRun = t.numbers[r.RetryOf]
		}
	}
	*st = taskstate.Evolve(prev, m, ev)
	fill(&row, st)
	if spacing > 0 {
		row.Interval = spacing
	}
	return row, nil
}

// fill copies the task's state after the event into its row.
func fill(row *Row, st *taskstate.State) {
	row.Task = st.Spec.Name
	row.Status = st.Status.String()
	row.Incarnation = st.Incarnation
	row.Interval, row.Tolerance, row.Timebox = st.Interval(), st.Spec.Tolerance, st.Spec.Timebox
	row.Schedule = ScheduleText(st.Spec.Schedule)
	row.NextRun, row.LastRun = tz(st.NextRun), tz(st.LastRun)
	row.Waiting, row.MaxWaiting = len(st.Waiting()), st.Spec.WaitingBound()
}

// held reports a tick row of a task the tick found due at its bound of
// waiting runs: R18 kept the tick from enqueueing.
func (r Row) held() bool {
	return r.Event == EventTick && r.Status == StatusActive && r.NextRun != nil && !r.NextRun.After(r.At) &&
		r.MaxWaiting > 0 && r.Waiting >= r.MaxWaiting
}

// compactedDetail says what a TaskCompacted covers (history retention,
// DESIGN §8.3): how many events, which versions, over what time, and
// whether they were removed (the stream begins with it) or are still there.
func compactedDetail(e events.TaskCompacted, removed bool) string {
	state := "removed"
	if !removed {
		state = "to be removed"
	}
	s := fmt.Sprintf("%s %s: versions %d–%d, decided %s – %s", plural(e.Events, "event"), state, e.FromVersion, e.ToVersion,
		e.FromAt.UTC().Format(time.RFC3339), e.ToAt.UTC().Format(time.RFC3339))
	if e.Retention > 0 {
		s += ", retention " + events.Span(e.Retention.D())
	}
	return s
}

// ScheduleText is a schedule in words: "every 60 s", `cron "30 2 * * *" in
// America/New_York`, "at 2026-05-01T08:00:00Z, … in UTC".
func ScheduleText(sc events.Schedule) string {
	zone := sc.Timezone
	if zone == "" {
		zone = "UTC"
	}
	switch {
	case len(sc.Cron) > 0:
		q := make([]string, len(sc.Cron))
		for i, c := range sc.Cron {
			q[i] = strconv.Quote(c)
		}
		s := "cron " + strings.Join(q, " + ") + " in " + zone
		if sc.DSTGap != "" || sc.DSTOverlap != "" {
			s += fmt.Sprintf(" (dst_gap %s, dst_overlap %s)", or(sc.DSTGap, "shift"), or(sc.DSTOverlap, "first"))
		}
		if len(sc.Exclude) > 0 {
			x := make([]string, len(sc.Exclude))
			for i, e := range sc.Exclude {
				x[i] = strconv.Quote(e)
			}
			s += ", excluding " + strings.Join(x, ", ")
		}
		return s
	case len(sc.At) > 0:
		q := make([]string, len(sc.At))
		for i, t := range sc.At {
			q[i] = t.UTC().Format(time.RFC3339)
		}
		return "at " + strings.Join(q, ", ") + " in " + zone
	}
	return "every " + events.Span(sc.Interval.D())
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// State is the task's state after the events applied so far (the one fold
// of its stream); false when the Tracker has not seen the task created.
func (t *Tracker) State(task uuid.UUID) (taskstate.State, bool) {
	st := t.tasks[task]
	if st == nil {
		return taskstate.State{}, false
	}
	return *st, true
}

// Tick returns the row of a tick at time at that enqueued nothing for the
// task ("Cron executes"), with the task's current nextRun and lastRun. It
// does not change the Tracker.
func (t *Tracker) Tick(task uuid.UUID, at time.Time) (Row, error) {
	st := t.tasks[task]
	if st == nil {
		return Row{}, fmt.Errorf("%w: tick for %s", ErrUnknownTask, task)
	}
	row := Row{At: at.UTC(), TaskID: task, Event: EventTick}
	fill(&row, st)
	return row, nil
}

// Rows folds the events of one task stream, in order, into its rows.
func Rows(recs []events.Recorded) ([]Row, error) {
	var t Tracker
	out := make([]Row, 0, len(recs))
	for _, r := range recs {
		row, err := t.Apply(r)
		if err != nil {
			return out, err
		}
		out = append(out, row)
	}
	return out, nil
}
