package taskstate_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/taskstate"
	"github.com/google/uuid"
)

// goldenStream reads a golden file of events/testdata as one stream, an
// event a second.
func goldenStream(t *testing.T, name string) []events.Recorded {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []events.Recorded
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var g struct {
			Type   string          `json:"type"`
			Schema int             `json:"schema"`
			Data   json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatal(err)
		}
		v := uint64(len(out))
		out = append(out, events.Recorded{Metadata: events.Metadata{Stream: "task-golden", Version: v, At: t0.Add(time.Duration(v) * time.Second)},
			Type: g.Type, Schema: g.Schema, Data: g.Data})
	}
	return out
}

// TestGoldenStreamsReplayTheSameAfterCompaction: the golden streams written
// before history retention replay to the same state with a TaskCompacted
// put after any of their events and the events before it removed.
func TestGoldenStreamsReplayTheSameAfterCompaction(t *testing.T) {
	for _, name := range []string{"events-v1.jsonl", "events-v2.jsonl"} {
		recs := goldenStream(t, name)
		for k := 1; k <= len(recs); k++ {
			before, err := taskstate.Replay(recs[:k])
			if err != nil {
				t.Fatal(err)
			}
			b, err := before.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			at := recs[k-1].At
			p, err := events.Propose(events.TaskCompacted{State: b, Events: k, ToVersion: uint64(k - 1), FromAt: recs[0].At, ToAt: at}, uuid.Nil, at)
			if err != nil {
				t.Fatal(err)
			}
			stream := []events.Recorded{{Metadata: events.Metadata{Stream: "task-golden", Version: uint64(k), At: at}, Type: p.Type, Schema: p.Schema, Data: p.Data}}
			for _, r := range recs[k:] {
				r.Version++
				stream = append(stream, r)
			}
			got, err := taskstate.Replay(stream)
			if err != nil {
				t.Fatal(err)
			}
			want, err := taskstate.Replay(recs)
			if err != nil {
				t.Fatal(err)
			}
			// But for the version (one more: the TaskCompacted) and its marks.
			want.Version, want.Compacted, want.CompactedAt, want.CompactedThrough = got.Version, got.Compacted, got.CompactedAt, got.CompactedThrough
			if k == len(recs) {
				want.UpdatedAt = got.UpdatedAt
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s cut after %d events:\n got %+v\nwant %+v", name, k, got, want)
			}
		}
	}
}
