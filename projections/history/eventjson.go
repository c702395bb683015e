package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// ErrBadEventJSON: an EventJSON cannot be turned back into a recorded event.
var ErrBadEventJSON = errors.New("history: malformed event JSON")

// EventJSON is the wire form of one recorded event of a task, as served by
// GET /v1/tasks/{id}/events:
//
//	{"id":"…","stream":"task-…","version":2,"position":"3","type":"RunStarted",
//	 "schema":1,"at":"2026-11-22T10:00:35Z","run":1,"run_id":"…","data":{…}}
//
// version is the event's place in its stream (from 0), position its place in
// the global log (events.Position.String form), schema the version of the
// body's schema, at when it was decided (RFC 3339 UTC), and data the event
// body exactly as stored. run and run_id repeat the body's run fields of run
// events for readers that do not decode data.
type EventJSON struct {
	ID            uuid.UUID       `json:"id"`
	Stream        string          `json:"stream"`
	Version       uint64          `json:"version"`
	Position      string          `json:"position"`
	Type          string          `json:"type"`
	Schema        int             `json:"schema"`
	At            time.Time       `json:"at"`
	Run           int             `json:"run,omitempty"`
	RunID         *uuid.UUID      `json:"run_id,omitempty"`
	CausationID   *uuid.UUID      `json:"causation_id,omitempty"`
	CorrelationID *uuid.UUID      `json:"correlation_id,omitempty"`
	Data          json.RawMessage `json:"data"`
}

// EventList is the body of GET /v1/tasks/{id}/events: one page of the
// task's events in stream order. Next, when set, is the "after" parameter
// that fetches the following page; the last page has none. Prev, when set,
// is the "before" parameter that fetches the page before (older events);
// the first page has none.
type EventList struct {
	TaskID uuid.UUID   `json:"task_id"`
	Events []EventJSON `json:"events"`
	Next   string      `json:"next,omitempty"`
	Prev   string      `json:"prev,omitempty"`
}

func optID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

// runFields is the part every run event body shares.
type runFields struct {
	RunID uuid.UUID `json:"run_id"`
	Run   int       `json:"run"`
}

// ToJSON converts a recorded event into its wire form. A body that is not
// valid JSON is an error (it could not be served as data).
func ToJSON(r events.Recorded) (EventJSON, error) {
	if !json.Valid(r.Data) {
		return EventJSON{}, fmt.Errorf("%w: %s@%d: body is not JSON", ErrBadEventJSON, r.Stream, r.Version)
	}
	e := EventJSON{
		ID: r.ID, Stream: r.Stream, Version: r.Version, Position: r.Position.String(),
		Type: r.Type, Schema: r.Schema, At: r.At.UTC(),
		CausationID: optID(r.CausationID), CorrelationID: optID(r.CorrelationID),
		Data: json.RawMessage(append([]byte(nil), r.Data...)),
	}
	var rf runFields
	if json.Unmarshal(r.Data, &rf) == nil && rf.Run > 0 {
		e.Run, e.RunID = rf.Run, optID(rf.RunID)
	}
	return e, nil
}

// FromJSON converts the wire form back into the recorded event.
func FromJSON(e EventJSON) (events.Recorded, error) {
	if e.Type == "" {
		return events.Recorded{}, fmt.Errorf("%w: type missing", ErrBadEventJSON)
	}
	if e.Stream == "" {
		return events.Recorded{}, fmt.Errorf("%w: stream missing", ErrBadEventJSON)
	}
	if len(e.Data) == 0 || !json.Valid(e.Data) {
		return events.Recorded{}, fmt.Errorf("%w: data of %s@%d is not JSON", ErrBadEventJSON, e.Stream, e.Version)
	}
	pos, err := events.ParsePosition(e.Position)
	if err != nil {
		return events.Recorded{}, fmt.Errorf("%w: position: %v", ErrBadEventJSON, err)
	}
	r := events.Recorded{
		Metadata: events.Metadata{ID: e.ID, Stream: e.Stream, Version: e.Version, Position: pos, At: e.At.UTC()},
		Type:     e.Type, Schema: e.Schema, Data: append([]byte(nil), e.Data...),
	}
	if e.CausationID != nil {
		r.CausationID = *e.CausationID
	}
	if e.CorrelationID != nil {
		r.CorrelationID = *e.CorrelationID
	}
	return r, nil
}

// ListJSON converts a task's recorded events into the endpoint's body.
func ListJSON(task uuid.UUID, recs []events.Recorded) (EventList, error) {
	out := EventList{TaskID: task, Events: make([]EventJSON, 0, len(recs))}
	for _, r := range recs {
		e, err := ToJSON(r)
		if err != nil {
			return EventList{}, err
		}
		out.Events = append(out.Events, e)
	}
	return out, nil
}

// Recorded converts the endpoint's body back into recorded events.
func (l EventList) Recorded() ([]events.Recorded, error) {
	out := make([]events.Recorded, 0, len(l.Events))
	for i, e := range l.Events {
		r, err := FromJSON(e)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
		out = append(out, r)
	}
	return out, nil
}
