package crontasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/taskstate"
	"github.com/google/uuid"
)

// Task statuses.
const (
	StatusActive  = "active"
	StatusPaused  = "paused"
	StatusDeleted = "deleted"
	// StatusFinished: no slot is left (R10).
	StatusFinished = events.StatusFinished
)

// Outcomes of a run (Outcome.Outcome).
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
	OutcomeForcedEnd = "forced_end"
	OutcomeDropped   = "dropped"
)

// ErrOrphanEvent: a task stream has an event before its TaskCreated.
var ErrOrphanEvent = errors.New("crontasks: event of a task that was never created")

// Task is one row of the cron_tasks view, as the HTTP API returns it.
// Times are UTC; durations are Go duration strings in JSON.
type Task struct {
	ID      uuid.UUID       `json:"id"`
	Name    string          `json:"name"`
	Owner   string          `json:"owner"`
	Kind    string          `json:"kind"`
	Payload json.RawMessage `json:"payload"`
	// The schedule as written: interval, or cron (a list) or at (RFC 3339
	// instants) with the zone they are read and shown in (UTC unless
	// given) and, for cron, the DST policies in force. In the JSON every
	// field of the schedule and its window is present, null when the
	// task's schedule has none (MarshalJSON).
	Interval   events.Duration `json:"interval,omitempty"`
	Cron       []string        `json:"cron,omitempty"`
	At         []time.Time     `json:"at,omitempty"`
	Timezone   string          `json:"timezone,omitempty"`
	DSTGap     string          `json:"dst_gap,omitempty"`
	DSTOverlap string          `json:"dst_overlap,omitempty"`
	// Exclude: the dates and expressions a cron schedule leaves out.
	Exclude []string `json:"exclude,omitempty"`
	// The window, when set: no slot before StartAt or after EndAt, at most
	// MaxRuns scheduled runs, every slot moved by up to Jitter.
	StartAt   *time.Time      `json:"start_at,omitempty"`
	EndAt     *time.Time      `json:"end_at,omitempty"`
	MaxRuns   int             `json:"max_runs,omitempty"`
	Jitter    events.Duration `json:"jitter,omitempty"`
	Tolerance events.Duration `json:"tolerance"`
	Timebox   events.Duration `json:"timebox"`
	Priority  int             `json:"priority"`
	// Status is active, paused, finished or deleted.
	Status string `json:"status"`
	// NextRun is when the task is next due; LastRun the start of the latest
	// scheduled first attempt that started (R3; nil before the first) and
	// LastRunNumber that run's number (null in the JSON before the first).
	// How the latest run that ended, ended is LastOutcome: another run,
	// often (a retry, a trigger, or the run that started last still runs).
	NextRun       *time.Time `json:"next_run"`
	LastRun       *time.Time `json:"last_run"`
	LastRunNumber int        `json:"last_run_number"`
	// The counters are this incarnation's: a task created again after a
	// delete starts them at zero, and runs of the earlier incarnation that
	// end later are not counted. RunCount counts runs enqueued; each ends
	// in exactly one of completed, dropped, forced or failed, and
	// PendingCount are those not ended yet (queued or running).
	RunCount       int64 `json:"run_count"`
	StartedCount   int64 `json:"started_count"`
	CompletedCount int64 `json:"completed_count"`
	DroppedCount   int64 `json:"dropped_count"`
	ForcedCount    int64 `json:"forced_count"`
	FailedCount    int64 `json:"failed_count"`
	PendingCount   int64 `json:"pending_count"`
	// MissedCount sums the whole intervals skipped by enqueues after
	// downtime (R8) or a backlog (R18).
	MissedCount int64 `json:"missed_count"`
	// MaxWaiting is the most runs of the task that wait in the queue at
	// once (R18): the task's own bound, or the default 3.
	MaxWaiting int `json:"max_waiting"`
	// The run policy in force (R12–R16, docs/policies.md), every field
	// present: Queue the named queue its runs wait in ("default" unless
	// the task names one); Retry the retry policy, null for none (one
	// attempt); MissedRunPolicy "run_once" (the default) or "skip";
	// MissedAfter, StartDeadline and HeartbeatTimeout null when unset
	// (their defaults: one spacing; no deadline; no heartbeat check).
	// HistoryRetention is the task's own history retention (DESIGN
	// §8.3); absent when it sets none (the scheduler's default applies).
	HistoryRetention events.Duration `json:"history_retention,omitempty"`
	// Compacted is when the task's history was last compacted: its events
	// before then may have been removed (absent: never).
	CompactedAt      *time.Time       `json:"compacted_at,omitempty"`
	Queue            string           `json:"queue"`
	Retry            *Retry           `json:"retry"`
	MissedRunPolicy  string           `json:"missed_run_policy"`
	MissedAfter      *events.Duration `json:"missed_after"`
	StartDeadline    *events.Duration `json:"start_deadline"`
	HeartbeatTimeout *events.Duration `json:"heartbeat_timeout"`
	// Overlap is the overlap policy in force ("skip" unless the task names
	// another, DESIGN §8.4); PauseAfterFailures the task's
	// pause_after_failures, null when unset; ConsecutiveFailures the slots
	// in a row whose run failed after its retries (0 after a success or a
	// resume); PauseReason "failures" while the task is paused because
	// they reached pause_after_failures, null otherwise (active, or
	// paused by a user).
	Overlap             string  `json:"overlap"`
	PauseAfterFailures  *int    `json:"pause_after_failures"`
	ConsecutiveFailures int     `json:"consecutive_failures"`
	PauseReason         *string `json:"pause_reason"`
	// RetryCount counts the runs enqueued as retries of a failed run (R13;
	// each is also in RunCount), TriggerCount those a manual trigger
	// enqueued (R15).
	RetryCount   int64 `json:"retry_count"`
	TriggerCount int64 `json:"trigger_count"`
	// BackfillCount counts the runs a backfill enqueued for past slots
	// (DESIGN §8.4; each is also in RunCount); BackfillPending the slots a
	// backfill asked for that wait for room to be enqueued (0: none).
	BackfillCount   int64 `json:"backfill_count"`
	BackfillPending int   `json:"backfill_pending"`
	// RunState is what the task is doing now: RunIdle (no run enqueued
	// and without an outcome), RunQueued (runs wait, none runs) or
	// RunRunning. RunID is then the run that runs (the latest started) or
	// the oldest one waiting, RunNumber its number, RunAttempt its attempt
	// (R13); RunEnqueuedAt when it was enqueued and RunStartedAt when it
	// started (running only). All are absent when idle.
	RunState      string     `json:"run_state"`
	RunID         *uuid.UUID `json:"run_id,omitempty"`
	RunNumber     int        `json:"run_number,omitempty"`
	RunAttempt    int        `json:"run_attempt,omitempty"`
	RunEnqueuedAt *time.Time `json:"run_enqueued_at,omitempty"`
	RunStartedAt  *time.Time `json:"run_started_at,omitempty"`
	// NextRetry is when the earliest retry a failure promised and no tick
	// has enqueued yet falls due (R13); null when none is pending.
	NextRetry *time.Time `json:"next_retry"`
	// Checkpoint is the one the next run is handed (R5): what the latest
	// run of this incarnation that ended left.
	Checkpoint json.RawMessage `json:"checkpoint"`
	// LastOutcome is how the latest run of this incarnation that ended,
	// ended (null before the first). The JSON repeats its run and time as
	// last_outcome_run and last_outcome_at (MarshalJSON).
	LastOutcome *Outcome `json:"last_outcome"`
	// Incarnation counts the task's creations: 1, or 2 once it was
	// deleted and created again (same owner and name), … The counts and
	// CreatedAt are the current incarnation's.
	Incarnation int        `json:"incarnation"`
	CreatedAt   time.Time  `json:"created_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
	DeletedAt   *time.Time `json:"deleted_at,omitempty"`
	// DeleteReason says why in words (e.g. the owner was deleted).
	DeleteReason string `json:"delete_reason,omitempty"`
	// Version is the stream version of the last event folded, Position its
	// global position (events.Position.String form).
	Version  uint64 `json:"version"`
	Position string `json:"position"`

	// fold is the task's state the row derives from; the view stores it
	// with the row (encodeRow) to fold the next event.
	fold *taskstate.State
}

// Run states (Task.RunState).
const (
	RunIdle    = "idle"
	RunQueued  = "queued"
	RunRunning = "running"
)

// Retry is a task's retry policy as the row shows it (R13): a failed run
// with attempts left is retried after min(initial_backoff ×
// multiplier^(attempt-1), max_backoff). MaxAttempts counts the first try.
type Retry struct {
	MaxAttempts    int             `json:"max_attempts"`
	InitialBackoff events.Duration `json:"initial_backoff"`
	MaxBackoff     events.Duration `json:"max_backoff"`
	Multiplier     float64         `json:"multiplier"`
}

// Outcome is how one run ended. Attempt is the run's attempt (R13: 1 for
// a first try, 2 for its first retry, …); Trigger "manual" for a run a
// trigger enqueued (R15).
type Outcome struct {
	Run     int       `json:"run"`
	RunID   uuid.UUID `json:"run_id"`
	Attempt int       `json:"attempt"`
	Trigger string    `json:"trigger,omitempty"`
	Outcome string    `json:"outcome"`
	At      time.Time `json:"at"`
	Reason  string    `json:"reason,omitempty"`
	Detail  string    `json:"detail,omitempty"`
}

func tp(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// Evolve folds one event of a task into its row and returns the new row.
// cur is nil before the task's TaskCreated. It is pure: the view, AsOf and
// tests all fold through it.
//
// The row's shared fields (spec, status, nextRun, lastRun, checkpoint,
// created_at) are the task's state as the one fold of a task stream
// (events/taskstate) leaves it; the row keeps that state beside it (Fold)
// and adds only counters, the last outcome, the last start's run number
// and the deletion's time and reason. Everything but the deletion belongs
// to the current incarnation: a TaskCreated after a delete starts the
// counters at zero, and a run of the earlier incarnation that starts or
// ends afterwards counts in none of them (it was counted, enqueued, in
// the incarnation it belonged to).
func Evolve(cur *Task, m events.Metadata, ev events.Event) (*Task, error) {
	at := m.At.UTC()
	// The row and the state it keeps share one allocation: a fold
	// allocates per event.
	rf := &rowFold{}
	t := &rf.row
	var prev taskstate.State
	switch {
	case cur != nil:
		*t = *cur
		if cur.fold == nil {
			return nil, fmt.Errorf("crontasks: row of task %s has no fold state", cur.ID)
		}
		prev = *cur.fold
	case isCreated(ev):
	default:
		return nil, fmt.Errorf("%w: %s %s@%d", ErrOrphanEvent, ev.EventType(), m.Stream, m.Version)
	}
	rf.fold = taskstate.Evolve(prev, m, ev)
	st := &rf.fold
	// current reports whether run id belongs to this incarnation (a run
	// the state does not know counts as this incarnation's).
	current := func(id uuid.UUID) bool {
		r, ok := prev.Run(id)
		return !ok || prev.Current(r)
	}
	// end records an outcome of a run of this incarnation: counted, and
	// the last outcome. It reports false for an earlier incarnation's.
	end := func(run int, id uuid.UUID, outcome, reason, detail string) bool {
		r, ok := prev.Run(id)
		if ok && !prev.Current(r) {
			return false
		}
		t.LastOutcome = &Outcome{Run: run, RunID: id, Attempt: max(r.Attempt, 1), Trigger: r.Trigger,
			Outcome: outcome, At: at, Reason: reason, Detail: detail}
		return true
	}
	switch e := ev.(type) {
	case events.TaskCreated:
		// A new incarnation starts clean: no trace of the deletion, the
		// old outcomes or the old counts.
		t.DeletedAt, t.DeleteReason, t.LastOutcome, t.LastRunNumber = nil, "", nil, 0
		t.resetCounts()
	case events.TaskUpdated, events.TaskPaused, events.TaskResumed, events.TaskFinished:
	case events.SlotsMissed:
		// R14 skip: no run, the slots count as missed.
		t.MissedCount += int64(e.Missed)
	case events.TaskDeleted:
		t.DeletedAt, t.DeleteReason = tp(at), e.Reason
	case events.RunEnqueued:
		t.RunCount++
		t.MissedCount += int64(e.Missed)
		if e.Attempt > 1 {
			t.RetryCount++
		}
		switch e.Trigger {
		case events.TriggerManual:
			t.TriggerCount++
		case events.TriggerBackfill:
			t.BackfillCount++
		}
	case events.BackfillRequested:
		// Its slots wait in the state (BackfillPending, below); its runs
		// are RunEnqueued events.
	case events.RunStarted:
		if current(e.RunID) {
			t.StartedCount++
		}
		// The run whose start is lastRun (taskstate's rule: a scheduled
		// first attempt of this incarnation).
		if r, ok := prev.Run(e.RunID); !ok || (prev.Current(r) && r.First()) {
			t.LastRunNumber = e.Run
		}
	case events.RunCompleted:
		if end(e.Run, e.RunID, OutcomeCompleted, "", "") {
			t.CompletedCount++
		}
	case events.RunFailed:
		if end(e.Run, e.RunID, OutcomeFailed, "", e.Error) {
			t.FailedCount++
		}
	case events.RunDropped:
		if end(e.Run, e.RunID, OutcomeDropped, e.Reason, e.Detail) {
			t.DroppedCount++
		}
	case events.RunForcedEnd:
		if end(e.Run, e.RunID, OutcomeForcedEnd, e.Reason, e.Detail) {
			t.ForcedCount++
		}
	case events.CheckpointSaved:
	case events.TaskCompacted:
		if cur == nil {
			// The stream begins here: the events before were removed
			// (history retention). The state is exact; the counters
			// count what remains, the runs open at the cut as enqueued
			// (so pending_count stays exact; docs/decisions/0023-retention.md).
			t.RunCount = 0
			for _, r := range st.Open {
				if st.Current(r) {
					t.RunCount++
				}
			}
			if st.Status == taskstate.StatusDeleted {
				t.DeletedAt, t.DeleteReason = tp(st.DeletedAt), st.DeleteReason
			}
		}
	default:
		return nil, fmt.Errorf("crontasks: %s %s@%d: no rule to fold this event type", ev.EventType(), m.Stream, m.Version)
	}
	t.ID, t.Name, t.Owner, t.Kind, t.Payload = st.ID, st.Spec.Name, st.Spec.Owner, st.Spec.Kind, st.Spec.Payload
	t.Interval, t.Tolerance, t.Timebox, t.Priority = st.Spec.Schedule.Interval, events.Duration(st.Spec.Tolerance),
		events.Duration(st.Spec.Timebox), st.Spec.Priority
	t.setSchedule(st.Spec.Schedule, st.Spec.Window)
	t.Status = st.Status.String()
	t.MaxWaiting = st.Spec.WaitingBound()
	t.HistoryRetention = events.Duration(st.Spec.HistoryRetention)
	t.CompactedAt = tp(st.CompactedAt)
	t.setPolicy(st.Spec.Policy)
	t.ConsecutiveFailures = st.Failures
	t.BackfillPending = len(st.Backfill)
	t.PauseReason = nil
	if st.Status == taskstate.StatusPaused && st.PauseReason != "" {
		t.PauseReason = &st.PauseReason
	}
	t.setRunState(st)
	next, _ := st.NextRetry()
	t.NextRetry = tpKeep(t.NextRetry, next)
	t.NextRun, t.LastRun = tpKeep(t.NextRun, st.NextRun), tpKeep(t.LastRun, st.LastRun)
	t.Checkpoint = st.Checkpoint
	t.CreatedAt, t.Incarnation = st.CreatedAt.UTC(), st.Incarnation
	t.PendingCount = t.RunCount - t.CompletedCount - t.DroppedCount - t.ForcedCount - t.FailedCount
	t.UpdatedAt = at
	t.Version = m.Version
	t.Position = m.Position.String()
	t.fold = st
	return t, nil
}

// resetCounts starts the counters of a new incarnation.
func (t *Task) resetCounts() {
	t.RunCount, t.StartedCount, t.CompletedCount, t.DroppedCount, t.ForcedCount, t.FailedCount = 0, 0, 0, 0, 0, 0
	t.MissedCount, t.RetryCount, t.TriggerCount, t.BackfillCount = 0, 0, 0, 0
}

// rowFold is a row and the task state it derives from, allocated together.
type rowFold struct {
	row  Task
	fold taskstate.State
}

// tpKeep is tp(t), reusing old (the previous row's, never changed in
// place) when it already holds that time.
func tpKeep(old *time.Time, t time.Time) *time.Time {
	if old != nil && !t.IsZero() && *old == t.UTC() {
		return old
	}
	return tp(t)
}

// setSchedule shows the schedule as written, with the zone and policies in
// force for cron and at.
func (t *Task) setSchedule(sc events.Schedule, w events.Window) {
	t.Cron, t.At, t.Timezone, t.DSTGap, t.DSTOverlap, t.Exclude = sc.Cron, sc.At, sc.Timezone, sc.DSTGap, sc.DSTOverlap, sc.Exclude
	if !sc.IsInterval() && t.Timezone == "" {
		t.Timezone = "UTC"
	}
	if len(sc.Cron) > 0 {
		if t.DSTGap == "" {
			t.DSTGap = "shift"
		}
		if t.DSTOverlap == "" {
			t.DSTOverlap = "first"
		}
	}
	t.StartAt, t.EndAt, t.MaxRuns, t.Jitter = tp(w.Start()), tp(w.End()), w.MaxRuns, w.Jitter
}

// setPolicy shows the run policy with its defaults.
func (t *Task) setPolicy(p events.Policy) {
	t.Queue, t.MissedRunPolicy = p.QueueName(), p.MissedRunPolicy
	if t.MissedRunPolicy == "" {
		t.MissedRunPolicy = events.MissedRunOnce
	}
	old := t.Retry // the previous row's, never changed in place
	t.Retry = nil
	if r := p.Retry; r != nil && r.MaxAttempts > 1 {
		want := Retry{MaxAttempts: r.MaxAttempts, InitialBackoff: r.InitialBackoff, MaxBackoff: r.MaxBackoff, Multiplier: r.Multiplier}
		if t.Retry = old; old == nil || *old != want {
			t.Retry = &want
		}
	}
	t.MissedAfter, t.StartDeadline, t.HeartbeatTimeout = durPtr(t.MissedAfter, p.MissedAfter),
		durPtr(t.StartDeadline, p.StartDeadline), durPtr(t.HeartbeatTimeout, p.HeartbeatTimeout)
	t.Overlap = p.Overlap
	if t.Overlap == "" {
		t.Overlap = events.OverlapSkip
	}
	if n := p.PauseAfterFailures; n == 0 {
		t.PauseAfterFailures = nil
	} else if t.PauseAfterFailures == nil || *t.PauseAfterFailures != n {
		t.PauseAfterFailures = &n
	}
}

// durPtr is d as the row shows it, nil when unset, reusing old when it
// already holds d.
func durPtr(old *events.Duration, d events.Duration) *events.Duration {
	if d == 0 {
		return nil
	}
	if old != nil && *old == d {
		return old
	}
	return &d
}

// setRunState shows what the task is doing now, from its open runs.
func (t *Task) setRunState(st *taskstate.State) {
	t.RunState, t.RunID, t.RunNumber, t.RunAttempt, t.RunEnqueuedAt, t.RunStartedAt = RunIdle, nil, 0, 0, nil, nil
	var cur *taskstate.Run
	for i := range st.Open {
		r := &st.Open[i]
		switch {
		case r.Started && (cur == nil || !cur.Started || r.StartedAt.After(cur.StartedAt)):
			cur = r
		case !r.Started && cur == nil:
			cur = r
		}
	}
	if cur == nil {
		return
	}
	id := cur.ID
	t.RunState, t.RunID, t.RunNumber, t.RunAttempt, t.RunEnqueuedAt = RunQueued, &id, cur.Number, max(cur.Attempt, 1), tp(cur.EnqueuedAt)
	if cur.Started {
		t.RunState, t.RunStartedAt = RunRunning, tp(cur.StartedAt)
	}
}

// isCreated reports an event that may start a task's row: its
// TaskCreated, or the TaskCompacted a stream begins with once history
// retention removed the events before it.
func isCreated(ev events.Event) bool {
	switch ev.(type) {
	case events.TaskCreated, events.TaskCompacted:
		return true
	}
	return false
}

// Fold is the task's state as the one fold of its stream leaves it, which
// the row derives from; nil for a row decoded from the API's JSON.
func (t *Task) Fold() *taskstate.State { return t.fold }

// encodeRow is a row as the view stores it: the row's JSON with, under
// "_fold", the task state it derives from, so that the applier folds the
// next event from there. The API's JSON of a row (Task's own encoding)
// never carries it.
func encodeRow(t *Task) ([]byte, error) {
	type plain Task
	return json.Marshal(struct {
		*plain
		Fold *taskstate.State `json:"_fold,omitempty"`
	}{(*plain)(t), t.fold})
}

func decodeFold(b []byte) (*taskstate.State, error) {
	var s taskstate.State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	// JSON null comes back as the bytes "null"; the fold says nil.
	unnull := func(m *json.RawMessage) {
		if string(*m) == "null" {
			*m = nil
		}
	}
	unnull(&s.Spec.Payload)
	unnull(&s.Checkpoint)
	for i := range s.Open {
		unnull(&s.Open[i].Checkpoint)
	}
	return &s, nil
}

// MarshalJSON writes the row as the HTTP API returns it: every field of
// the schedule and its window present, null where the task's schedule
// has none (an interval task's cron, a cron task's interval, a window
// not set), so that every row carries the same keys (DESIGN §5, §2b).
// The view stores rows with encodeRow, not this.
func (t Task) MarshalJSON() ([]byte, error) {
	type plain Task
	// The fields before plain shadow its own and come first, in the
	// order the struct declares them.
	w := struct {
		ID         uuid.UUID        `json:"id"`
		Name       string           `json:"name"`
		Owner      string           `json:"owner"`
		Kind       string           `json:"kind"`
		Payload    json.RawMessage  `json:"payload"`
		Interval   *events.Duration `json:"interval"`
		Cron       []string         `json:"cron"`
		At         []time.Time      `json:"at"`
		Timezone   *string          `json:"timezone"`
		DSTGap     *string          `json:"dst_gap"`
		DSTOverlap *string          `json:"dst_overlap"`
		Exclude    []string         `json:"exclude"`
		StartAt    *time.Time       `json:"start_at"`
		EndAt      *time.Time       `json:"end_at"`
		MaxRuns    *int             `json:"max_runs"`
		Jitter     *events.Duration `json:"jitter"`
		// The latest start's run and the latest outcome's run and time,
		// null when there is none.
		LastRunNumber  *int       `json:"last_run_number"`
		LastOutcomeRun *int       `json:"last_outcome_run"`
		LastOutcomeAt  *time.Time `json:"last_outcome_at"`
		plain
	}{ID: t.ID, Name: t.Name, Owner: t.Owner, Kind: t.Kind, Payload: t.Payload,
		Interval: unlessZero(&t.Interval), Cron: t.Cron, At: t.At, Timezone: unlessZero(&t.Timezone),
		DSTGap: unlessZero(&t.DSTGap), DSTOverlap: unlessZero(&t.DSTOverlap), Exclude: t.Exclude, StartAt: t.StartAt, EndAt: t.EndAt,
		MaxRuns: unlessZero(&t.MaxRuns), Jitter: unlessZero(&t.Jitter), LastRunNumber: unlessZero(&t.LastRunNumber), plain: plain(t)}
	if o := t.LastOutcome; o != nil {
		w.LastOutcomeRun, w.LastOutcomeAt = &o.Run, &o.At
	}
	return json.Marshal(w)
}

// unlessZero is v, or nil when *v is its type's zero (JSON null).
func unlessZero[T comparable](v *T) *T {
	var zero T
	if *v == zero {
		return nil
	}
	return v
}

// UnmarshalJSON reads a row, turning a null payload or checkpoint back into
// nil, so a row read from the view equals the row that was folded.
func (t *Task) UnmarshalJSON(b []byte) error {
	type plain Task
	w := struct {
		*plain
		Fold json.RawMessage `json:"_fold"`
	}{plain: (*plain)(t)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	t.fold = nil
	if len(w.Fold) > 0 && string(w.Fold) != "null" {
		f, err := decodeFold(w.Fold)
		if err != nil {
			return fmt.Errorf("crontasks: the task state stored with row %s: %w", t.ID, err)
		}
		t.fold = f
	}
	if string(t.Payload) == "null" {
		t.Payload = nil
	}
	if string(t.Checkpoint) == "null" {
		t.Checkpoint = nil
	}
	if t.MaxWaiting == 0 {
		// A row stored before R18 names no bound: the task has the default.
		t.MaxWaiting = events.DefaultMaxWaiting
	}
	return nil
}
