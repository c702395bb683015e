package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
)

// scheduleBody holds the schedule fields of a create or PATCH body besides
// interval; every one is optional.
type scheduleBody struct {
	// Cron is one expression as a string, or a list of them (their slots
	// are united).
	Cron       json.RawMessage `json:"cron"`
	At         *[]string       `json:"at"`
	Timezone   *string         `json:"timezone"`
	DSTGap     *string         `json:"dst_gap"`
	DSTOverlap *string         `json:"dst_overlap"`
	// Exclude is one date or expression as a string, or a list of them
	// ([] clears it in a PATCH).
	Exclude json.RawMessage `json:"exclude"`
	StartAt *string         `json:"start_at"`
	EndAt   *string         `json:"end_at"`
	MaxRuns *int            `json:"max_runs"`
	Jitter  *string         `json:"jitter"`
}

// parsedSchedule is a scheduleBody read: nil where the body says nothing.
type parsedSchedule struct {
	cron                         []string
	at                           []time.Time
	timezone, dstGap, dstOverlap *string
	exclude                      *[]string
	startAt, endAt               *time.Time
	maxRuns                      *int
	jitter                       *time.Duration
}

// parse reads the fields, naming the one that is wrong. What they mean
// together (a zone that exists, an expression that matches, at in the
// future, end_at after start_at) the scheduler checks, naming the field too.
func (b scheduleBody) parse() (parsedSchedule, error) {
	var p parsedSchedule
	if b.hasCron() {
		var one string
		if err := json.Unmarshal(b.Cron, &one); err == nil {
			p.cron = []string{one}
		} else if err := json.Unmarshal(b.Cron, &p.cron); err != nil {
			return p, &fieldErr{"cron", "must be a cron expression or a list of them"}
		}
		if len(p.cron) == 0 {
			return p, &fieldErr{"cron", "must not be empty"}
		}
		for i, c := range p.cron {
			if strings.TrimSpace(c) == "" {
				return p, &fieldErr{"cron", fmt.Sprintf("expression %d is empty", i+1)}
			}
		}
	}
	if b.At != nil {
		if len(*b.At) == 0 {
			return p, &fieldErr{"at", "must list at least one RFC 3339 instant"}
		}
		p.at = []time.Time{}
		for i, s := range *b.At {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return p, &fieldErr{"at", fmt.Sprintf("instant %d must be an RFC 3339 time like \"2026-01-02T15:04:05Z\", got %q", i+1, s)}
			}
			p.at = append(p.at, t.UTC())
		}
	}
	p.timezone, p.dstGap, p.dstOverlap = b.Timezone, b.DSTGap, b.DSTOverlap
	if len(b.Exclude) > 0 && string(b.Exclude) != "null" {
		var list []string
		var one string
		if err := json.Unmarshal(b.Exclude, &one); err == nil {
			list = []string{one}
		} else if err := json.Unmarshal(b.Exclude, &list); err != nil {
			return p, &fieldErr{"exclude", "must be a date (2026-12-25) or cron expression, or a list of them"}
		}
		p.exclude = &list
	}
	for _, f := range []struct {
		name string
		in   *string
		out  **time.Time
	}{{"start_at", b.StartAt, &p.startAt}, {"end_at", b.EndAt, &p.endAt}} {
		if f.in == nil {
			continue
		}
		t, err := parseTime(f.name, *f.in)
		if err != nil {
			return p, err
		}
		*f.out = &t
	}
	if b.MaxRuns != nil {
		if *b.MaxRuns < 0 {
			return p, &fieldErr{"max_runs", fmt.Sprintf("must not be negative (0: no limit), got %d", *b.MaxRuns)}
		}
		p.maxRuns = b.MaxRuns
	}
	if b.Jitter != nil {
		d, err := parseDuration("jitter", *b.Jitter)
		if err != nil {
			return p, err
		}
		if d < 0 {
			return p, &fieldErr{"jitter", "must not be negative"}
		}
		p.jitter = &d
	}
	return p, nil
}

// hasCron reports a cron field in the body (JSON null says nothing).
func (b scheduleBody) hasCron() bool { return len(b.Cron) > 0 && string(b.Cron) != "null" }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Upcoming limits for GET /v1/tasks/{id}/upcoming.
const upcomingDefaultCount = 10

// upcoming answers GET /v1/tasks/{id}/upcoming?count=N: the task's next N
// slots (default 10, at most 1000) in its zone's offset, capped by the runs
// max_runs leaves and by end_at.
func (a *api) upcoming(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	q := r.URL.Query()
	for k, vs := range q {
		if k != "count" {
			writeErr(w, http.StatusBadRequest, k, "unknown parameter; upcoming takes count")
			return
		}
		if len(vs) > 1 {
			writeErr(w, http.StatusBadRequest, k, "give it once")
			return
		}
	}
	count := upcomingDefaultCount
	if s := q.Get("count"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > scheduler.MaxUpcoming {
			writeErr(w, http.StatusBadRequest, "count", fmt.Sprintf("must be a whole number from 1 to %d, got %q", scheduler.MaxUpcoming, s))
			return
		}
		count = n
	}
	slots, err := a.cfg.Scheduler.Upcoming(r.Context(), id, count)
	if err != nil {
		a.fail(w, err)
		return
	}
	ans := previewAnswer{Slots: []string{}}
	for _, t := range slots {
		ans.Slots = append(ans.Slots, t.Format(time.RFC3339))
	}
	writeJSON(w, http.StatusOK, ans)
}
