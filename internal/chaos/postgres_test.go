package chaos

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events/postgres/pgtest"
)

// postgresRig starts a throwaway Postgres with a database for the run,
// builds the daemon, and gives a context bounding the test (10 min).
func postgresRig(t *testing.T) (*pgtest.Server, string, string, context.Context) {
	t.Helper()
	pg := pgtest.Start(t)
	url, err := pg.CreateDatabase("chaos")
	if err != nil {
		t.Fatal(err)
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	bin, err := Build(ctx, root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return pg, url, bin, ctx
}

// The kill run on the Postgres store: 40 tasks, the daemon killed with
// SIGKILL several times and Postgres itself stopped (as a crash) and
// started again in the middle, then the log is checked: nothing
// acknowledged lost, no run started twice, every run one outcome.
func TestChaosKillOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the chaos harness runs the real daemon")
	}
	pg, url, bin, ctx := postgresRig(t)
	restart := func() error {
		if err := pg.Stop(); err != nil {
			return err
		}
		return pg.Restart()
	}
	rep, err := Kill(ctx, KillConfig{Bin: bin, Dir: t.TempDir(), Kills: 4, Seed: 34, InitialTasks: 40, CreatesPerLife: 4,
		Postgres: url, RestartStore: restart})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	WriteKillReport(&b, rep)
	t.Logf("\n%s", b.String())
	if rep.StoreRestarts != 1 {
		t.Errorf("Postgres restarted %d times, want 1", rep.StoreRestarts)
	}
	if rep.Result.Tasks < 40 || rep.Result.Runs == 0 || rep.Result.Started == 0 {
		t.Errorf("the load ran little: %d tasks, %d runs enqueued, %d started", rep.Result.Tasks, rep.Result.Runs, rep.Result.Started)
	}
	for _, v := range rep.Result.Violations {
		t.Errorf("%s", v)
	}
}

// The Postgres mode of the fault cases and the fuzzer, short, in make
// test: the server stopped and started under load (pg_outage), the
// daemon's connections ended six times (pg_conn_kill), the cases of a
// local disk skipped with a line saying so, and 300 fuzzed requests.
func TestChaosFaultsOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the chaos harness runs the real daemon")
	}
	pg, url, bin, ctx := postgresRig(t)
	t.Run("faults", func(t *testing.T) {
		rs := Faults(ctx, FaultConfig{Bin: bin, Dir: t.TempDir(), Postgres: url, PostgresStop: pg.Stop, PostgresStart: pg.Restart,
			Only: onlyCases("disk_full", "pg_outage", "pg_conn_kill")})
		want := map[string]FaultStatus{"disk_full": FaultSkipped, "pg_outage": FaultPassed, "pg_conn_kill": FaultPassed}
		for _, r := range rs {
			t.Logf("%s: %s: %s", r.Name, r.Status, r.Detail)
			if w, ok := want[r.Name]; ok && r.Status != w {
				t.Errorf("%s: %s, want %s: %s", r.Name, r.Status, want[r.Name], r.Detail)
			}
			delete(want, r.Name)
		}
		if len(want) > 0 && os.Getenv("CHAOS_FAULTS") == "" {
			t.Errorf("cases that did not run: %v", want)
		}
	})
	t.Run("fuzz", func(t *testing.T) {
		rep, err := Fuzz(ctx, FuzzConfig{Bin: bin, Dir: t.TempDir(), Requests: 300, Seed: 34, Postgres: url})
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

// onlyCases is names, or CHAOS_FAULTS (comma-separated) when set, to run
// one case while looking into it.
func onlyCases(names ...string) []string {
	if v := os.Getenv("CHAOS_FAULTS"); v != "" {
		return strings.Split(v, ",")
	}
	return names
}
