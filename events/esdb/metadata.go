package esdb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/cronactor/cronactor/events"
)

// userMetadata is our event metadata as it travels in an EventStoreDB
// event's user metadata (JSON). The causation and correlation keys are the
// ones EventStoreDB's own projections ($by_correlation_id) understand.
type userMetadata struct {
	At            time.Time  `json:"at"`
	Schema        int        `json:"schema"`
	CausationID   *uuid.UUID `json:"$causationId,omitempty"`
	CorrelationID *uuid.UUID `json:"$correlationId,omitempty"`
}

// encodeMetadata renders the metadata of p.
func encodeMetadata(p events.Proposed) ([]byte, error) {
	m := userMetadata{At: p.At.UTC(), Schema: p.Schema}
	if p.CausationID != uuid.Nil {
		id := p.CausationID
		m.CausationID = &id
	}
	if p.CorrelationID != uuid.Nil {
		id := p.CorrelationID
		m.CorrelationID = &id
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("esdb: encode metadata: %w", err)
	}
	return b, nil
}

// decodeMetadata parses what encodeMetadata wrote. Keys it does not know are
// ignored (other writers may add their own); a body that is not a JSON
// object, or whose known keys have the wrong types, is an error.
func decodeMetadata(b []byte) (userMetadata, error) {
	var m userMetadata
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return m, fmt.Errorf("%w: empty", ErrMetadata)
	}
	if trimmed[0] != '{' {
		return m, fmt.Errorf("%w: not a JSON object", ErrMetadata)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return userMetadata{}, fmt.Errorf("%w: %v", ErrMetadata, err)
	}
	if m.Schema < 0 {
		return userMetadata{}, fmt.Errorf("%w: negative schema %d", ErrMetadata, m.Schema)
	}
	return m, nil
}
