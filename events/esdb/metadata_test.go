package esdb

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cronactor/cronactor/events"
)

func TestMetadataRoundTrip(t *testing.T) {
	p := events.Proposed{
		Schema: 3, At: time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.FixedZone("x", 3600)),
		CausationID: uuid.New(), CorrelationID: uuid.New(),
	}
	b, err := encodeMetadata(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := decodeMetadata(b)
	if err != nil {
		t.Fatal(err)
	}
	if !m.At.Equal(p.At) || m.Schema != 3 || *m.CausationID != p.CausationID || *m.CorrelationID != p.CorrelationID {
		t.Fatalf("round trip: %+v from %s", m, b)
	}
	// Zero IDs are left out.
	b, _ = encodeMetadata(events.Proposed{Schema: 1, At: p.At})
	if m, err := decodeMetadata(b); err != nil || m.CausationID != nil || m.CorrelationID != nil {
		t.Fatalf("%s: %+v, %v", b, m, err)
	}
	for _, bad := range []string{"", "  ", "[]", "null", `{"schema":"1"}`, `{"schema":-1}`, `{"at":"yesterday"}`, `{"$causationId":"nope"}`} {
		if _, err := decodeMetadata([]byte(bad)); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
	// Keys of other writers are ignored.
	if m, err := decodeMetadata([]byte(`{"schema":2,"$correlationId":"` + p.CorrelationID.String() + `","tenant":"x"}`)); err != nil || m.Schema != 2 {
		t.Errorf("foreign keys: %+v, %v", m, err)
	}
}

// FuzzDecodeMetadata: decoding any bytes never panics, and what decodes
// re-encodes to something that decodes to the same values.
func FuzzDecodeMetadata(f *testing.F) {
	f.Add([]byte(`{"at":"2026-01-02T03:04:05.000000006Z","schema":1,"$causationId":"6f1c2a52-2f4e-4d57-9a43-7d0f0c6f6e11"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"schema":1e3}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMetadata(b)
		if err != nil {
			return
		}
		p := events.Proposed{At: m.At, Schema: m.Schema}
		if m.CausationID != nil {
			p.CausationID = *m.CausationID
		}
		if m.CorrelationID != nil {
			p.CorrelationID = *m.CorrelationID
		}
		again, err := encodeMetadata(p)
		if err != nil {
			return // times outside what JSON can carry (year > 9999)
		}
		m2, err := decodeMetadata(again)
		if err != nil {
			t.Fatalf("re-encoded %s does not decode: %v", again, err)
		}
		if !m2.At.Equal(m.At) || m2.Schema != m.Schema {
			t.Fatalf("%s → %+v → %s → %+v", b, m, again, m2)
		}
	})
}
