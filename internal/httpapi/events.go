package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
)

// Pages of GET /v1/tasks/{id}/events.
const (
	// EventsDefaultLimit is the page size when the request names none.
	EventsDefaultLimit = 1000
	// EventsMaxLimit is the largest page a request may ask for.
	EventsMaxLimit = 10000
)

// events is GET /v1/tasks/{id}/events?limit=N&after=V|before=V: the
// task's events with stream version above V (from the first when neither
// is given), or the latest of those below V with before (before=end: the
// latest events of the stream), at most N of them (EventsDefaultLimit, at
// most EventsMaxLimit). When more follow, the answer's "next" is the after
// of the next page; when events come before it, "prev" is the before of
// the page before. A page costs its own events, whatever the stream's
// length.
func (a *api) events(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	q := r.URL.Query()
	for k := range q {
		if k != "limit" && k != "after" && k != "before" {
			a.fail(w, &fieldErr{k, "unknown query parameter"})
			return
		}
	}
	limit := EventsDefaultLimit
	if l := q.Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil || limit < 1 || limit > EventsMaxLimit {
			a.fail(w, &fieldErr{"limit", fmt.Sprintf("must be a number from 1 to %d", EventsMaxLimit)})
			return
		}
	}
	if q.Has("after") && q.Has("before") {
		a.fail(w, &fieldErr{"before", "give after or before, not both"})
		return
	}
	stream := events.TaskStream(id)
	var from uint64
	var recs []events.Recorded
	if s := q.Get("after"); s != "" {
		after, err := strconv.ParseUint(s, 10, 64)
		if err != nil || after == ^uint64(0) {
			a.fail(w, &fieldErr{"after", fmt.Sprintf("must be a stream version (the \"next\" of the previous page), got %q", s)})
			return
		}
		from = after + 1
	}
	more := false
	if q.Has("before") {
		before, err := parseBefore(q.Get("before"))
		if err != nil {
			a.fail(w, err)
			return
		}
		head, err := events.StreamVersion(r.Context(), a.cfg.Store, stream)
		if errors.Is(err, events.ErrStreamNotFound) {
			a.fail(w, scheduler.ErrTaskNotFound)
			return
		}
		if err != nil {
			a.fail(w, err)
			return
		}
		end := min(before, head+1)
		from = end - min(end, uint64(limit))
		if end > from {
			if recs, err = a.cfg.Store.ReadStream(r.Context(), stream, from, int(end-from)); err != nil {
				a.fail(w, err)
				return
			}
		}
		more = len(recs) > 0 && recs[len(recs)-1].Version < head
	} else {
		// One more than the page tells whether another page follows.
		recs, err = a.cfg.Store.ReadStream(r.Context(), stream, from, limit+1)
		if errors.Is(err, events.ErrStreamNotFound) {
			a.fail(w, scheduler.ErrTaskNotFound)
			return
		}
		if err != nil {
			a.fail(w, err)
			return
		}
		if more = len(recs) > limit; more {
			recs = recs[:limit]
		}
	}
	list, err := history.ListJSON(id, recs)
	if err != nil {
		a.fail(w, err)
		return
	}
	if more {
		list.Next = strconv.FormatUint(recs[len(recs)-1].Version, 10)
	}
	if len(recs) > 0 && recs[0].Version > 0 {
		list.Prev = strconv.FormatUint(recs[0].Version, 10)
	}
	writeJSON(w, http.StatusOK, list)
}

// parseBefore reads a before parameter: a stream version, or "end" for
// the latest page.
func parseBefore(s string) (uint64, error) {
	if s == "end" {
		return ^uint64(0), nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, &fieldErr{"before", fmt.Sprintf("must be a stream version (the \"prev\" of the next page) or end, got %q", s)}
	}
	return v, nil
}
