package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// TestMain stops the throwaway Postgres server the tests on Postgres share.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// The end-to-end test of the daemon (kill -9, restart, CLI, metrics,
// SIGTERM, start from the snapshot) on the Postgres store.
func TestDaemonEndToEndOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test builds and runs the daemon")
	}
	url := pgtest.URL(t)
	bin := buildBinary(t)
	testEndToEndSurvivesKill9(t, bin, "--store", "postgres", "--postgres", url)
}

func healthz(t *testing.T, d *daemon) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(d.url + "/healthz")
	if err != nil {
		t.Fatalf("/healthz: %v (the daemon must stay up)", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatalf("/healthz: %v: %s", err, b)
	}
	return resp.StatusCode, body
}

func storeState(body map[string]any) string {
	st, _ := body["store"].(map[string]any)
	s, _ := st["state"].(string)
	return s
}

// Postgres goes away under a running daemon (stopped as a crash would stop
// it) and comes back: the daemon stays up and says so on /healthz, then
// goes on running its task; no run starts twice, no run has two outcomes.
func TestDaemonOnPostgresRidesOutARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test builds and runs the daemon")
	}
	pg := pgtest.Start(t)
	url, err := pg.CreateDatabase("daemon")
	if err != nil {
		t.Fatal(err)
	}
	bin := buildBinary(t)
	d := startDaemonOn(t, bin, freeAddr(t), "--store", "postgres", "--postgres", url)
	if code, body := healthz(t, d); code != 200 || body["status"] != "ok" || storeState(body) != "ok" {
		t.Fatalf("/healthz at start: %d %v", code, body)
	}
	var tk crontasks.Task
	if code := d.call("POST", "/v1/tasks", map[string]any{"name": "tick", "owner": "demo", "kind": "noop", "interval": "1s"}, &tk); code != 201 {
		t.Fatalf("create: %d\n%s", code, d.logs.String())
	}
	waitFor(t, 30*time.Second, "runs before the outage", func() bool { return d.task(tk.ID.String()).CompletedCount >= 2 })

	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "/healthz to report the store unavailable", func() bool {
		code, body := healthz(t, d)
		return code == 200 && body["status"] == "degraded" && storeState(body) == "unavailable"
	})
	// The API still serves what it has.
	before := d.task(tk.ID.String()).CompletedCount

	if err := pg.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "/healthz ok again", func() bool {
		code, body := healthz(t, d)
		return code == 200 && body["status"] == "ok" && storeState(body) == "ok"
	})
	waitFor(t, 60*time.Second, "runs after Postgres is back\n"+d.logs.String(), func() bool { return d.task(tk.ID.String()).CompletedCount >= before+2 })

	started, outcomes := map[int]int{}, map[int]int{}
	for _, r := range d.events(tk.ID.String()) {
		e, err := events.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		switch e := e.(type) {
		case events.RunStarted:
			started[e.Run]++
		case events.RunCompleted:
			outcomes[e.Run]++
		case events.RunFailed:
			outcomes[e.Run]++
		case events.RunDropped:
			outcomes[e.Run]++
		case events.RunForcedEnd:
			outcomes[e.Run]++
		}
	}
	for run, n := range started {
		if n != 1 {
			t.Fatalf("run %d started %d times", run, n)
		}
	}
	for run, n := range outcomes {
		if n != 1 {
			t.Fatalf("run %d has %d outcomes", run, n)
		}
	}
	if !strings.Contains(d.logs.String(), "postgres") {
		t.Fatalf("the daemon's log says nothing of the outage:\n%s", d.logs.String())
	}
}
