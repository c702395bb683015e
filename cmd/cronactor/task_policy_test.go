package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// bodyDaemon answers every request with one task row (or, for a trigger,
// a run ID or the refusal of a paused task) and keeps the bodies it got.
func bodyDaemon(t *testing.T) (*httptest.Server, func() map[string]any) {
	var mu sync.Mutex
	var last map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		last = nil
		_ = json.Unmarshal(b, &last)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/paused/backfill"):
			w.WriteHeader(http.StatusConflict)
			fmt.Fprint(w, `{"error":{"field":"id","message":"the task cannot be backfilled: the task is paused"}}`)
		case strings.HasSuffix(r.URL.Path, "/future/backfill"):
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"field":"to","message":"is in the future (now is 2026-03-09T00:00:00Z): a backfill asks for past slots only"}}`)
		case strings.HasSuffix(r.URL.Path, "/backfill"):
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprint(w, `{"slots":["2026-03-01T09:00:00+01:00","2026-03-02T09:00:00+01:00"]}`)
		case strings.HasSuffix(r.URL.Path, "/paused/trigger"):
			w.WriteHeader(http.StatusConflict)
			fmt.Fprint(w, `{"error":{"field":"id","message":"the task cannot be triggered: the task is paused"}}`)
		case strings.HasSuffix(r.URL.Path, "/trigger"):
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprint(w, `{"task_id":"0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa","run_id":"5a0f0000-0000-4000-8000-00000000005a"}`)
		default:
			fmt.Fprint(w, `{"id":"0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa","name":"n","status":"active","queue":"reports","run_state":"idle"}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() map[string]any { mu.Lock(); defer mu.Unlock(); return last }
}

// The policy flags become the API's fields, the retry flags one object.
func TestTaskPolicyFlags(t *testing.T) {
	srv, last := bodyDaemon(t)
	env := map[string]string{"CRONACTOR_SERVER": srv.URL}
	code, _, errOut := cliRun(t, env, "task", "create", "--name", "n", "--owner", "o", "--kind", "http", "--interval", "1m",
		"--queue", "reports", "--retry-max-attempts", "3", "--retry-initial-backoff", "1s", "--retry-max-backoff", "1m",
		"--retry-multiplier", "2", "--missed-run-policy", "skip", "--missed-after", "10s", "--start-deadline", "20s", "--heartbeat-timeout", "5s",
		"--overlap", "buffer_one", "--pause-after-failures", "3", "--history-retention", "720h")
	if code != 0 {
		t.Fatalf("create: exit %d: %s", code, errOut)
	}
	want := map[string]any{"name": "n", "owner": "o", "kind": "http", "interval": "1m", "queue": "reports",
		"retry":             map[string]any{"max_attempts": 3.0, "initial_backoff": "1s", "max_backoff": "1m", "multiplier": 2.0},
		"missed_run_policy": "skip", "missed_after": "10s", "start_deadline": "20s", "heartbeat_timeout": "5s",
		"overlap": "buffer_one", "pause_after_failures": 3.0, "history_retention": "720h"}
	if got := last(); !reflect.DeepEqual(got, want) {
		t.Errorf("create body %v, want %v", got, want)
	}
	// An update sends only what it is given; '' restores a default.
	code, _, errOut = cliRun(t, env, "task", "update", "0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa", "--retry-max-attempts", "1", "--queue", "")
	if code != 0 {
		t.Fatalf("update: exit %d: %s", code, errOut)
	}
	if got := last(); !reflect.DeepEqual(got, map[string]any{"retry": map[string]any{"max_attempts": 1.0}, "queue": ""}) {
		t.Errorf("update body %v", got)
	}
	for _, c := range []struct{ flag, value, msg string }{
		{"--retry-max-attempts", "three", "--retry-max-attempts must be a whole number"},
		{"--retry-initial-backoff", "soon", "--retry-initial-backoff must be a duration"},
		{"--retry-multiplier", "x2", "--retry-multiplier must be a number"},
	} {
		code, _, errOut := cliRun(t, env, "task", "update", "0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa", c.flag, c.value)
		if code != 2 || !strings.Contains(errOut, c.msg) {
			t.Errorf("%s %s: exit %d, %q", c.flag, c.value, code, errOut)
		}
	}
}

