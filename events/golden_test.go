package events_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// goldenLine is one stored event as written by an earlier build.
type goldenLine struct {
	Type   string          `json:"type"`
	Schema int             `json:"schema"`
	Data   json.RawMessage `json:"data"`
}

// TestGoldenStreamStillDecodes pins the wire form of every event type: each
// file was written once and must keep decoding to the same values forever.
// New schema versions append new golden files; old ones are never edited
// (-update rewrites only the newest, events-v4.jsonl).
func TestGoldenStreamStillDecodes(t *testing.T) {
	for _, g := range []struct {
		file    string
		want    []events.Event
		newest  bool
		schemas map[string]int
	}{
		// Written before schedules: every type at schema 1.
		{"events-v1.jsonl", v1Samples, false, nil},
		// Schedules: RunEnqueued at schema 2 (slot required), TaskFinished
		// new, TaskCreated and TaskUpdated with optional schedule fields.
		{"events-v2.jsonl", v2Samples, false, map[string]int{"TaskCreated": 1, "TaskUpdated": 1, "RunEnqueued": 2}},
		// History retention: TaskCompacted new.
		{"events-v3.jsonl", v3Samples, false, map[string]int{"TaskCreated": 1, "TaskUpdated": 1, "RunEnqueued": 2, "TaskCompacted": 1}},
		// Backfill: BackfillRequested new, trigger backfill on RunEnqueued.
		{"events-v4.jsonl", samples, true, map[string]int{"TaskCreated": 1, "TaskUpdated": 1, "RunEnqueued": 2, "TaskCompacted": 1,
			"BackfillRequested": 1}},
	} {
		t.Run(g.file, func(t *testing.T) {
			path := filepath.Join("testdata", g.file)
			if *update && g.newest {
				var buf bytes.Buffer
				for _, e := range g.want {
					p, err := events.Propose(e, uuid.Nil, at)
					if err != nil {
						t.Fatal(err)
					}
					line, _ := json.Marshal(goldenLine{Type: p.Type, Schema: p.Schema, Data: p.Data})
					buf.Write(append(line, '\n'))
				}
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			decodeGolden(t, path, g.want, g.schemas)
		})
	}
}

func decodeGolden(t *testing.T, path string, want []events.Event, schemas map[string]int) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	i := 0
	for ; sc.Scan(); i++ {
		var g goldenLine
		if err := json.Unmarshal(sc.Bytes(), &g); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if w, ok := schemas[g.Type]; ok && g.Schema != w {
			t.Fatalf("line %d: %s at schema %d, want %d", i+1, g.Type, g.Schema, w)
		}
		got, err := events.Default.Decode(g.Type, g.Schema, g.Data)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if i >= len(want) || !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("line %d decodes to %#v", i+1, got)
		}
	}
	if i != len(want) {
		t.Fatalf("golden file has %d events, want %d", i, len(want))
	}
}

// TestSchemaOneUpgrades: a schema 1 RunEnqueued is read with its slot = its
// due time; a schema 1 TaskCreated is an interval task with no window; a
// schema 2 RunEnqueued without a slot is malformed.
func TestSchemaOneUpgrades(t *testing.T) {
	body := `{"run_id":"` + runID.String() + `","run":4,"due":"2026-11-22T00:03:30Z","next_run":"2026-11-22T00:04:30Z","missed":0,"priority":0}`
	e, err := events.Default.Decode("RunEnqueued", 1, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if re := e.(events.RunEnqueued); !re.Slot.Equal(re.Due) || re.Spacing != 0 || re.NextSlot != nil {
		t.Fatalf("upgraded to %+v", re)
	}
	created := `{"task_id":"` + taskID.String() + `","name":"a","owner":"o","kind":"noop","schedule":{"interval":"1m0s"},"tolerance":"5s","timebox":"30s","priority":0,"next_run":"2026-01-01T00:00:00Z"}`
	e, err = events.Default.Decode("TaskCreated", 1, []byte(created))
	if err != nil {
		t.Fatal(err)
	}
	if tc := e.(events.TaskCreated); !tc.Schedule.IsInterval() || !tc.Window.Equal(events.Window{}) || tc.NextSlot != nil {
		t.Fatalf("upgraded to %+v", tc)
	}
	two := `{"task_id":"` + taskID.String() + `","name":"a","owner":"o","kind":"noop","schedule":{"interval":"1m0s","cron":["* * * * *"]},"tolerance":"5s","timebox":"30s","priority":0,"next_run":"2026-01-01T00:00:00Z"}`
	if _, err := events.Default.Decode("TaskCreated", 1, []byte(two)); !errors.Is(err, events.ErrMalformed) {
		t.Fatalf("two schedule kinds: %v", err)
	}
}
