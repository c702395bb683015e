package embedded

import (
	"bytes"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// TestDecodeRecordOneAllocation decodes records as they are stored and
// checks each field, and that a record of a known type costs one
// allocation: its stream name and its data share it.
func TestDecodeRecordOneAllocation(t *testing.T) {
	at := time.Date(2026, 11, 27, 5, 0, 0, 123, time.UTC)
	for _, c := range []struct {
		name   string
		stream string
		data   []byte
		allocs float64
	}{
		{"stream and data", "task-" + uuid.NewString(), []byte(`{"run_id":"x"}`), 1},
		{"no data", "task-" + uuid.NewString(), nil, 1},
		{"no stream", "", []byte(`{}`), 1},
		{"neither", "", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := events.Recorded{Metadata: events.Metadata{ID: uuid.New(), Stream: c.stream, Version: 7, At: at,
				CausationID: uuid.New(), CorrelationID: uuid.New()}, Type: "RunStarted", Schema: 1, Data: c.data}
			v := appendRecord(nil, &in)
			if n := testing.AllocsPerRun(100, func() {
				if _, err := decodeRecord(42, v); err != nil {
					t.Fatal(err)
				}
			}); n != c.allocs {
				t.Fatalf("%v allocations per record, want %v", n, c.allocs)
			}
			got, err := decodeRecord(42, v)
			if err != nil {
				t.Fatal(err)
			}
			if got.Stream != c.stream || got.ID != in.ID || got.Version != 7 || got.Type != "RunStarted" || got.Schema != 1 ||
				!got.At.Equal(at) || got.CausationID != in.CausationID || got.CorrelationID != in.CorrelationID ||
				got.Position != (events.Position{Commit: 42, Prepare: 42}) {
				t.Fatalf("decoded %+v, want %+v at 42", got.Metadata, in.Metadata)
			}
			if !bytes.Equal(got.Data, c.data) || (got.Data == nil) != (len(c.data) == 0) {
				t.Fatalf("data %q (nil %v), want %q", got.Data, got.Data == nil, c.data)
			}
			if cap(got.Data) != len(got.Data) {
				t.Fatalf("data cap %d, len %d: an append by the reader would write into the block", cap(got.Data), len(got.Data))
			}
			// The record's buffer is Pebble's, reused: nothing decoded may
			// point into it.
			clear(v)
			if got.Stream != c.stream || !bytes.Equal(got.Data, c.data) {
				t.Fatalf("decoded fields changed with the buffer they were read from: %q %q", got.Stream, got.Data)
			}
			// An append to the data leaves the stream name as it was.
			_ = append(got.Data, "more"...)
			if got.Stream != c.stream {
				t.Fatalf("stream %q after an append to the data, want %q", got.Stream, c.stream)
			}
		})
	}
}