// task trigger prints the run's ID; a refusal is exit 1 with the reason.
func TestTaskTrigger(t *testing.T) {
	srv, _ := bodyDaemon(t)
	env := map[string]string{"CRONACTOR_SERVER": srv.URL}
	code, out, errOut := cliRun(t, env, "task", "trigger", "0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa")
	if code != 0 || out != "5a0f0000-0000-4000-8000-00000000005a\n" {
		t.Fatalf("trigger: exit %d, %q %q", code, out, errOut)
	}
	if code, out, _ := cliRun(t, env, "task", "trigger", "0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa", "-o", "json"); code != 0 || !strings.Contains(out, `"run_id":"5a0f`) {
		t.Fatalf("trigger -o json: exit %d, %q", code, out)
	}
	code, out, errOut = cliRun(t, env, "task", "trigger", "paused")
	// One line: the field, the server's message, and what to do.
	if code != 1 || out != "" || errOut != "cronactor: id: the task cannot be triggered: the task is paused (resume it first with `cronactor task resume paused`)\n" {
		t.Fatalf("refused trigger: exit %d, %q %q", code, out, errOut)
	}
	if code, _, errOut := cliRun(t, env, "task", "trigger"); code != 2 || !strings.Contains(errOut, "task trigger needs one TASK_ID") {
		t.Fatalf("no id: exit %d %q", code, errOut)
	}
}

// task backfill sends --from and --to as the window and prints the slots
// one per line; its flags are its own, both required; a refusal is exit 1
// naming the flag, with the hint for a paused task.
func TestTaskBackfill(t *testing.T) {
	srv, last := bodyDaemon(t)
	env := map[string]string{"CRONACTOR_SERVER": srv.URL}
	id := "0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa"
	code, out, errOut := cliRun(t, env, "task", "backfill", id, "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-03T00:00:00Z")
	if code != 0 || out != "2026-03-01T09:00:00+01:00\n2026-03-02T09:00:00+01:00\n" {
		t.Fatalf("backfill: exit %d, %q %q", code, out, errOut)
	}
	if got := last(); !reflect.DeepEqual(got, map[string]any{"from": "2026-03-01T00:00:00Z", "to": "2026-03-03T00:00:00Z"}) {
		t.Errorf("body %v", got)
	}
	if code, out, _ := cliRun(t, env, "task", "backfill", id, "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-03T00:00:00Z", "-o", "json"); code != 0 || !strings.Contains(out, `"slots":[`) {
		t.Fatalf("backfill -o json: exit %d, %q", code, out)
	}
	code, out, errOut = cliRun(t, env, "task", "backfill", "paused", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-03T00:00:00Z")
	if code != 1 || out != "" || errOut != "cronactor: id: the task cannot be backfilled: the task is paused (resume it first with `cronactor task resume paused`)\n" {
		t.Fatalf("refused backfill: exit %d, %q %q", code, out, errOut)
	}
	code, _, errOut = cliRun(t, env, "task", "backfill", "future", "--from", "2026-03-01T00:00:00Z", "--to", "2026-04-01T00:00:00Z")
	if code != 1 || errOut != "cronactor: --to: is in the future (now is 2026-03-09T00:00:00Z): a backfill asks for past slots only\n" {
		t.Fatalf("future window: exit %d %q", code, errOut)
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"task", "backfill", id, "--to", "2026-03-03T00:00:00Z"}, "--from is required"},
		{[]string{"task", "backfill", id, "--from", "2026-03-01T00:00:00Z"}, "--to is required"},
		{[]string{"task", "backfill", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-03T00:00:00Z"}, "task backfill needs one TASK_ID"},
		{[]string{"task", "trigger", id, "--from", "2026-03-01T00:00:00Z"}, "unknown flag --from"},
	} {
		if code, _, errOut := cliRun(t, env, c.args...); code != 2 || !strings.Contains(errOut, c.msg) {
			t.Errorf("%q: exit %d %q, want 2 with %q", c.args, code, errOut, c.msg)
		}
	}
}
