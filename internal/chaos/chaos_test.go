package chaos

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestChaosShort is the harness's short mode, run by make test: the real
// daemon killed 5 times under load with every invariant checked, the signal
// cases, and 300 fuzzed requests. It takes about a minute, so -short skips
// it; CHAOS_KILLS sets the kills. make chaos runs the full harness, with
// the storage fault cases.
func TestChaosShort(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the chaos harness runs the real daemon for about a minute")
	}
	kills := 5
	if v := os.Getenv("CHAOS_KILLS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CHAOS_KILLS=%q: want a positive number", v)
		}
		kills = n
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := Build(ctx, root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}

	t.Run("kill", func(t *testing.T) {
		rep, err := Kill(ctx, KillConfig{Bin: bin, Dir: t.TempDir(), Kills: kills, Seed: 16, InitialTasks: 20, CreatesPerLife: 4})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		WriteKillReport(&b, rep)
		t.Logf("\n%s", b.String())
		if rep.Result.Runs == 0 || rep.Result.Started == 0 {
			t.Errorf("the load ran nothing: %d runs enqueued, %d started", rep.Result.Runs, rep.Result.Started)
		}
		for _, v := range rep.Result.Violations {
			t.Errorf("%s", v)
		}
	})
	t.Run("signals", func(t *testing.T) {
		for _, r := range Faults(ctx, FaultConfig{Bin: bin, Dir: t.TempDir(), Only: []string{"graceful_stop", "double_signal"}}) {
			t.Logf("%s: %s: %s", r.Name, r.Status, r.Detail)
			if r.Status == FaultFailed {
				t.Errorf("%s failed: %s", r.Name, r.Detail)
			}
		}
	})
	t.Run("fuzz", func(t *testing.T) {
		rep, err := Fuzz(ctx, FuzzConfig{Bin: bin, Dir: t.TempDir(), Requests: 300, Seed: 16})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		WriteFuzzReport(&b, rep)
		t.Logf("\n%s", b.String())
		for _, v := range rep.Violations {
			t.Errorf("%s", v)
		}
	})
}
