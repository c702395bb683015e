package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/projections/crontasks"
)

// refusingDaemon answers every request with status and body, and counts
// the requests.
func refusingDaemon(t *testing.T, status int, body string) (url string, requests func() int) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

const someID = "0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa"

// TestSubcommandsTakeOnlyTheirFlags: a flag of another subcommand is a
// usage error (exit 2) naming it and what to use instead, sent nowhere;
// each subcommand's help lists only its own flags.
func TestSubcommandsTakeOnlyTheirFlags(t *testing.T) {
	url, requests := refusingDaemon(t, http.StatusOK, `{}`)
	env := map[string]string{"CRONACTOR_SERVER": url}
	create := []string{"task", "create", "--name", "n", "--owner", "o", "--kind", "noop", "--interval", "1m"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(create, "--next-run", "2030-01-01T00:00:00Z"), "task create: --next-run does not apply here: a new task's first due time is --first-run"},
		{[]string{"task", "update", someID, "--name", "renamed"}, "a task's owner and name cannot change"},
		{[]string{"task", "update", someID, "--kind", "http"}, "task update: --kind does not apply here: a task's kind cannot change"},
		{[]string{"task", "update", someID, "--first-run", "2030-01-01T00:00:00Z"}, "task update: --first-run does not apply here: use --next-run"},
		{[]string{"task", "get", someID, "--interval", "1m"}, "task get: unknown flag --interval"},
		{[]string{"task", "pause", someID, "--priority", "2"}, "task pause: unknown flag --priority"},
		{[]string{"projections", "status", "--batch", "5"}, "projections status: --batch does not apply here: only projections rebuild"},
		{[]string{"projections", "rebuild", "--server", "http://127.0.0.1:7070"}, "projections rebuild: --server does not apply here"},
	} {
		code, out, errOut := cliRun(t, env, c.args...)
		first := strings.SplitN(errOut, "\n", 2)[0]
		if code != 2 || out != "" || !strings.Contains(first, c.want) {
			t.Errorf("%q: exit %d, first line %q, want %q", c.args, code, first, c.want)
		}
	}
	if n := requests(); n != 0 {
		t.Errorf("%d requests reached the daemon", n)
	}
	for path, absent := range map[string][]string{
		"task create": {"--next-run"},
		"task update": {"--kind", "--first-run"},
		"task get":    {"--interval", "--cron", "--retry-max-attempts", "--first-run"},
		"task pause":  {"--interval", "--payload"},
		"task list":   {"--interval", "--next-run"},
		// --batch is rebuild's; status folds nothing.
		"projections status": {"--batch"},
	} {
		_, out, _ := cliRun(t, nil, append(strings.Fields(path), "--help")...)
		for _, f := range absent {
			if strings.Contains(out, f+" ") {
				t.Errorf("%s --help lists %s:\n%s", path, f, out)
			}
		}
	}
	_, out, _ := cliRun(t, nil, "task", "create", "--help")
	for _, f := range []string{"--first-run", "--kind", "--name", "--owner"} {
		if !strings.Contains(out, f+" ") {
			t.Errorf("task create --help lacks %s", f)
		}
	}
}

