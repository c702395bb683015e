package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/audit"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// The audit endpoints serve what `cronactor history` and `cronactor explain`
// print, computed by projections/history on the server, so that a browser
// shows the same words without folding events itself.

// HistoryRow is one line of GET /v1/tasks/{id}/history: a row of the audit
// trail with the text `cronactor history` prints in its Event column.
type HistoryRow struct {
	At       time.Time  `json:"at"`
	Event    string     `json:"event"`
	Text     string     `json:"text"`
	Run      int        `json:"run,omitempty"`
	RunID    *uuid.UUID `json:"run_id,omitempty"`
	NextRun  *time.Time `json:"next_run"`
	LastRun  *time.Time `json:"last_run"`
	Status   string     `json:"status"`
	Reason   string     `json:"reason,omitempty"`
	Detail   string     `json:"detail,omitempty"`
	Deadline *time.Time `json:"deadline,omitempty"`
	Position string     `json:"position"`
	// Version is the event's stream version: what before and after name.
	Version uint64 `json:"version"`
	// Attempt is set on the rows of a retry (attempt > 1, R13), RetryOf
	// on its enqueue; Trigger is "manual" on a manually triggered run's
	// rows (R15). A failure or forced end that is retried gives the retry's
	// due time and the backoff chosen; one that is not says why (no_retry).
	Attempt int        `json:"attempt,omitempty"`
	RetryOf *uuid.UUID `json:"retry_of,omitempty"`
	Trigger string     `json:"trigger,omitempty"`
	RetryAt *time.Time `json:"retry_at,omitempty"`
	Backoff string     `json:"backoff,omitempty"`
	NoRetry string     `json:"no_retry,omitempty"`
}

// HistoryBody is GET /v1/tasks/{id}/history?since=RFC3339&limit=N
// [&before=V|&after=V]: a page of the task's rows, read from the end of
// its stream (the latest limit rows; before=V: the latest below stream
// version V; after=V: the first above V), without the rows decided before
// since. limit defaults to and is at most 10000. Truncated says older rows
// (at or after since) were left out; Prev, when set, is the before of the
// page of older rows, Next the after of the page of newer ones. Every row
// is the one the fold of the whole stream gives: a page is folded from the
// nearest mark before it (projections/audit), so it costs its rows and at
// most a mark interval more, whatever its depth, once the marks before it
// exist.
type HistoryBody struct {
	TaskID    uuid.UUID    `json:"task_id"`
	Task      string       `json:"task"`
	Rows      []HistoryRow `json:"rows"`
	Truncated bool         `json:"truncated"`
	Prev      string       `json:"prev,omitempty"`
	Next      string       `json:"next,omitempty"`
	// Head is the stream version of the task's latest event.
	Head uint64 `json:"head"`
	// Exact is false when the rows were folded from a look-back of
	// history.Lookback events, not from an exact starting point
	// (Config.AuditMaxFold): a status, spec or waiting run set before the
	// look-back may not show in them.
	Exact bool `json:"exact"`
}

// maxHistoryRows bounds one history answer.
const maxHistoryRows = 10000

// auditErr maps the audit reader's errors to the API's.
func auditErr(err error) error {
	if errors.Is(err, audit.ErrNotFound) {
		return scheduler.ErrTaskNotFound
	}
	return err
}

func onlyParams(r *http.Request, names ...string) error {
	for k := range r.URL.Query() {
		known := false
		for _, n := range names {
			known = known || k == n
		}
		if !known {
			return &fieldErr{k, "unknown query parameter"}
		}
	}
	return nil
}

