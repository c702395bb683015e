package httpapi

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
)

// backfillRequest is the body of POST /v1/tasks/{id}/backfill.
type backfillRequest struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// BackfillBody is the answer of POST /v1/tasks/{id}/backfill: the past
// slots that each get a run (DESIGN §8.4), in the task's zone's offset.
type BackfillBody struct {
	Slots []string `json:"slots"`
}

// backfill is POST /v1/tasks/{id}/backfill {"from":…, "to":…}: a run with
// trigger backfill for each of the task's slots in [from, to), at most
// 1000, enqueued in slot order as the task has room (max_waiting). 202
// with the slots once the request is recorded; a bad window (missing, in
// the future, reversed, empty, too many slots) is a 400 naming from or to,
// a paused, finished or deleted task a 409 with the reason; nothing is
// recorded then.
func (a *api) backfill(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	if err := onlyParams(r); err != nil {
		a.fail(w, err)
		return
	}
	var req backfillRequest
	if err := decode(r, &req); err != nil {
		a.fail(w, err)
		return
	}
	var from, to time.Time
	for _, f := range []struct {
		name, v string
		t       *time.Time
	}{{"from", req.From, &from}, {"to", req.To, &to}} {
		if f.v == "" {
			a.fail(w, &fieldErr{f.name, "is required: an RFC 3339 time (the window is [from, to))"})
			return
		}
		if *f.t, err = parseSpecTime(f.name, f.v); err != nil {
			a.fail(w, err)
			return
		}
	}
	slots, err := a.cfg.Scheduler.Backfill(r.Context(), id, from, to)
	if err != nil {
		a.fail(w, err)
		return
	}
	ans := BackfillBody{Slots: make([]string, 0, len(slots))}
	for _, t := range slots {
		ans.Slots = append(ans.Slots, t.Format(time.RFC3339))
	}
	writeJSON(w, http.StatusAccepted, ans)
}

// cannotBackfill is the words of a refused backfill: "the task cannot be
// backfilled: the task is paused", without the package prefixes of the
// errors that wrap it.
func cannotBackfill(err error) string {
	msg := err.Error()
	want := strings.TrimPrefix(rules.ErrCannotBackfill.Error(), "rules: ")
	if i := strings.Index(msg, want); i >= 0 {
		return msg[i:]
	}
	if errors.Is(err, rules.ErrCannotBackfill) {
		return want
	}
	return msg
}