// TestCreateUsageCaughtLocally: a task create without a name, owner, kind
// or schedule is a usage error (exit 2) naming what is missing; the daemon
// is not asked.
func TestCreateUsageCaughtLocally(t *testing.T) {
	url, requests := refusingDaemon(t, http.StatusBadRequest, `{"error":{"field":"kind","message":"is required"}}`)
	env := map[string]string{"CRONACTOR_SERVER": url}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--name", "n", "--owner", "o", "--interval", "1m"}, "task create: --kind is required"},
		{[]string{"--owner", "o", "--kind", "noop", "--interval", "1m"}, "task create: --name is required"},
		{[]string{"--name", "n", "--kind", "noop", "--interval", "1m"}, "task create: --owner is required"},
		{[]string{"--name", "n", "--owner", "o", "--kind", "noop"}, "task create: a schedule is required"},
		{[]string{"--name", "n", "--owner", "o", "--kind", "noop", "--interval", "1m", "--retry-initial-backoff", "2m"},
			"task create: --retry-initial-backoff needs --retry-max-attempts N too"},
		{[]string{"--name", "n", "--owner", "o", "--kind", "noop", "--interval", "1m", "--retry-multiplier", "3"},
			"task create: --retry-multiplier needs --retry-max-attempts N too"},
	} {
		code, _, errOut := cliRun(t, env, append([]string{"task", "create"}, c.args...)...)
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		if code != 2 || !strings.HasPrefix(lines[0], "cronactor: "+c.want) || len(lines) > 2 {
			t.Errorf("%q: exit %d, stderr %q", c.args, code, errOut)
		}
	}
	if n := requests(); n != 0 {
		t.Errorf("%d requests reached the daemon", n)
	}
}

// TestServerRefusalsAreOneLine: the daemon's JSON error becomes one line
// "cronactor: FIELD: MESSAGE", with a hint where one helps, exit 1.
func TestServerRefusalsAreOneLine(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		args   []string
		want   string
	}{
		{http.StatusBadRequest, `{"error":{"field":"id","message":"must be a task UUID, got \"TASK_ID\""}}`,
			[]string{"task", "get", "TASK_ID"},
			`cronactor: id: must be a task UUID, got "TASK_ID" (task list shows IDs; --owner and --name name a task too)`},
		{http.StatusUnauthorized, "{\n  \"error\": {\n    \"field\": \"authorization\",\n    \"message\": \"a valid bearer token is required\"\n  }\n}\n",
			[]string{"task", "list"},
			"cronactor: authorization: a valid bearer token is required (give the daemon's token with --token or CRONACTOR_TOKEN)"},
		{http.StatusConflict, `{"error":{"field":"id","message":"the task cannot be triggered: the task is paused"}}`,
			[]string{"task", "trigger", someID},
			"cronactor: id: the task cannot be triggered: the task is paused (resume it first with `cronactor task resume " + someID + "`)"},
		{http.StatusBadRequest, `{"error":{"field":"retry.initial_backoff","message":"must be positive, got 0s"}}`,
			[]string{"task", "create", "--name", "n", "--owner", "o", "--kind", "noop", "--interval", "1m", "--retry-max-attempts", "3"},
			"cronactor: --retry-initial-backoff: must be positive, got 0s"},
		{http.StatusBadRequest, `{"error":{"field":"first_run","message":"must be an RFC 3339 time"}}`,
			[]string{"task", "create", "--name", "n", "--owner", "o", "--kind", "noop", "--interval", "1m", "--first-run", "x"},
			"cronactor: --first-run: must be an RFC 3339 time"},
		{http.StatusInternalServerError, `{"error":{"message":"internal error","id":"abc"}}`,
			[]string{"task", "get", someID}, "cronactor: internal error (error id abc)"},
		{http.StatusBadGateway, "<html>\n<body>bad gateway</body>", []string{"task", "get", someID},
			"cronactor: 502 Bad Gateway: <html>"},
		{http.StatusNotFound, `{"error":{"field":"id","message":"no such task"}}`, []string{"explain", someID, "--at", "2026-11-22T02:00:30Z"},
			"cronactor: id: no such task (task list shows IDs; --owner and --name name a task too)"},
	} {
		url, _ := refusingDaemon(t, c.status, c.body)
		code, out, errOut := cliRun(t, map[string]string{"CRONACTOR_SERVER": url}, c.args...)
		if code != 1 || out != "" || errOut != c.want+"\n" {
			t.Errorf("%q answered %d: exit %d, stderr\n%q, want\n%q", c.args, c.status, code, errOut, c.want)
		}
	}
}

