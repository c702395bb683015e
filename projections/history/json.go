package history

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// ErrBadEventJSON: an EventJSON that does not describe a stored event.
var ErrBadEventJSON = errors.New("history: malformed event")

// RowJSON is a row as one JSON object of `history --format json` and
// `simulate --format json`: times formatted by the caller's TimeFormat,
// next_run/last_run null when unset, run and reason omitted when empty.
type RowJSON struct {
	At      string  `json:"at"`
	Task    string  `json:"task"`
	Event   string  `json:"event"`
	Run     int     `json:"run,omitempty"`
	RunID   string  `json:"run_id,omitempty"`
	NextRun *string `json:"next_run"`
	LastRun *string `json:"last_run"`
	Reason  string  `json:"reason,omitempty"`
	Detail  string  `json:"detail,omitempty"`
	Text    string  `json:"text,omitempty"`
}

// JSON returns the row's JSON form with times rendered by f. withText adds
// the table's description of the row.
func (r Row) JSON(f TimeFormat, withText bool) RowJSON {
	opt := func(t *time.Time) *string {
		if t == nil {
			return nil
		}
		s := f.Format(*t)
		return &s
	}
	j := RowJSON{At: f.Format(r.At), Task: r.Task, Event: r.Event, Run: r.Run,
		NextRun: opt(r.NextRun), LastRun: opt(r.LastRun), Reason: r.Reason, Detail: r.Detail}
	if r.RunID != uuid.Nil {
		j.RunID = r.RunID.String()
	}
	if withText {
		j.Text = r.Text(f)
	}
	return j
}

// EventJSON is a stored event as the HTTP API serves it
// (GET /v1/tasks/{id}/events): its metadata, and its body as stored.
type EventJSON struct {
	ID       uuid.UUID `json:"id"`
	Stream   string    `json:"stream"`
	Type     string    `json:"type"`
	Schema   int       `json:"schema"`
	Version  uint64    `json:"version"`
	Position string    `json:"position"`
	At       time.Time `json:"at"`
	// Run and RunID name the run of a run event; omitted otherwise.
	Run           int             `json:"run,omitempty"`
	RunID         *uuid.UUID      `json:"run_id,omitempty"`
	CausationID   *uuid.UUID      `json:"causation_id,omitempty"`
	CorrelationID *uuid.UUID      `json:"correlation_id,omitempty"`
	Data          json.RawMessage `json:"data"`
}

func optID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

func idOrNil(p *uuid.UUID) uuid.UUID {
	if p == nil {
		return uuid.Nil
	}
	return *p
}

// runOf reads the run number and ID of a run event body without knowing
// its type (unknown types and bodies without them give zero values).
func runOf(data []byte) (int, uuid.UUID) {
	var r struct {
		Run   int       `json:"run"`
		RunID uuid.UUID `json:"run_id"`
	}
	if json.Unmarshal(data, &r) != nil {
		return 0, uuid.Nil
	}
	return r.Run, r.RunID
}

// ToJSON converts a stored event to its API form. The body is carried as
// stored; it must be JSON.
func ToJSON(rec events.Recorded) (EventJSON, error) {
	if !json.Valid(rec.Data) {
		return EventJSON{}, fmt.Errorf("%w: %s at %s: body is not JSON", ErrBadEventJSON, rec.Type, rec.Position)
	}
	run, runID := runOf(rec.Data)
	return EventJSON{
		ID: rec.ID, Stream: rec.Stream, Type: rec.Type, Schema: rec.Schema,
		Version: rec.Version, Position: rec.Position.String(), At: rec.At.UTC(),
		Run: run, RunID: optID(runID),
		CausationID: optID(rec.CausationID), CorrelationID: optID(rec.CorrelationID),
		Data: append(json.RawMessage(nil), rec.Data...),
	}, nil
}

// ToJSONAll converts a stream's events.
func ToJSONAll(recs []events.Recorded) ([]EventJSON, error) {
	out := make([]EventJSON, 0, len(recs))
	for _, r := range recs {
		j, err := ToJSON(r)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// Recorded converts the API form back into a stored event.
func (j EventJSON) Recorded() (events.Recorded, error) {
	if j.Type == "" {
		return events.Recorded{}, fmt.Errorf("%w: type is empty", ErrBadEventJSON)
	}
	if j.Schema < 1 {
		return events.Recorded{}, fmt.Errorf("%w: %s: schema %d", ErrBadEventJSON, j.Type, j.Schema)
	}
	pos, err := events.ParsePosition(j.Position)
	if err != nil {
		return events.Recorded{}, fmt.Errorf("%w: %s: position: %v", ErrBadEventJSON, j.Type, err)
	}
	if !json.Valid(j.Data) {
		return events.Recorded{}, fmt.Errorf("%w: %s: data is not JSON", ErrBadEventJSON, j.Type)
	}
	return events.Recorded{
		Metadata: events.Metadata{ID: j.ID, Stream: j.Stream, Version: j.Version, Position: pos,
			At: j.At.UTC(), CausationID: idOrNil(j.CausationID), CorrelationID: idOrNil(j.CorrelationID)},
		Type: j.Type, Schema: j.Schema, Data: append([]byte(nil), j.Data...),
	}, nil
}

// FromJSONAll converts a list of API events back into stored events.
func FromJSONAll(js []EventJSON) ([]events.Recorded, error) {
	out := make([]events.Recorded, 0, len(js))
	for _, j := range js {
		r, err := j.Recorded()
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
