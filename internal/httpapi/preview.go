package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
)

// Preview limits for GET /v1/schedule/preview: count defaults to 10, at
// most 1000.
const (
	previewDefaultCount = 10
	previewMaxCount     = 1000
)

// previewParams are the query parameters the preview takes; cron may repeat
// (the slots of the expressions are united) and so may exclude (dates and
// expressions whose wall times are no slots), the others come at most once.
var previewParams = map[string]bool{"cron": true, "exclude": true, "timezone": true, "dst_gap": true, "dst_overlap": true, "from": true, "count": true}

// previewAnswer is the body of a preview: slots in RFC 3339 with the zone's
// offset, the same shape as a task's upcoming slots.
type previewAnswer struct {
	Slots []string `json:"slots"`
}

// preview answers GET /v1/schedule/preview: the next count slots of a cron
// schedule strictly after from (default now). It touches no task and no
// store.
func (a *api) preview(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k, vs := range q {
		switch {
		case !previewParams[k]:
			writeErr(w, http.StatusBadRequest, k, "unknown parameter; the preview takes cron, exclude, timezone, dst_gap, dst_overlap, from and count")
			return
		case k != "cron" && k != "exclude" && len(vs) > 1:
			writeErr(w, http.StatusBadRequest, k, "give it once")
			return
		}
	}
	crons := q["cron"]
	if len(crons) == 0 {
		writeErr(w, http.StatusBadRequest, "cron", "is required")
		return
	}
	count := previewDefaultCount
	if s := q.Get("count"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > previewMaxCount {
			writeErr(w, http.StatusBadRequest, "count", fmt.Sprintf("must be a whole number from 1 to %d, got %q", previewMaxCount, s))
			return
		}
		count = n
	}
	from := time.Now()
	if s := q.Get("from"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			writeErr(w, http.StatusBadRequest, "from", fmt.Sprintf("must be an RFC 3339 time like \"2026-03-08T00:00:00Z\", got %q", s))
			return
		}
		from = t
	}
	s, err := schedule.Compile(schedule.Spec{Cron: crons, Exclude: q["exclude"], Timezone: q.Get("timezone"), DSTGap: q.Get("dst_gap"), DSTOverlap: q.Get("dst_overlap")})
	if err != nil {
		var se *schedule.Error
		if !errors.As(err, &se) {
			writeErr(w, http.StatusBadRequest, "cron", err.Error())
			return
		}
		field, msg := se.Field, se.Message
		if i, ok := strings.CutPrefix(field, "cron["); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(i, "]"))
			field, msg = "cron", fmt.Sprintf("expression %d: %s", n+1, msg)
		}
		writeErr(w, http.StatusBadRequest, field, msg)
		return
	}
	ans := previewAnswer{Slots: []string{}}
	for _, t := range s.Upcoming(from, count) {
		ans.Slots = append(ans.Slots, t.Format(time.RFC3339))
	}
	writeJSON(w, http.StatusOK, ans)
}