func (a *api) history(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err == nil {
		err = onlyParams(r, "since", "limit", "before", "after")
	}
	if err != nil {
		a.fail(w, err)
		return
	}
	q := r.URL.Query()
	since, err := parseTime("since", q.Get("since"))
	if err != nil {
		a.fail(w, err)
		return
	}
	rg := audit.Range{Limit: maxHistoryRows}
	if l := q.Get("limit"); l != "" {
		if rg.Limit, err = strconv.Atoi(l); err != nil || rg.Limit < 1 || rg.Limit > maxHistoryRows {
			a.fail(w, &fieldErr{"limit", fmt.Sprintf("must be a number from 1 to %d", maxHistoryRows)})
			return
		}
	}
	if q.Has("after") && q.Has("before") {
		a.fail(w, &fieldErr{"before", "give after or before, not both"})
		return
	}
	if q.Has("before") {
		v, err := parseBefore(q.Get("before"))
		if err != nil {
			a.fail(w, err)
			return
		}
		rg.Before = &v
	}
	if s := q.Get("after"); q.Has("after") {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			a.fail(w, &fieldErr{"after", fmt.Sprintf("must be a stream version (the \"next\" of the previous page), got %q", s)})
			return
		}
		rg.After = &v
	}
	page, err := a.audit.ReadPage(r.Context(), id, rg)
	if err != nil {
		a.fail(w, auditErr(err))
		return
	}
	rows := page.Rows
	body := HistoryBody{TaskID: id, Rows: []HistoryRow{}, Head: page.Head, Exact: page.Exact}
	if len(rows) > 0 {
		body.Task = rows[len(rows)-1].Task
	}
	first := 0
	for first < len(rows) && rows[first].At.Before(since) {
		first++
	}
	if first == 0 && page.Older() {
		// Older rows exist; they count as left out when they are at or
		// after since (the row just before the page is decided no later
		// than the page's first).
		body.Truncated = len(rows) > 0 && !rows[0].At.Before(since)
		body.Prev = strconv.FormatUint(page.Events[0].Version, 10)
	}
	if page.Newer() {
		body.Next = strconv.FormatUint(page.Events[len(page.Events)-1].Version, 10)
	}
	tf := history.Absolute()
	for _, row := range rows[first:] {
		hr := HistoryRow{At: row.At, Event: row.Event, Text: row.Text(tf), Run: row.Run, NextRun: row.NextRun,
			LastRun: row.LastRun, Status: row.Status, Reason: row.Reason, Detail: row.Detail,
			Deadline: row.Deadline, Position: row.Position.String(), Version: row.Version}
		if row.Run > 0 {
			rid := row.RunID
			hr.RunID = &rid
		}
		if row.Attempt > 1 {
			hr.Attempt = row.Attempt
		}
		if row.RetryOf != uuid.Nil && row.Event == "RunEnqueued" {
			of := row.RetryOf
			hr.RetryOf = &of
		}
		hr.Trigger, hr.RetryAt, hr.NoRetry = row.Trigger, row.RetryAt, row.NoRetry
		if row.RetryAt != nil {
			hr.Backoff = row.Backoff.String()
		}
		body.Rows = append(body.Rows, hr)
	}
	writeJSON(w, http.StatusOK, body)
}

// ExplainDecision is one decision around the explained time.
type ExplainDecision struct {
	At    time.Time `json:"at"`
	Event string    `json:"event"`
	Run   int       `json:"run,omitempty"`
	Rule  string    `json:"rule,omitempty"`
	Text  string    `json:"text"`
	// Before is true for decisions at or before the explained time.
	Before bool `json:"before"`
}

// ExplainRun is a run waiting or running at the explained time.
type ExplainRun struct {
	Run      int        `json:"run"`
	RunID    uuid.UUID  `json:"run_id"`
	Since    time.Time  `json:"since"`
	Deadline *time.Time `json:"deadline,omitempty"`
	// Attempt (when > 1) and Trigger say what kind of run it is.
	Attempt int    `json:"attempt,omitempty"`
	Trigger string `json:"trigger,omitempty"`
}

// ExplainRetry is a retry due and not yet enqueued at the explained time
// (R13).
type ExplainRetry struct {
	Of      int       `json:"of_run"`
	OfID    uuid.UUID `json:"of_run_id"`
	Attempt int       `json:"attempt"`
	Due     time.Time `json:"due"`
	Backoff string    `json:"backoff"`
}

