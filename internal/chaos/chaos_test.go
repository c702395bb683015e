package chaos

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestChaos is `make chaos`: it runs only with CRONACTOR_CHAOS=1, and
// CHAOS_KILLS sets the number of kills (default 100).
func TestChaos(t *testing.T) {
	if os.Getenv("CRONACTOR_CHAOS") == "" {
		t.Skip("set CRONACTOR_CHAOS=1 (make chaos) to run the chaos harness")
	}
	kills := 100
	if v := os.Getenv("CHAOS_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CHAOS_KILLS=%q", v)
		}
		kills = n
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := BuildBinary(root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{Binary: bin, Dir: filepath.Join(t.TempDir(), "data"), Kills: kills, Logf: t.Logf})
	t.Logf("chaos report:\n%s", rep.Table())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("%d violations", len(rep.Violations))
	}
}

func ev(v uint64, typ, run string, at time.Duration, data string) auditEvent {
	if data == "" {
		data = "{}"
	}
	return auditEvent{Version: v, Type: typ, RunID: run, At: time.Unix(0, 0).Add(at), Data: []byte(data)}
}

// TestCheckFindsEachViolation: the checks themselves, on made-up logs.
func TestCheckFindsEachViolation(t *testing.T) {
	cfg := Config{Interval: time.Second, Tolerance: 100 * time.Millisecond}
	for _, tc := range []struct {
		name string
		evs  []auditEvent
		want string // a violation containing this, or "" for none
	}{
		{"clean", []auditEvent{
			ev(0, "TaskCreated", "", 0, ""),
			ev(1, "RunEnqueued", "a", time.Second, ""), ev(2, "RunStarted", "a", time.Second, ""), ev(3, "RunCompleted", "a", time.Second, ""),
			ev(4, "RunEnqueued", "b", 2*time.Second, ""), ev(5, "RunStarted", "b", 2*time.Second, ""),
		}, ""},
		{"gap in versions", []auditEvent{ev(0, "TaskCreated", "", 0, ""), ev(2, "TaskPaused", "", 0, "")}, "version"},
		{"double start", []auditEvent{
			ev(0, "RunEnqueued", "a", 0, ""), ev(1, "RunStarted", "a", 0, ""), ev(2, "RunStarted", "a", 0, ""),
		}, "started twice"},
		{"two outcomes", []auditEvent{
			ev(0, "RunEnqueued", "a", 0, ""), ev(1, "RunStarted", "a", 0, ""), ev(2, "RunCompleted", "a", 0, ""), ev(3, "RunForcedEnd", "a", 0, ""),
		}, "2 outcomes"},
		{"outcome without enqueue", []auditEvent{ev(0, "RunDropped", "a", 0, "")}, "never enqueued"},
		{"too close", []auditEvent{
			ev(0, "RunEnqueued", "a", 0, ""), ev(1, "RunStarted", "a", 0, ""),
			ev(2, "RunEnqueued", "b", 0, ""), ev(3, "RunStarted", "b", 500*time.Millisecond, ""),
		}, "apart"},
		{"retry may be close", []auditEvent{
			ev(0, "RunEnqueued", "a", 0, ""), ev(1, "RunStarted", "a", 0, ""),
			ev(2, "RunEnqueued", "b", 0, `{"attempt":2}`), ev(3, "RunStarted", "b", 500*time.Millisecond, ""),
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Report{Outcomes: map[string]int{}}
			check(&rep, "t", tc.evs, cfg)
			got := strings.Join(rep.Violations, "; ")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Fatalf("violations %q, want %q", got, tc.want)
			}
		})
	}
}
