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
// others: at, task, event, next_run and last_run always; run on run events;
// reason exactly on drops and forced ends, one of the published reasons;
// attempt only on run events of a retry (2 and up); trigger only on a
// RunEnqueued, "manual" for a manually triggered run or "backfill" for a
// backfill's run, which alone carries slot (DESIGN §8.4); event one of the
// published types.
func TestJSONLinesMatchContract(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	allowed := map[string]bool{"at": true, "task": true, "event": true, "run": true, "next_run": true, "last_run": true, "reason": true,
		"attempt": true, "trigger": true, "slot": true}
	eventTypes := map[string]bool{"TaskCreated": true, "TaskPaused": true, "TaskResumed": true, "TaskDeleted": true, "TaskFinished": true,
		"Tick": true, "RunEnqueued": true, "RunStarted": true, "RunCompleted": true, "RunDropped": true, "RunForcedEnd": true, "RunFailed": true}
	reasonWords := map[string]map[string]bool{
		"RunDropped":   {"too_soon": true, "paused": true, "deleted": true, "overlap": true, "too_late": true},
		"RunForcedEnd": {"timebox_exceeded": true, "process_lost": true, "heartbeat_timeout": true, "replaced": true},
	}
	// A TaskPaused line carries a reason only when the task paused itself
	// (DESIGN §8.4).
	optionalReason := map[string]map[string]bool{"TaskPaused": {"failures": true}}
	seen := map[string]int{}
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
			var ev, reason, trigger string
			var attempt int
			_ = json.Unmarshal(m["event"], &ev)
			if !eventTypes[ev] {
				t.Errorf("%s: event %q is not in the contract: %s", path, ev, line)
			}
			runEvent := strings.HasPrefix(ev, "Run")
			if _, hasRun := m["run"]; hasRun != runEvent {
				t.Errorf("%s: run present = %v on %s: %s", path, hasRun, ev, line)
			}
			_, hasReason := m["reason"]
			if wantReason := reasonWords[ev] != nil; hasReason != wantReason && optionalReason[ev] == nil {
				t.Errorf("%s: reason present = %v on %s: %s", path, hasReason, ev, line)
			}
			if hasReason {
				_ = json.Unmarshal(m["reason"], &reason)
				if !reasonWords[ev][reason] && !optionalReason[ev][reason] {
					t.Errorf("%s: reason %q is not a published reason of %s: %s", path, reason, ev, line)
				}
				seen[reason]++
			}
			if v, ok := m["attempt"]; ok {
				if err := json.Unmarshal(v, &attempt); err != nil || attempt < 2 || !runEvent {
					t.Errorf("%s: attempt %s on %s: want a number of 2 or more, on run events only: %s", path, v, ev, line)
				}
				seen["attempt"]++
			}
			if v, ok := m["trigger"]; ok {
				if err := json.Unmarshal(v, &trigger); err != nil || (trigger != "manual" && trigger != "backfill") || ev != "RunEnqueued" {
					t.Errorf("%s: trigger %s on %s: want \"manual\" or \"backfill\", on RunEnqueued only: %s", path, v, ev, line)
				}
				seen["trigger"]++
				seen["trigger "+trigger]++
			}
			// A backfill's run says the past slot it is for (DESIGN §8.4),
			// and no other line has a slot.
			if _, ok := m["slot"]; ok != (trigger == "backfill") {
				t.Errorf("%s: slot present = %v with trigger %q: %s", path, ok, trigger, line)
			} else if ok {
				seen["slot"]++
			}
		}
	}
	// The scenarios must reach each field and reason, or the checks above
	// saw nothing of it.
	for _, k := range []string{"too_soon", "paused", "deleted", "overlap", "too_late", "timebox_exceeded", "process_lost",
		"heartbeat_timeout", "replaced", "failures", "attempt", "trigger", "trigger manual", "trigger backfill", "slot"} {
		if seen[k] == 0 {
			t.Errorf("no scenario prints %q; the contract check saw nothing of it", k)
		}
	}
}
