package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// updateBody is PATCH /v1/tasks/{id}: every field optional.
type updateBody struct {
	Payload   json.RawMessage `json:"payload"`
	Interval  *string         `json:"interval"`
	Tolerance *string         `json:"tolerance"`
	Timebox   *string         `json:"timebox"`
	Priority  *int            `json:"priority"`
	NextRun   *string         `json:"next_run"`
	scheduleBody
	// MaxWaiting replaces the bound on waiting runs (R18).
	MaxWaiting *int `json:"max_waiting"`
	policyBody
	// HistoryRetention replaces the task's history retention; "0s"
	// restores the server's default.
	HistoryRetention *string `json:"history_retention"`
}

func (a *api) update(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	opts, err := ifMatch(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	var b updateBody
	raw, err := decodeBody(r, &b)
	if err != nil {
		a.fail(w, err)
		return
	}
	// Only the fields the body names go to the task's actor, which applies
	// them to its current state: two PATCHes of different fields both
	// survive.
	u := scheduler.TaskUpdate{Payload: b.Payload, Priority: b.Priority}
	if b.Interval != nil {
		d, err := parseDuration("interval", *b.Interval)
		if err != nil {
			a.fail(w, err)
			return
		}
		if d <= 0 {
			a.fail(w, &fieldErr{"interval", "must be positive"})
			return
		}
		u.Interval = &d
	}
	if b.Tolerance != nil {
		d, err := parseDuration("tolerance", *b.Tolerance)
		if err != nil {
			a.fail(w, err)
			return
		}
		u.Tolerance = &d
	}
	if b.Timebox != nil {
		d, err := parseDuration("timebox", *b.Timebox)
		if err != nil {
			a.fail(w, err)
			return
		}
		if d <= 0 {
			a.fail(w, &fieldErr{"timebox", "must be positive"})
			return
		}
		u.Timebox = &d
	}
	if b.NextRun != nil {
		t, err := parseSpecTime("next_run", *b.NextRun)
		if err != nil {
			a.fail(w, err)
			return
		}
		u.NextRun = &t
	}
	sc, err := b.scheduleBody.parse()
	if err != nil {
		a.fail(w, err)
		return
	}
	if n := btoi(b.Interval != nil) + btoi(b.hasCron()) + btoi(b.At != nil); n > 1 {
		a.fail(w, &fieldErr{"schedule", "give at most one of interval, cron and at"})
		return
	}
	u.Cron, u.At, u.Timezone, u.DSTGap, u.DSTOverlap, u.Exclude = sc.cron, sc.at, sc.timezone, sc.dstGap, sc.dstOverlap, sc.exclude
	u.StartAt, u.EndAt, u.MaxRuns, u.Jitter = sc.startAt, sc.endAt, sc.maxRuns, sc.jitter
	if b.MaxWaiting != nil {
		n, err := maxWaiting(b.MaxWaiting)
		if err != nil {
			a.fail(w, err)
			return
		}
		u.MaxWaiting = &n
	}
	pol, err := b.policyBody.parse(nullField(raw, "retry"), nullField(raw, "pause_after_failures"))
	if err != nil {
		a.fail(w, err)
		return
	}
	pol.update(&u)
	if u.HistoryRetention, err = historyRetention(b.HistoryRetention); err != nil {
		a.fail(w, err)
		return
	}
	t, err := a.cfg.Scheduler.UpdateTask(r.Context(), id, u, opts...)
	a.answer(w, r, t, err)
}

// etag is the entity tag of a task at a version: the task stream's version,
// quoted.
func etag(version uint64) string { return `"` + strconv.FormatUint(version, 10) + `"` }

func setETag(w http.ResponseWriter, t crontasks.Task) { w.Header().Set("ETag", etag(t.Version)) }

// ifMatch reads an If-Match header: one entity tag as ETag gives it (a weak
// one, W/"7", is taken as "7"), or "*" for any version. Absent or "*": no
// condition.
func ifMatch(r *http.Request) ([]scheduler.WriteOption, error) {
	h := strings.TrimSpace(r.Header.Get("If-Match"))
	if h == "" || h == "*" {
		return nil, nil
	}
	tag := strings.TrimPrefix(h, "W/")
	if len(tag) >= 2 && tag[0] == '"' && tag[len(tag)-1] == '"' {
		if v, err := strconv.ParseUint(tag[1:len(tag)-1], 10, 64); err == nil {
			return []scheduler.WriteOption{scheduler.IfVersion(v)}, nil
		}
	}
	return nil, &fieldErr{"If-Match", fmt.Sprintf("must be one entity tag as ETag gives it (e.g. %s) or *, got %q", etag(7), h)}
}
