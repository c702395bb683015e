package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/esdb/esdbtestserver"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/cronactor/cronactor/projections/history"
)

// daemon is a real cronactor process under test.
type daemon struct {
	t    *testing.T
	cmd  *exec.Cmd
	url  string
	logs *syncBuf
}

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cronactor")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// startDaemonOn starts the daemon with storeArgs naming its store
// ("--data", dir for the embedded store).
func startDaemonOn(t *testing.T, bin, addr string, storeArgs ...string) *daemon {
	t.Helper()
	return startServe(t, bin, addr, append(storeArgs, "--tick", "100ms")...)
}

// startDaemonWith starts `serve` on data and addr with the flags args.
func startDaemonWith(t *testing.T, bin, data, addr string, args ...string) *daemon {
	t.Helper()
	return startServe(t, bin, addr, append([]string{"--data", data}, args...)...)
}

// startServe starts `serve` on addr with the flags args.
func startServe(t *testing.T, bin, addr string, args ...string) *daemon {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", addr}, args...)...)
	cmd.Env = append(os.Environ(), "CRONACTOR_TOKEN=")
	logs := &syncBuf{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{t: t, cmd: cmd, url: "http://" + addr, logs: logs}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	waitFor(t, 20*time.Second, "daemon up\n"+logs.String(), func() bool {
		resp, err := http.Get(d.url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return d
}

// waitReady waits until /healthz says "ok": a store without a view on disk
// (Postgres) rebuilds its view in memory at start, and task queries answer
// 503 until it is done.
func waitReady(t *testing.T, d *daemon) {
	t.Helper()
	waitFor(t, 60*time.Second, "the daemon ready (/healthz status ok)\n"+d.logs.String(), func() bool {
		resp, err := http.Get(d.url + "/healthz")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var body struct{ Status string }
		return json.NewDecoder(resp.Body).Decode(&body) == nil && body.Status == "ok"
	})
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (d *daemon) call(method, path string, body any, out any) int {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, d.url+path, rd)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, out); err != nil {
			d.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return resp.StatusCode
}

func (d *daemon) task(id string) crontasks.Task {
	var t crontasks.Task
	if code := d.call("GET", "/v1/tasks/"+id, nil, &t); code != 200 {
		d.t.Fatalf("get task %s: %d", id, code)
	}
	return t
}

// endpoint is the http task's target: it answers each run with the
// checkpoint {"n": run} and remembers what each run was handed.
type endpoint struct {
	mu    sync.Mutex
	given map[int]string // run → checkpoint it was handed
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Run        int             `json:"run"`
		Checkpoint json.RawMessage `json:"checkpoint"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	e.mu.Lock()
	e.given[req.Run] = compact(req.Checkpoint)
	e.mu.Unlock()
	fmt.Fprintf(w, `{"checkpoint":{"n":%d}}`, req.Run)
}

func (e *endpoint) runs() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.given)
}

func TestDaemonEndToEndSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test builds and runs the daemon")
	}
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	testEndToEndSurvivesKill9(t, bin, "--data", data)
}

// testEndToEndSurvivesKill9 runs the daemon on the store storeArgs name
// (also on Postgres: postgres_e2e_test.go): tasks, kill -9, a restart that
// loses nothing and starts no run twice, the CLI, metrics, SIGTERM and a
// start from the snapshot.
func testEndToEndSurvivesKill9(t *testing.T, bin string, storeArgs ...string) {
	addr := freeAddr(t)
	ep := &endpoint{given: map[int]string{}}
	srv := httptest.NewServer(ep)
	defer srv.Close()

	d := startDaemonOn(t, bin, addr, storeArgs...)
	waitReady(t, d)
	var httpTask, noopTask crontasks.Task
	if code := d.call("POST", "/v1/tasks", map[string]any{"name": "poll", "owner": "channel/pop3/42", "kind": "http",
		"payload": map[string]any{"url": srv.URL}, "interval": "1s"}, &httpTask); code != 201 {
		t.Fatalf("create http task: %d", code)
	}
	if code := d.call("POST", "/v1/tasks", map[string]any{"name": "tick", "owner": "demo", "kind": "noop", "interval": "1s"}, &noopTask); code != 201 {
		t.Fatalf("create noop task: %d", code)
	}
	// Same owner+name and spec: the existing task; a different spec: 409.
	var again crontasks.Task
	if code := d.call("POST", "/v1/tasks", map[string]any{"name": "tick", "owner": "demo", "kind": "noop", "interval": "1s"}, &again); code != 200 || again.ID != noopTask.ID {
		t.Fatalf("create again: %d %s", code, again.ID)
	}
	if code := d.call("POST", "/v1/tasks", map[string]any{"name": "tick", "owner": "demo", "kind": "noop", "interval": "2s"}, nil); code != 409 {
		t.Fatalf("create with another spec: %d, want 409", code)
	}
	waitFor(t, 30*time.Second, "three http runs", func() bool { return ep.runs() >= 3 })
	waitFor(t, 30*time.Second, "noop runs", func() bool { return d.task(noopTask.ID.String()).CompletedCount >= 2 })

	// kill -9 mid-flight, then start again on the same directory.
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d.cmd.Wait()
	seen := ep.runs()
	d2 := startDaemonOn(t, bin, addr, storeArgs...)
	waitReady(t, d2)
	waitFor(t, 30*time.Second, "runs after the restart", func() bool { return ep.runs() >= seen+3 })

	// History is whole: every run the endpoint saw has its RunStarted.
	recs := d2.events(httpTask.ID.String())
	started := map[int]int{}
	outcomes := map[int]int{}
	handed := map[int]string{}
	lastCP := "null"
	for _, r := range recs {
		e, err := events.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		switch e := e.(type) {
		case events.RunStarted:
			started[e.Run]++
			handed[e.Run] = lastCP
		case events.RunCompleted:
			outcomes[e.Run]++
			if len(e.Checkpoint) > 0 {
				lastCP = compact(e.Checkpoint)
			}
		case events.RunFailed:
			outcomes[e.Run]++
		case events.RunDropped:
			outcomes[e.Run]++
		case events.RunForcedEnd:
			outcomes[e.Run]++
			if len(e.Checkpoint) > 0 {
				lastCP = compact(e.Checkpoint)
			}
		}
	}
	ep.mu.Lock()
	for run, cp := range ep.given {
		if started[run] != 1 {
			ep.mu.Unlock()
			t.Fatalf("run %d reached the endpoint but has %d RunStarted events", run, started[run])
		}
		if cp != handed[run] {
			ep.mu.Unlock()
			t.Fatalf("run %d was handed checkpoint %s, want %s (the last one recorded before it started)", run, cp, handed[run])
		}
	}
	ep.mu.Unlock()
	for run, n := range started {
		if n > 1 {
			t.Fatalf("run %d started %d times", run, n)
		}
	}
	for run, n := range outcomes {
		if n > 1 {
			t.Fatalf("run %d has %d outcomes", run, n)
		}
	}
	if d2.task(noopTask.ID.String()).CompletedCount < 2 {
		t.Fatal("the noop task lost its completed runs")
	}

	// The CLI clients against the real daemon.
	cli := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append(args, "--server", d2.url)...).CombinedOutput()
		if err != nil {
			t.Fatalf("cronactor %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := cli("task", "list", "--owner", "demo"); !strings.Contains(out, noopTask.ID.String()) || !strings.Contains(out, "active") {
		t.Fatalf("task list:\n%s", out)
	}
	if out := cli("history", httpTask.ID.String()); !strings.Contains(out, "| Initial state |") || !strings.Contains(out, "poll1 begins execution") {
		t.Fatalf("history:\n%s", out)
	}
	if out := cli("task", "pause", noopTask.ID.String()); !strings.Contains(out, "paused") {
		t.Fatalf("task pause:\n%s", out)
	}
	if out := cli("owner", "delete", "demo"); !strings.Contains(out, "deleted 1 task") {
		t.Fatalf("owner delete:\n%s", out)
	}
	out, err := exec.Command(bin, "task", "get", "00000000-0000-0000-0000-000000000000", "--server", d2.url).CombinedOutput()
	if err == nil || !strings.HasPrefix(string(out), "cronactor: id: no such task") {
		t.Fatalf("task get of an unknown task: %v\n%s", err, out)
	}

	// Metrics count the runs since this start.
	resp, err := http.Get(d2.url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, series := range []string{`cronactor_runs_total{outcome="completed"}`, "cronactor_scheduling_lag_seconds_count", "cronactor_queue_depth", "cronactor_busy_workers", "cronactor_append_seconds_count", "cronactor_projection_lag_seconds"} {
		if !strings.Contains(string(metrics), series) {
			t.Fatalf("/metrics lacks %s", series)
		}
	}

	// SIGTERM: a graceful stop that exits 0.
	if err := d2.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- d2.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("daemon exited with %v after SIGTERM", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("daemon did not stop after SIGTERM")
	}

	// After a graceful stop the next start reads the tasks from the
	// snapshot the stop wrote, and they go on running.
	seen = ep.runs()
	d3 := startDaemonOn(t, bin, addr, storeArgs...)
	waitReady(t, d3)
	if !strings.Contains(d3.logs.String(), "tasks read from a snapshot") {
		t.Fatalf("the start after a graceful stop did not read a snapshot:\n%s", d3.logs.String())
	}
	waitFor(t, 30*time.Second, "runs after the start from the snapshot", func() bool { return ep.runs() >= seen+2 })
}

func (d *daemon) events(id string) []events.Recorded {
	var list history.EventList
	if code := d.call("GET", "/v1/tasks/"+id+"/events", nil, &list); code != 200 {
		d.t.Fatalf("events of %s: %d", id, code)
	}
	recs, err := list.Recorded()
	if err != nil {
		d.t.Fatal(err)
	}
	return recs
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return string(b)
	}
	return buf.String()
}

// TestDaemonOnEventStoreDB runs the whole daemon on the EventStoreDB store,
// against the in-process test double of the server (no real server runs on
// the build machines; see events/esdb for the real-server contract run).
func TestDaemonOnEventStoreDB(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test builds and runs the daemon")
	}
	bin := buildBinary(t)
	es := esdbtestserver.Run(t)
	addr := freeAddr(t)
	cmd := exec.Command(bin, "serve", "--store", "esdb", "--esdb", es.URL(), "--listen", addr, "--tick", "100ms")
	logs := &syncBuf{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	d := &daemon{t: t, cmd: cmd, url: "http://" + addr}
	waitFor(t, 30*time.Second, "daemon up on esdb\n"+logs.String(), func() bool {
		resp, err := http.Get(d.url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	var tk crontasks.Task
	if code := d.call("POST", "/v1/tasks", map[string]any{"name": "tick", "owner": "demo", "kind": "noop", "interval": "1s"}, &tk); code != 201 {
		t.Fatalf("create: %d\n%s", code, logs.String())
	}
	waitFor(t, 30*time.Second, "runs on esdb", func() bool { return d.task(tk.ID.String()).CompletedCount >= 2 })
	if n := len(d.events(tk.ID.String())); n < 7 {
		t.Fatalf("only %d events in the task's stream", n)
	}
}
