package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// flaky is an http task's endpoint that answers the first fails requests
// with status, then 200.
type flaky struct {
	mu     sync.Mutex
	fails  int
	status int
	got    []int // the attempt each request said it was
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Attempt int `json:"attempt"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, req.Attempt)
	if len(f.got) <= f.fails {
		w.WriteHeader(f.status)
		fmt.Fprintf(w, "failure %d", len(f.got))
		return
	}
	fmt.Fprint(w, `{}`)
}

func (f *flaky) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.got)
}

// historyLine is one line of `cronactor history --format json`.
type historyLine struct {
	At      time.Time `json:"at"`
	Event   string    `json:"event"`
	Run     int       `json:"run"`
	RunID   string    `json:"run_id"`
	Attempt int       `json:"attempt"`
	Trigger string    `json:"trigger"`
	Reason  string    `json:"reason"`
	Detail  string    `json:"detail"`
	RetryOf string    `json:"retry_of"`
	RetryAt time.Time `json:"retry_at"`
	Backoff string    `json:"backoff"`
	NoRetry string    `json:"no_retry"`
}

// TestDaemonRetriesFailingHTTPTask: the real daemon retries an http task
// whose endpoint answers 500 twice and then 200 (retry: 3 attempts, 1 s
// initial backoff, multiplier 2), and `cronactor history` shows attempts 2
// and 3, the run each retries, the backoffs 1 s and 2 s and the
// completion. The same task against an endpoint that answers 404 is not
// retried, and the history says why. A manual trigger (`cronactor task
// trigger`) runs the task once more, outside its schedule.
func TestDaemonRetriesFailingHTTPTask(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test builds and runs the daemon")
	}
	bin := buildBinary(t)
	d := startDaemonTick(t, bin, filepath.Join(t.TempDir(), "data"), freeAddr(t), "100ms")
	cli := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(bin, append(args, "--server", d.url)...).CombinedOutput()
		if err != nil {
			t.Fatalf("cronactor %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	lines := func(id string) []historyLine {
		t.Helper()
		var out []historyLine
		sc := bufio.NewScanner(strings.NewReader(cli("history", id, "--format", "json")))
		for sc.Scan() {
			var l historyLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatalf("history line %q: %v", sc.Text(), err)
			}
			out = append(out, l)
		}
		return out
	}
	create := func(name string, ep *flaky) crontasks.Task {
		t.Helper()
		srv := httptest.NewServer(ep)
		t.Cleanup(srv.Close)
		var task crontasks.Task
		first := time.Now().Add(2 * time.Second).UTC().Truncate(time.Second).Format(time.RFC3339)
		if code := d.call("POST", "/v1/tasks", map[string]any{"name": name, "owner": "e2e", "kind": "http",
			"payload": map[string]any{"url": srv.URL}, "interval": "1h", "timebox": "30s", "first_run": first,
			"retry": map[string]any{"max_attempts": 3, "initial_backoff": "1s", "max_backoff": "1m", "multiplier": 2}}, &task); code != 201 {
			t.Fatalf("create %s: %d", name, code)
		}
		return task
	}

	flakyEP := &flaky{fails: 2, status: http.StatusInternalServerError}
	brokenEP := &flaky{fails: 1 << 30, status: http.StatusNotFound}
	ok, broken := create("flaky", flakyEP), create("broken", brokenEP)
	waitFor(t, 60*time.Second, "the third attempt to complete", func() bool { return d.task(ok.ID.String()).CompletedCount == 1 })
	waitFor(t, 30*time.Second, "the 404 to fail", func() bool { return d.task(broken.ID.String()).FailedCount == 1 })

	// The retried task: run 1 fails, attempt 2 (run 2) fails, attempt 3
	// (run 3) completes.
	hist := lines(ok.ID.String())
	trail := func() string {
		var b strings.Builder
		for _, l := range hist {
			j, _ := json.Marshal(l)
			b.Write(append(j, '\n'))
		}
		return b.String()
	}
	find := func(event string, run int) historyLine {
		t.Helper()
		for _, l := range hist {
			if l.Event == event && l.Run == run {
				return l
			}
		}
		t.Fatalf("no %s of run %d in the history:\n%s", event, run, trail())
		return historyLine{}
	}
	fail1, fail2 := find("RunFailed", 1), find("RunFailed", 2)
	enq2, enq3 := find("RunEnqueued", 2), find("RunEnqueued", 3)
	if fail1.Backoff != "1s" || fail1.RetryAt.Sub(fail1.At) != time.Second || !strings.Contains(fail1.Detail, "500") {
		t.Errorf("first failure: %+v, want a 1s backoff", fail1)
	}
	if enq2.Attempt != 2 || enq2.RetryOf != fail1.RunID || enq2.At.Before(fail1.RetryAt) || enq2.At.Sub(fail1.RetryAt) > 2*time.Second {
		t.Errorf("attempt 2 enqueued %+v; want attempt 2, retry of %s, on the first tick at or after %s", enq2, fail1.RunID, fail1.RetryAt)
	}
	if fail2.Attempt != 2 || fail2.Backoff != "2s" || fail2.RetryAt.Sub(fail2.At) != 2*time.Second {
		t.Errorf("second failure: %+v, want attempt 2 and a 2s backoff", fail2)
	}
	if enq3.Attempt != 3 || enq3.RetryOf != fail2.RunID || enq3.At.Before(fail2.RetryAt) {
		t.Errorf("attempt 3 enqueued %+v; want attempt 3, retry of %s, at or after %s", enq3, fail2.RunID, fail2.RetryAt)
	}
	if done := find("RunCompleted", 3); done.Attempt != 3 {
		t.Errorf("completion %+v, want attempt 3", done)
	}
	flakyEP.mu.Lock()
	if fmt.Sprint(flakyEP.got) != "[1 2 3]" {
		t.Errorf("the endpoint saw attempts %v, want [1 2 3]", flakyEP.got)
	}
	flakyEP.mu.Unlock()
	table := cli("history", ok.ID.String())
	for _, want := range []string{"flaky1 fails (", "after 1 s backoff)", "Cron enqueues flaky2 (attempt 2, retry of flaky1)",
		"flaky2 begins execution (attempt 2, retry of flaky1: no spacing check)", "flaky2 fails (", "after 2 s backoff)",
		"Cron enqueues flaky3 (attempt 3, retry of flaky2)", "flaky3 ends execution"} {
		if !strings.Contains(table, want) {
			t.Errorf("history table lacks %q:\n%s", want, table)
		}
	}
	if row := d.task(ok.ID.String()); row.RetryCount != 2 || row.FailedCount != 2 || row.RunState != crontasks.RunIdle {
		t.Errorf("task row: retry_count %d, failed_count %d, run_state %s", row.RetryCount, row.FailedCount, row.RunState)
	}

	// The 404: a permanent failure, no retry, and the history says why.
	hist = lines(broken.ID.String())
	bad := find("RunFailed", 1)
	if bad.NoRetry == "" || bad.Backoff != "" || !strings.Contains(bad.Detail, "404") {
		t.Errorf("404 failure: %+v, want no retry with a reason", bad)
	}
	for _, l := range hist {
		if l.Attempt > 1 {
			t.Errorf("the 404 was retried: %+v", l)
		}
	}
	if table := cli("history", broken.ID.String()); !strings.Contains(table, "broken1 fails (") || !strings.Contains(table, "no retry: ") {
		t.Errorf("history table of the 404:\n%s", table)
	}
	if n := brokenEP.requests(); n != 1 {
		t.Errorf("the 404 endpoint got %d requests, want 1", n)
	}

	// A manual trigger: one more run now; its ID is printed.
	runID, err := uuid.Parse(strings.TrimSpace(cli("task", "trigger", ok.ID.String())))
	if err != nil {
		t.Fatalf("task trigger printed no run ID: %v", err)
	}
	waitFor(t, 30*time.Second, "the triggered run", func() bool { return d.task(ok.ID.String()).CompletedCount == 2 })
	hist = lines(ok.ID.String())
	trig := find("RunEnqueued", 4)
	if trig.Trigger != "manual" || trig.RunID != runID.String() {
		t.Errorf("triggered run %+v, want trigger manual and run ID %s", trig, runID)
	}
	// A paused task refuses a trigger: exit 1 and the reason.
	cli("task", "pause", ok.ID.String())
	out, err := exec.Command(bin, "task", "trigger", ok.ID.String(), "--server", d.url).CombinedOutput()
	if ee, isExit := err.(*exec.ExitError); !isExit || ee.ExitCode() != 1 ||
		!strings.HasPrefix(string(out), "cronactor: id: the task cannot be triggered: the task is paused (resume it first with `cronactor task resume") {
		t.Errorf("trigger of a paused task: %v\n%s", err, out)
	}
}
