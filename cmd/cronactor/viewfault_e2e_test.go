package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// startDaemonEnv starts the daemon with extra environment and returns it
// with its log and a channel closed when it exits, once /healthz answers
// 200 (or fails the test if the process exits first).
func startDaemonEnv(t *testing.T, bin, data, addr string, env ...string) (*daemon, *syncBuf, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--data", data, "--listen", addr, "--tick", "100ms")
	cmd.Env = append(append(os.Environ(), "CRONACTOR_TOKEN="), env...)
	logs := &syncBuf{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	d := &daemon{t: t, cmd: cmd, url: "http://" + addr}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	waitFor(t, 30*time.Second, "daemon up", func() bool {
		select {
		case <-exited:
			t.Fatalf("the daemon exited:\n%s", logs.String())
		default:
		}
		resp, err := http.Get(d.url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return d, logs, exited
}

// raw is one HTTP answer, whatever its status.
type raw struct {
	code int
	hdr  http.Header
	body []byte
}

func (d *daemon) raw(method, path, body string) raw {
	d.t.Helper()
	req, _ := http.NewRequest(method, d.url+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return raw{resp.StatusCode, resp.Header, b}
}

type health struct {
	Status string `json:"status"`
	View   struct {
		State      string  `json:"state"`
		Progress   float64 `json:"progress"`
		Message    string  `json:"message"`
		MovedAside string  `json:"moved_aside"`
	} `json:"view"`
}

func (d *daemon) health() health {
	d.t.Helper()
	var h health
	a := d.raw("GET", "/healthz", "")
	if a.code != 200 {
		d.t.Fatalf("/healthz: %d %s", a.code, a.body)
	}
	if err := json.Unmarshal(a.body, &h); err != nil {
		d.t.Fatalf("/healthz: %v: %s", err, a.body)
	}
	return h
}

// TestDaemonRebuildsDamagedView: the view of a stopped daemon's data
// directory is damaged (every sstable of it). The daemon starts anyway,
// moves the damaged view aside, schedules runs while it rebuilds the view
// from the log in the background (throttled so the rebuild can be watched),
// answers view queries 503 with the reason and Retry-After meanwhile, still
// accepts writes, and answers 200 once the view is rebuilt.
func TestDaemonRebuildsDamagedView(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test builds and runs the daemon")
	}
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	addr := freeAddr(t)

	d, _, exited := startDaemonEnv(t, bin, data, addr)
	// Many idle tasks make a log worth rebuilding; one runs every second.
	const idle = 200
	for i := range idle {
		if code := d.call("POST", "/v1/tasks", map[string]any{"name": fmt.Sprint("idle", i), "owner": "bulk", "kind": "noop", "interval": "1h"}, nil); code != 201 {
			t.Fatalf("create idle task %d: %d", i, code)
		}
	}
	var busy crontasks.Task
	if code := d.call("POST", "/v1/tasks", map[string]any{"name": "busy", "owner": "demo", "kind": "noop", "interval": "1s"}, &busy); code != 201 {
		t.Fatalf("create busy task: %d", code)
	}
	waitFor(t, 30*time.Second, "busy runs", func() bool { return d.task(busy.ID.String()).CompletedCount >= 2 })
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not stop after SIGTERM")
	}

	// Damage every table of the view.
	viewDir := filepath.Join(data, "view")
	ssts, _ := filepath.Glob(filepath.Join(viewDir, "*.sst"))
	if len(ssts) == 0 {
		t.Fatal("the view has no sstable to damage")
	}
	for _, p := range ssts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i := len(b) / 4; i < len(b)/4+64 && i < len(b); i++ {
			b[i] ^= 0xA5
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	restart := time.Now()

	d2, logs, _ := startDaemonEnv(t, bin, data, addr, "CRONACTOR_VIEW_REBUILD_RATE=40")
	h := d2.health()
	if h.Status != "degraded" || h.View.State != "rebuilding" || !strings.HasPrefix(h.View.MovedAside, "view.damaged-") {
		t.Fatalf("/healthz right after the start: %+v", h)
	}
	if _, err := os.Stat(filepath.Join(data, h.View.MovedAside)); err != nil {
		t.Fatalf("the damaged view is not where the daemon says: %v", err)
	}
	// View queries: 503 with the reason, the JSON error shape and Retry-After.
	for _, path := range []string{"/v1/tasks", "/v1/tasks/" + busy.ID.String(), "/v1/tasks?owner=demo&as_of=1"} {
		a := d2.raw("GET", path, "")
		var e struct {
			Error struct{ Field, Message string } `json:"error"`
		}
		_ = json.Unmarshal(a.body, &e)
		if a.code != 503 || a.hdr.Get("Retry-After") == "" || e.Error.Field != "view" ||
			!strings.HasPrefix(e.Error.Message, "the cron_tasks view is rebuilding: ") || !strings.Contains(e.Error.Message, "% (position ") {
			t.Fatalf("GET %s while rebuilding: %d Retry-After %q %s", path, a.code, a.hdr.Get("Retry-After"), a.body)
		}
	}
	// Writes go on, answered with the task's row folded from its events.
	var made crontasks.Task
	if code := d2.call("POST", "/v1/tasks", map[string]any{"name": "during", "owner": "demo", "kind": "noop", "interval": "1s"}, &made); code != 201 || made.Name != "during" || made.Status != "active" {
		t.Fatalf("create while rebuilding: %d %+v", code, made)
	}
	if a := d2.raw("POST", "/v1/tasks/"+busy.ID.String()+"/pause", ""); a.code != 200 || !strings.Contains(string(a.body), `"status": "paused"`) {
		t.Fatalf("pause while rebuilding: %d %s", a.code, a.body)
	}
	if a := d2.raw("POST", "/v1/tasks/"+busy.ID.String()+"/resume", ""); a.code != 200 {
		t.Fatalf("resume while rebuilding: %d %s", a.code, a.body)
	}
	// The scheduler runs: the new task's runs are in the log (the audit
	// reads the log, not the view).
	waitFor(t, 30*time.Second, "runs of a task created during the rebuild", func() bool {
		for _, r := range d2.events(made.ID.String()) {
			if e, err := events.Decode(r); err == nil {
				if _, ok := e.(events.RunCompleted); ok && r.At.After(restart) {
					return true
				}
			}
		}
		return false
	})
	if h := d2.health(); h.View.State != "rebuilding" {
		t.Logf("note: the rebuild ended before the first run of the new task (%+v)", h)
	}

	// Once rebuilt: 200, every task there.
	waitFor(t, 60*time.Second, "the rebuild to end", func() bool { return d2.health().Status == "ok" })
	var page crontasks.Page
	if code := d2.call("GET", "/v1/tasks?limit=1000", nil, &page); code != 200 || len(page.Tasks) != idle+2 {
		t.Fatalf("list after the rebuild: %d, %d tasks, want %d", code, len(page.Tasks), idle+2)
	}
	if got := d2.task(made.ID.String()); got.CompletedCount < 1 {
		t.Fatalf("task created during the rebuild: %+v", got)
	}
	if !strings.Contains(logs.String(), "cron_tasks view rebuilding") || !strings.Contains(logs.String(), "percent=") {
		t.Errorf("no rebuild progress in the log:\n%s", logs.String())
	}
	a := d2.raw("GET", "/metrics", "")
	for _, series := range []string{"cronactor_view_rebuilds_total 1", "cronactor_view_rebuild_progress", "cronactor_view_ready 1"} {
		if !strings.Contains(string(a.body), series) {
			t.Errorf("/metrics lacks %q", series)
		}
	}
}
