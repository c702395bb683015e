package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/events"
)

// createBody is POST /v1/tasks.
type createBody struct {
	Name      string          `json:"name"`
	Owner     string          `json:"owner"`
	Kind      string          `json:"kind"`
	Payload   json.RawMessage `json:"payload"`
	Interval  string          `json:"interval"`
	Tolerance *string         `json:"tolerance"`
	Timebox   *string         `json:"timebox"`
	Priority  int             `json:"priority"`
	FirstRun  string          `json:"first_run"`
	scheduleBody
	// MaxWaiting bounds the task's waiting runs (R18); absent: the default.
	MaxWaiting *int `json:"max_waiting"`
	policyBody
	// HistoryRetention is how long the task's events are kept (DESIGN
	// §8.3), a Go duration; absent or "0s": the server's default.
	HistoryRetention *string `json:"history_retention"`
}

// historyRetention checks a history_retention the API is given.
func historyRetention(s *string) (*time.Duration, error) {
	if s == nil {
		return nil, nil
	}
	d, err := parseDuration("history_retention", *s)
	if err != nil {
		return nil, err
	}
	if d < 0 {
		return nil, &fieldErr{"history_retention", fmt.Sprintf("must not be negative, got %s", d)}
	}
	return &d, nil
}

// maxWaiting checks a max_waiting the API is given: the bound itself, never
// 0 (leave it out for the default); the task's rules check the upper limit.
func maxWaiting(n *int) (int, error) {
	if n == nil {
		return 0, nil
	}
	if *n < 1 {
		return 0, &fieldErr{"max_waiting", fmt.Sprintf("must be at least 1 (leave it out for the default, %d), got %d",
			events.DefaultMaxWaiting, *n)}
	}
	return *n, nil
}

func (b createBody) spec() (scheduler.TaskSpec, error) {
	var s scheduler.TaskSpec
	for _, f := range []struct{ name, v string }{{"name", b.Name}, {"owner", b.Owner}, {"kind", b.Kind}} {
		if strings.TrimSpace(f.v) == "" {
			return s, &fieldErr{f.name, "is required"}
		}
	}
	// Exactly one schedule kind.
	kinds := []string{}
	if b.Interval != "" {
		kinds = append(kinds, "interval")
	}
	if b.hasCron() {
		kinds = append(kinds, "cron")
	}
	if b.At != nil {
		kinds = append(kinds, "at")
	}
	switch len(kinds) {
	case 0:
		return s, &fieldErr{"interval", "a schedule is required: give one of interval, cron and at"}
	case 1:
	default:
		return s, &fieldErr{kinds[1], fmt.Sprintf("give exactly one of interval, cron and at, not %s", strings.Join(kinds, " and "))}
	}
	iv, err := parseDuration("interval", b.Interval)
	if err != nil {
		return s, err
	}
	s = scheduler.TaskSpec{Name: b.Name, Owner: b.Owner, Kind: b.Kind, Payload: b.Payload, Interval: iv, Priority: b.Priority}
	if string(b.Payload) == "null" {
		s.Payload = nil
	}
	if b.Tolerance != nil {
		if s.Tolerance, err = parseDuration("tolerance", *b.Tolerance); err != nil {
			return s, err
		}
		s.ToleranceSet = true
	}
	if b.Timebox != nil {
		if s.Timebox, err = parseDuration("timebox", *b.Timebox); err != nil {
			return s, err
		}
		if s.Timebox <= 0 {
			return s, &fieldErr{"timebox", "must be positive"}
		}
	}
	if s.FirstRun, err = parseSpecTime("first_run", b.FirstRun); err != nil {
		return s, err
	}
	if b.FirstRun != "" && iv == 0 {
		return s, &fieldErr{"first_run", "applies to interval tasks; a cron or at task starts at its first slot (use start_at)"}
	}
	sc, err := b.scheduleBody.parse()
	if err != nil {
		return s, err
	}
	s.Cron, s.At = sc.cron, sc.at
	s.Timezone, s.DSTGap, s.DSTOverlap = deref(sc.timezone), deref(sc.dstGap), deref(sc.dstOverlap)
	if sc.exclude != nil && len(*sc.exclude) > 0 {
		s.Exclude = *sc.exclude
	}
	s.StartAt, s.EndAt = derefTime(sc.startAt), derefTime(sc.endAt)
	if sc.maxRuns != nil {
		s.MaxRuns = *sc.maxRuns
	}
	if sc.jitter != nil {
		s.Jitter = *sc.jitter
	}
	if s.MaxWaiting, err = maxWaiting(b.MaxWaiting); err != nil {
		return s, err
	}
	pol, err := b.policyBody.parse(false, false)
	if err != nil {
		return s, err
	}
	pol.spec(&s)
	hr, err := historyRetention(b.HistoryRetention)
	if err != nil {
		return s, err
	}
	if hr != nil {
		s.HistoryRetention = *hr
	}
	return s, nil
}

func (a *api) create(w http.ResponseWriter, r *http.Request) {
	var b createBody
	if err := decode(r, &b); err != nil {
		a.fail(w, err)
		return
	}
	spec, err := b.spec()
	if err != nil {
		a.fail(w, err)
		return
	}
	t, created, err := a.cfg.Scheduler.CreateTask(r.Context(), spec)
	if err != nil {
		a.fail(w, err) // a *scheduler.SpecConflictError is a 409 (reply.go)
		return
	}
	row, err := a.row(r.Context(), t.ID, t.Position)
	if err != nil {
		a.fail(w, err)
		return
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK
	}
	setETag(w, row)
	writeJSON(w, status, row)
}
