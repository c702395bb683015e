package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
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

// storeField is a field of /healthz's store object.
func storeField(body map[string]any, key string) any {
	st, _ := body["store"].(map[string]any)
	return st[key]
}

// Postgres goes away under a running daemon with 40 tasks (stopped as a
// crash would stop it) and comes back: the daemon stays up, /healthz
// answers 503 "failing" with the condition unreachable within 10 s (the
// one health rule, docs/decisions/0025-health-rule.md: it answered 200
// "degraded" before), creates answer 503 naming it, and once Postgres is
// back /healthz is 200 "ok" within 10 s and the tasks run on; then the daemon is killed
// (kill -9) and started again. Across both, no run starts twice, no run has
// two outcomes, and every task keeps running.
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
	addr := freeAddr(t)
	d := startDaemonOn(t, bin, addr, "--store", "postgres", "--postgres", url)
	waitReady(t, d)
	if code, body := healthz(t, d); code != 200 || body["status"] != "ok" || storeField(body, "writable") != true {
		t.Fatalf("/healthz at start: %d %v", code, body)
	}
	const n = 40
	ids := make([]string, n)
	for i := range ids {
		var tk crontasks.Task
		if code := d.call("POST", "/v1/tasks", map[string]any{"name": fmt.Sprintf("tick-%02d", i), "owner": "demo", "kind": "noop", "interval": "1s"}, &tk); code != 201 {
			t.Fatalf("create: %d\n%s", code, d.logs.String())
		}
		ids[i] = tk.ID.String()
	}
	completed := func(d *daemon) map[string]int64 {
		out := map[string]int64{}
		for _, id := range ids {
			out[id] = d.task(id).CompletedCount
		}
		return out
	}
	allAtLeast := func(d *daemon, base map[string]int64, more int64) func() bool {
		return func() bool {
			for id, c := range completed(d) {
				if c < base[id]+more {
					return false
				}
			}
			return true
		}
	}
	waitFor(t, 60*time.Second, "runs of every task before the outage", allAtLeast(d, nil, 2))

	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	waitFor(t, 10*time.Second, "/healthz to answer 503 failing: unreachable", func() bool {
		code, body := healthz(t, d)
		msg, _ := storeField(body, "message").(string)
		return code == 503 && body["status"] == "failing" && storeField(body, "writable") == false &&
			storeField(body, "condition") == "unreachable" && strings.Contains(msg, "server cannot be reached")
	})
	t.Logf("/healthz 503 %s after Postgres stopped", time.Since(stopped).Round(time.Millisecond))
	// Writes are refused with the reason; the API still serves what it has.
	if code := d.call("POST", "/v1/tasks", map[string]any{"name": "while-down", "owner": "demo", "kind": "noop", "interval": "1s"}, nil); code != 503 {
		t.Fatalf("create while Postgres is down: %d, want 503", code)
	}
	before := completed(d)

	if err := pg.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	waitFor(t, 10*time.Second, "/healthz 200 ok again", func() bool {
		code, body := healthz(t, d)
		return code == 200 && body["status"] == "ok" && storeField(body, "writable") == true
	})
	t.Logf("/healthz 200 %s after Postgres started", time.Since(restarted).Round(time.Millisecond))
	waitFor(t, 60*time.Second, "runs of every task after Postgres is back\n"+d.logs.String(), allAtLeast(d, before, 2))

	// kill -9 mid-flight, then start again on the same database.
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d.cmd.Wait()
	d2 := startDaemonOn(t, bin, addr, "--store", "postgres", "--postgres", url)
	waitReady(t, d2) // its view is rebuilt in memory first
	waitFor(t, 60*time.Second, "runs of every task after kill -9", allAtLeast(d2, completed(d2), 2))

	for _, id := range ids {
		started, outcomes := map[int]int{}, map[int]int{}
		for _, r := range d2.events(id) {
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
		for run, k := range started {
			if k != 1 {
				t.Fatalf("task %s: run %d started %d times", id, run, k)
			}
		}
		for run, k := range outcomes {
			if k != 1 {
				t.Fatalf("task %s: run %d has %d outcomes", id, run, k)
			}
		}
	}
	// One ERROR line for the outage, one INFO line for its end.
	if logs := d.logs.String(); strings.Count(logs, "postgres server unreachable") != 1 || !strings.Contains(logs, "postgres server answers again") {
		t.Fatalf("the daemon's log does not say once that Postgres went away and once that it came back:\n%s", logs)
	}
}