// ExplainBody is GET /v1/tasks/{id}/explain?at=RFC3339[&window=DUR]: the
// answer of `cronactor explain`, as data and as the text the command prints.
type ExplainBody struct {
	TaskID    uuid.UUID         `json:"task_id"`
	Task      string            `json:"task"`
	At        time.Time         `json:"at"`
	Exists    bool              `json:"exists"`
	Verdict   string            `json:"verdict"`
	Status    string            `json:"status,omitempty"`
	Since     *time.Time        `json:"since,omitempty"`
	NextRun   *time.Time        `json:"next_run"`
	LastRun   *time.Time        `json:"last_run"`
	Queued    []ExplainRun      `json:"queued"`
	Running   []ExplainRun      `json:"running"`
	Retries   []ExplainRetry    `json:"retries"`
	Window    events.Duration   `json:"window"`
	Decisions []ExplainDecision `json:"decisions"`
	Text      string            `json:"text"`
	// Exact: as HistoryBody.Exact.
	Exact bool `json:"exact"`
}

func (a *api) explain(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err == nil {
		err = onlyParams(r, "at", "window")
	}
	if err != nil {
		a.fail(w, err)
		return
	}
	q := r.URL.Query()
	if q.Get("at") == "" {
		a.fail(w, &fieldErr{"at", "is required: the time to explain, RFC 3339"})
		return
	}
	at, err := time.Parse(time.RFC3339Nano, q.Get("at"))
	if err != nil {
		a.fail(w, &fieldErr{"at", fmt.Sprintf("must be an RFC 3339 time like \"2026-01-02T15:04:05Z\", got %q", q.Get("at"))})
		return
	}
	window, err := parseDuration("window", q.Get("window"))
	if err != nil {
		a.fail(w, err)
		return
	}
	if window < 0 {
		a.fail(w, &fieldErr{"window", "must not be negative"})
		return
	}
	ex, exact, err := a.audit.ExplainExact(r.Context(), id, at, window)
	if err != nil {
		a.fail(w, auditErr(err))
		return
	}
	tf := history.Absolute()
	var text strings.Builder
	if err := ex.Write(&text, tf); err != nil {
		a.fail(w, err)
		return
	}
	body := ExplainBody{TaskID: ex.TaskID, Task: ex.Task, At: ex.At, Exists: ex.Exists, Verdict: ex.Verdict(tf),
		Status: ex.Status, NextRun: ex.NextRun, LastRun: ex.LastRun, Window: events.Duration(ex.Window),
		Queued: runs(ex.Queued), Running: runs(ex.Running), Retries: []ExplainRetry{}, Decisions: []ExplainDecision{}, Text: text.String(), Exact: exact}
	if ex.Exists {
		since := ex.Since
		body.Since = &since
	}
	for _, p := range ex.Retries {
		body.Retries = append(body.Retries, ExplainRetry{Of: p.Of, OfID: p.OfID, Attempt: p.Attempt, Due: p.Due, Backoff: p.Backoff.String()})
	}
	for i, d := range ex.Decisions {
		body.Decisions = append(body.Decisions, ExplainDecision{At: d.Row.At, Event: d.Row.Event, Run: d.Row.Run,
			Rule: d.Rule, Text: d.Text(tf), Before: i < ex.Before})
	}
	writeJSON(w, http.StatusOK, body)
}

func runs(rs []history.RunState) []ExplainRun {
	out := make([]ExplainRun, 0, len(rs))
	for _, r := range rs {
		er := ExplainRun{Run: r.Run, RunID: r.RunID, Since: r.Since, Deadline: r.Deadline, Trigger: r.Trigger}
		if r.Attempt > 1 {
			er.Attempt = r.Attempt
		}
		out = append(out, er)
	}
	return out
}