// TestTaskNamedByOwnerAndName: --owner O --name N names a task wherever
// TASK_ID does; a live task before a deleted one of the same name.
func TestTaskNamedByOwnerAndName(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tasks := sampleTasks(now)
	old := tasks[0]
	old.ID, old.Status = tasks[1].ID, "deleted" // an older incarnation of inbox
	listed := append(append([]crontasks.Task(nil), tasks...), old)
	d := newFakeDaemon(t, listed, sampleEvents(t, tasks[0].ID))
	env := map[string]string{"CRONACTOR_SERVER": d.URL}
	id := tasks[0].ID.String()
	by := []string{"--owner", "channel/pop3/42", "--name", "inbox"}
	for want, args := range map[string][]string{
		"GET /v1/tasks/" + id:               {"task", "get"},
		"POST /v1/tasks/" + id + "/pause":   {"task", "pause"},
		"POST /v1/tasks/" + id + "/resume":  {"task", "resume"},
		"POST /v1/tasks/" + id + "/trigger": {"task", "trigger"},
		"GET /v1/tasks/" + id + "/upcoming": {"task", "upcoming"},
		"DELETE /v1/tasks/" + id:            {"task", "delete"},
		"PATCH /v1/tasks/" + id:             {"task", "update", "--priority", "2"},
		"GET /v1/tasks/" + id + "/events":   {"history"},
	} {
		code, _, errOut := cliRun(t, env, append(args, by...)...)
		if code != 0 || d.last() != want+" " {
			t.Errorf("%q: exit %d %s; daemon last saw %q, want %q", args, code, errOut, d.last(), want)
		}
	}
	code, _, errOut := cliRun(t, env, "explain", "--owner", "channel/pop3/42", "--name", "inbox", "--at", "2026-11-22T02:00:30Z")
	if code != 0 || d.last() != "GET /v1/tasks/"+id+"/events " {
		t.Errorf("explain by name: exit %d %s; daemon last saw %q", code, errOut, d.last())
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"task", "get", "--owner", "channel/pop3/42"}, 2, "--owner and --name go together"},
		{[]string{"task", "get", id, "--owner", "channel/pop3/42", "--name", "inbox"}, 2, "give TASK_ID or --owner and --name, not both"},
		{[]string{"task", "get"}, 2, "task get needs one TASK_ID (or --owner OWNER --name NAME)"},
		{[]string{"task", "get", "--owner", "channel/pop3/42", "--name", "nothing"}, 1, `no task named "nothing" of owner "channel/pop3/42"`},
	} {
		code, _, errOut := cliRun(t, env, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
	// The deleted incarnation alone is found when it is all there is.
	d2 := newFakeDaemon(t, []crontasks.Task{old}, nil)
	code, out, errOut := cliRun(t, map[string]string{"CRONACTOR_SERVER": d2.URL}, append([]string{"task", "get", "-o", "json"}, by...)...)
	var got crontasks.Task
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || d2.last() != "GET /v1/tasks/"+old.ID.String()+" " {
		t.Errorf("deleted task by name: exit %d %s; daemon last saw %q", code, errOut, d2.last())
	}
}

// TestEmptyTaskListSaysSo: a list with no rows says "no tasks" rather than
// printing a lone header (and says when deleted ones were left out).
func TestEmptyTaskListSaysSo(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		tasks []crontasks.Task
		want  string
	}{
		{nil, "no tasks\n"},
		{sampleTasks(now)[1:2], "no tasks (only deleted ones: --all shows them)\n"},
	} {
		d := newFakeDaemon(t, c.tasks, nil)
		code, out, errOut := cliRun(t, map[string]string{"CRONACTOR_SERVER": d.URL}, "task", "list")
		if code != 0 || out != c.want {
			t.Errorf("%d tasks: exit %d, stdout %q (want %q), stderr %q", len(c.tasks), code, out, c.want, errOut)
		}
	}
}
