package events_test

import (
	"bufio"
	"bytes"
	"encoding/json"
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

// TestGoldenStreamStillDecodes pins the wire form of every event type: the
// file was written once and must keep decoding to the same values forever.
// New schema versions append new golden files; old ones are never edited.
func TestGoldenStreamStillDecodes(t *testing.T) {
	path := filepath.Join("testdata", "events-v1.jsonl")
	if *update {
		var buf bytes.Buffer
		for _, e := range samples {
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
		got, err := events.Default.Decode(g.Type, g.Schema, g.Data)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if i >= len(samples) || !reflect.DeepEqual(got, samples[i]) {
			t.Fatalf("line %d decodes to %#v", i+1, got)
		}
	}
	if i != len(samples) {
		t.Fatalf("golden file has %d events, samples %d", i, len(samples))
	}
}
