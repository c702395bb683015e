package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// errReadOnly: the daemon's audit endpoint is read from, never written to.
var errReadOnly = errors.New("the audit endpoint is read-only")

// eventsAPI reads one task's stream through GET /v1/tasks/{id}/events, as
// an events.Store that only reads streams: `history` and `explain` give it
// to projections/audit, which reads a page and the events before it from
// the stream's first event (at most cliMaxFold of them; past that a
// look-back), or the events around a time, never the whole stream of a
// long task. A server that ignores after,
// before or limit (an older daemon) is read as it answers: events outside
// what was asked are dropped, and the stream's end is then found by point
// reads.
type eventsAPI struct {
	c  *client
	id uuid.UUID
	// reads counts the requests made (tests).
	reads int
}

func (e *eventsAPI) get(ctx context.Context, q url.Values) (history.EventList, error) {
	path := "/v1/tasks/" + url.PathEscape(e.id.String()) + "/events"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	e.reads++
	var page history.EventList
	raw, err := e.c.do(ctx, http.MethodGet, path, nil, &page)
	if err != nil {
		if errors.Is(err, errServer) && isNotFound(raw) {
			return page, fmt.Errorf("%w: %v", events.ErrStreamNotFound, err)
		}
		return page, err
	}
	if page.TaskID != uuid.Nil && page.TaskID != e.id {
		return page, fmt.Errorf("GET %s: the server answered for another task", path)
	}
	return page, nil
}

// isNotFound reports a 404's body: the error says the task is not found.
func isNotFound(raw []byte) bool {
	return strings.Contains(strings.ToLower(string(raw)), "not found")
}

// ReadStream reads versions from from on, at most limit (all: limit <= 0),
// following the pages the server gives.
func (e *eventsAPI) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	var out []events.Recorded
	after := ""
	if from > 0 {
		after = strconv.FormatUint(from-1, 10)
	}
	for {
		q := url.Values{}
		if after != "" {
			q.Set("after", after)
		}
		if limit > 0 {
			q.Set("limit", strconv.Itoa(min(limit-len(out), 10000)))
		}
		page, err := e.get(ctx, q)
		if err != nil {
			return nil, err
		}
		recs, err := page.Recorded()
		if err != nil {
			return nil, fmt.Errorf("events of task %s from %s: %w", e.id, e.c.server, err)
		}
		for _, r := range recs {
			if r.Version >= from && (len(out) == 0 || r.Version > out[len(out)-1].Version) {
				out = append(out, r)
			}
		}
		if limit > 0 && len(out) >= limit {
			return out[:limit], nil
		}
		if page.Next == "" || page.Next == after {
			return out, nil
		}
		after = page.Next
	}
}

// StreamVersion asks for the latest page of one event (before=end); a
// server that pages from the start instead is searched with point reads.
func (e *eventsAPI) StreamVersion(ctx context.Context, stream string) (uint64, error) {
	page, err := e.get(ctx, url.Values{"before": {"end"}, "limit": {"1"}})
	if err != nil {
		return 0, err
	}
	if page.Next == "" && len(page.Events) > 0 {
		return page.Events[len(page.Events)-1].Version, nil
	}
	if len(page.Events) == 0 {
		return 0, fmt.Errorf("%w: task %s has no events", events.ErrStreamNotFound, e.id)
	}
	return events.StreamVersion(ctx, readsOnly{e}, stream)
}

// readsOnly hides eventsAPI's StreamVersion: events.StreamVersion then
// takes its fallback of point reads.
type readsOnly struct{ e *eventsAPI }

func (r readsOnly) Append(context.Context, string, events.ExpectedVersion, ...events.Proposed) (events.AppendResult, error) {
	return events.AppendResult{}, errReadOnly
}
func (r readsOnly) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	return r.e.ReadStream(ctx, stream, from, limit)
}
func (r readsOnly) ReadAll(context.Context, events.Position, int) ([]events.Recorded, error) {
	return nil, errReadOnly
}
func (r readsOnly) Subscribe(context.Context, events.Position, func(events.Recorded) error) error {
	return errReadOnly
}
func (r readsOnly) Close() error { return nil }

func (e *eventsAPI) Append(context.Context, string, events.ExpectedVersion, ...events.Proposed) (events.AppendResult, error) {
	return events.AppendResult{}, errReadOnly
}
func (e *eventsAPI) ReadAll(context.Context, events.Position, int) ([]events.Recorded, error) {
	return nil, errReadOnly
}
func (e *eventsAPI) Subscribe(context.Context, events.Position, func(events.Recorded) error) error {
	return errReadOnly
}
func (e *eventsAPI) Close() error { return nil }
