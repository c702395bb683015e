package chaos

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events/postgres/pgtest"
)

// The kill run on the Postgres store: 40 tasks, the daemon killed with
// SIGKILL several times and Postgres itself stopped (as a crash) and
// started again in the middle, then the log is checked: nothing
// acknowledged lost, no run started twice, every run one outcome.
func TestChaosKillOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the chaos harness runs the real daemon")
	}
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
	defer cancel()
	bin, err := Build(ctx, root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
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
