package simulation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/actors/simulation"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func simulate(t *testing.T, path string) *simulation.Result {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := simulation.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulation.Run(context.Background(), sc, simulation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Every scenario under testdata/ prints its golden table and JSON lines,
// byte for byte, and the same bytes when run again.
func TestGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			var outs [2]map[string][]byte
			for i := range outs {
				res := simulate(t, path)
				outs[i] = map[string][]byte{}
				for _, format := range []string{"table", "json"} {
					var b bytes.Buffer
					if err := renderResult(&b, res, format); err != nil {
						t.Fatal(err)
					}
					outs[i][format] = b.Bytes()
				}
			}
			for _, format := range []string{"table", "json"} {
				got := outs[0][format]
				if !bytes.Equal(got, outs[1][format]) {
					t.Errorf("%s: two runs differ:\n%s\n---\n%s", format, got, outs[1][format])
				}
				golden := filepath.Join("testdata", name+"."+format+".golden")
				if *update {
					if err := os.WriteFile(golden, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from %s:\n%s\nwant:\n%s", format, golden, got, want)
				}
			}
		})
	}
}

// TestJSONLinesMatchContract: every JSON line of every scenario carries the
// fields of the published JSON-lines form (docs/simulation.md) and no
// others: at, task, event, next_run and
// last_run always; run on run events; reason exactly on drops and forced
// ends.
func TestJSONLinesMatchContract(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	allowed := map[string]bool{"at": true, "task": true, "event": true, "run": true, "next_run": true, "last_run": true, "reason": true}
	reasons := 0
	for _, path := range paths {
		var b bytes.Buffer
		if err := render(&b, simulate(t, path).Entries, "json"); err != nil {
			t.Fatal(err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(b.Bytes()), []byte("\n")) {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("%s: %v: %s", path, err, line)
			}
			for k := range m {
				if !allowed[k] {
					t.Errorf("%s: field %q is not in the contract: %s", path, k, line)
				}
			}
			for _, k := range []string{"at", "task", "event", "next_run", "last_run"} {
				if _, ok := m[k]; !ok {
					t.Errorf("%s: field %q missing: %s", path, k, line)
				}
			}
			var ev string
			_ = json.Unmarshal(m["event"], &ev)
			_, hasReason := m["reason"]
			if wantReason := ev == "RunDropped" || ev == "RunForcedEnd"; hasReason != wantReason {
				t.Errorf("%s: reason present = %v on %s: %s", path, hasReason, ev, line)
			}
			if hasReason {
				reasons++
			}
		}
	}
	if reasons == 0 {
		t.Fatal("no scenario drops or force-ends a run; the reason check saw nothing")
	}
}
