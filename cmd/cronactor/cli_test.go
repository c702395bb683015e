package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// cliRun runs one command line in-process and returns its exit status and
// output, as the binary would.
func cliRun(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &cliEnv{stdout: &out, stderr: &errOut, getenv: func(k string) string { return env[k] },
		now: func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }}
	code = runMain(context.Background(), e, args)
	return code, out.String(), errOut.String()
}

// commandPaths lists every command and subcommand: "serve", "task",
// "task create", …
func commandPaths() []string {
	var paths []string
	for _, name := range commandNames(true) {
		paths = append(paths, name)
		for _, s := range commands[name].subs {
			paths = append(paths, name+" "+s)
		}
	}
	return paths
}

func TestEveryCommandHasHelpWithAnExample(t *testing.T) {
	for _, path := range commandPaths() {
		h, ok := helps[path]
		if !ok || h.usage == "" || h.example == "" || h.about == "" {
			t.Errorf("%s: no help entry with usage, about and an example", path)
		}
		if strings.Contains(path, " ") && h.summary == "" {
			t.Errorf("%s: no summary for its parent's list", path)
		}
	}
	for path := range helps {
		if !contains(commandPaths(), path) {
			t.Errorf("help for %q, which is no command", path)
		}
	}
}

// TestHelpExitsZero: -h, --help and `help PATH` print the help on stdout
// and exit 0, for every command and subcommand.
func TestHelpExitsZero(t *testing.T) {
	for _, path := range append([]string{""}, commandPaths()...) {
		words := strings.Fields(path)
		for _, args := range [][]string{append(words, "-h"), append(words, "--help"), append([]string{"help"}, words...)} {
			code, out, errOut := cliRun(t, nil, args...)
			if code != 0 || errOut != "" {
				t.Errorf("%q: exit %d, stderr %q", args, code, errOut)
				continue
			}
			if !strings.Contains(out, "usage: cronactor") {
				t.Errorf("%q: no usage line in\n%s", args, out)
			}
			if path != "" && !strings.Contains(out, "example:\n  cronactor "+words[0]) {
				t.Errorf("%q: no worked example in\n%s", args, out)
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.Contains(line, "(default 0s)") || strings.Count(line, "(default") > 1 {
					t.Errorf("%q: a flag's default said wrongly or twice: %s", args, line)
				}
			}
		}
	}
	// A summary that lists a command's subcommands (a|b|c) lists them all.
	for _, name := range commandNames(true) {
		c := commands[name]
		if !strings.Contains(c.summary, "|") {
			continue
		}
		for _, sub := range c.subs {
			if !strings.Contains(c.summary, sub) {
				t.Errorf("%s: its summary %q leaves out %s", name, c.summary, sub)
			}
		}
	}
	// A subcommand's help lists its flags.
	_, out, _ := cliRun(t, nil, "task", "list", "--help")
	for _, f := range []string{"--all", "-o, --output FORMAT", "--server URL", "--token TOKEN", "--owner OWNER"} {
		if !strings.Contains(out, f) {
			t.Errorf("task list --help lacks %q:\n%s", f, out)
		}
	}
}

// TestUsageErrorsExitTwo: an unknown command, subcommand or flag, or a bad
// argument, is one line naming it plus a hint, and exit status 2.
func TestUsageErrorsExitTwo(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
		hint string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`, "cronactor --help"},
		{[]string{"serv"}, `did you mean "serve"?`, "cronactor --help"},
		{[]string{"task", "lst"}, `unknown subcommand "lst" of task; did you mean "list"?`, "cronactor task --help"},
		{[]string{"task"}, "task needs a subcommand: create, list", "cronactor task --help"},
		{[]string{"task", "list", "--bogus"}, "unknown flag --bogus", "cronactor task list --help"},
		{[]string{"task", "list", "-o", "yaml"}, "-o must be table, wide or json", "cronactor task list --help"},
		{[]string{"serve", "--tick", "soon"}, "--tick", "cronactor serve --help"},
		{[]string{"serve", "--nope"}, "unknown flag --nope", "cronactor serve --help"},
		{[]string{"history"}, "history needs one TASK_ID", "cronactor history --help"},
		{[]string{"explain", "not-a-uuid", "--at", "2026-01-01T00:00:00Z"}, "TASK must be a task id", "cronactor explain --help"},
		{[]string{"simulate", "--format", "xml", "x.yaml"}, "--format", "cronactor simulate --help"},
		{[]string{"projections", "shrink"}, `unknown subcommand "shrink" of projections`, "cronactor projections --help"},
		{[]string{"bench", "disk"}, `unknown subcommand "disk" of bench`, "cronactor bench --help"},
		{[]string{"bench", "store", "--writers", "-1"}, "--writers", "cronactor bench store --help"},
		{[]string{"bench", "lag", "--load", "2"}, "LagConfig.Load", "cronactor bench lag --help"},
		{[]string{"bench", "lag", "--peers", "/nonexistent/peers"}, "--peers /nonexistent/peers", "cronactor bench lag --help"},
		{[]string{"bench", "scheduler", "--tick", "1h1s"}, "SchedulerConfig.Tick", "cronactor bench scheduler --help"},
		{[]string{"bench", "report"}, "name at least one of --store", "cronactor bench report --help"},
		{[]string{"bench-restart-child", "--probe", "x"}, "--probe", "cronactor bench-restart-child --help"},
		{[]string{"completion", "powershell"}, `unknown subcommand "powershell" of completion`, "cronactor completion --help"},
		{[]string{"version", "extra"}, "takes no arguments", "cronactor version --help"},
		{[]string{"owner", "delete"}, "owner delete needs one OWNER", "cronactor owner delete --help"},
		{[]string{"task", "get", "--server", "ftp://x", "id"}, "want http(s)://host:port", "cronactor task get --help"},
	} {
		code, out, errOut := cliRun(t, nil, c.args...)
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		if code != 2 || out != "" || len(lines) != 2 || !strings.Contains(lines[0], c.want) || !strings.Contains(lines[1], "Run '"+c.hint+"'") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2, one line with %q and the hint %q", c.args, code, out, errOut, c.want, c.hint)
		}
	}
	// No command at all: the command list on stderr, exit 2.
	if code, _, errOut := cliRun(t, nil); code != 2 || !strings.Contains(errOut, "commands:") {
		t.Errorf("no command: exit %d, stderr %q", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, _ := cliRun(t, nil, args...)
		if code != 0 || !strings.HasPrefix(out, "cronactor ") || !strings.Contains(out, "commit: ") || !strings.Contains(out, "go:      go1.") {
			t.Errorf("%q: exit %d\n%s", args, code, out)
		}
	}
	code, out, _ := cliRun(t, nil, "version", "--json")
	var v buildVersion
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || v.Version == "" || v.Commit == "" || !strings.HasPrefix(v.Go, "go1.") {
		t.Errorf("version --json: exit %d, %v: %s", code, err, out)
	}
	// Link-time values win over the build info.
	version, commit = "v1.2.3", "abc123"
	defer func() { version, commit = "", "" }()
	if _, out, _ := cliRun(t, nil, "version"); !strings.Contains(out, "cronactor v1.2.3\ncommit:  abc123") {
		t.Errorf("version with link-time values:\n%s", out)
	}
}

// TestCompletionScripts: each script lists every command, subcommand and
// flag but the hidden commands, and is valid for its shell (checked by the shell when installed).
func TestCompletionScripts(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		code, out, errOut := cliRun(t, nil, "completion", shell)
		if code != 0 || errOut != "" {
			t.Fatalf("completion %s: exit %d: %s", shell, code, errOut)
		}
		for _, path := range commandPaths() {
			if commands[strings.Fields(path)[0]].hidden {
				if strings.Contains(out, path) {
					t.Errorf("%s script offers the hidden command %q", shell, path)
				}
				continue
			}
			for _, w := range strings.Fields(path) {
				if !strings.Contains(out, w) {
					t.Errorf("%s script lacks %q", shell, w)
				}
			}
		}
		for _, flag := range []string{"drain-timeout", "print-config", "due-before", "window", "memory-view"} {
			if !strings.Contains(out, flag) {
				t.Errorf("%s script lacks the flag %s", shell, flag)
			}
		}
		file := filepath.Join(t.TempDir(), "cronactor."+shell)
		if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		bin, err := exec.LookPath(shell)
		if err != nil {
			t.Logf("%s not installed: syntax not checked", shell)
			continue
		}
		if b, err := exec.Command(bin, "-n", file).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", shell, err, b)
		}
	}
	// bash: the script completes as promised.
	if _, err := exec.LookPath("bash"); err == nil {
		_, script, _ := cliRun(t, nil, "completion", "bash")
		file := filepath.Join(t.TempDir(), "c.bash")
		os.WriteFile(file, []byte(script), 0o644)
		for line, want := range map[string]string{
			"cronactor ta":               "task",
			"cronactor task cr":          "create",
			"cronactor task create --in": "--interval",
			"cronactor serve --print":    "--print-config",
			"cronactor bench sch":        "scheduler",
		} {
			words := strings.Fields(line)
			prog := fmt.Sprintf(`source %q; COMP_WORDS=(%s); COMP_CWORD=%d; _cronactor; echo "${COMPREPLY[*]}"`, file, line, len(words)-1)
			b, err := exec.Command("bash", "-c", prog).CombinedOutput()
			if err != nil || strings.TrimSpace(string(b)) != want {
				t.Errorf("bash completion of %q: %q %v, want %q", line, b, err, want)
			}
		}
	}
}

// TestFishCompletes: fish (when installed) completes from the script.
func TestFishCompletes(t *testing.T) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish not installed")
	}
	_, script, _ := cliRun(t, nil, "completion", "fish")
	file := filepath.Join(t.TempDir(), "c.fish")
	os.WriteFile(file, []byte(script), 0o644)
	for line, want := range map[string]string{
		"cronactor ta":               "task",
		"cronactor task cr":          "create",
		"cronactor task create --in": "--interval",
		"cronactor bench sch":        "scheduler",
	} {
		b, err := exec.Command("fish", "-c", fmt.Sprintf("source %s; complete -C %q", file, line)).CombinedOutput()
		got := strings.SplitN(strings.TrimSpace(string(b)), "\t", 2)[0]
		if err != nil || got != want {
			t.Errorf("fish completion of %q: %q %v, want %q", line, b, err, want)
		}
	}
}

// fakeDaemon answers the API paths the clients use and remembers each
// request's path and bearer token.
type fakeDaemon struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // "METHOD PATH token"
}

func newFakeDaemon(t *testing.T, tasks []crontasks.Task, recs []events.Recorded) *fakeDaemon {
	f := &fakeDaemon{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.seen = append(f.seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/v1/tasks" && r.Method == http.MethodGet:
			json.NewEncoder(w).Encode(crontasks.Page{Tasks: tasks})
		case strings.HasSuffix(r.URL.Path, "/events"):
			list, err := history.ListJSON(tasks[0].ID, recs)
			if err != nil {
				t.Error(err)
			}
			json.NewEncoder(w).Encode(list)
		case strings.HasSuffix(r.URL.Path, "/trigger"):
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprint(w, `{"task_id":"0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa","run_id":"5a0f0000-0000-4000-8000-00000000005a"}`)
		case strings.HasSuffix(r.URL.Path, "/upcoming") && tasks[0].Status == "active":
			fmt.Fprint(w, `{"slots":[]}`)
		case strings.HasSuffix(r.URL.Path, "/upcoming"): // the slots once resumed
			fmt.Fprint(w, `{"slots":["2026-11-22T12:01:00Z"]}`)
		case strings.HasPrefix(r.URL.Path, "/v1/owners/"):
			fmt.Fprint(w, `{"owner":"demo","deleted":1}`)
		case r.URL.Path == "/metrics":
			fmt.Fprint(w, "# HELP x\ncronactor_projection_position 41\ncronactor_log_head_position 42\ncronactor_projection_lag_events 1\n")
		default:
			json.NewEncoder(w).Encode(tasks[0])
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeDaemon) last() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.seen) == 0 {
		return ""
	}
	return f.seen[len(f.seen)-1]
}

func sampleTasks(now time.Time) []crontasks.Task {
	next, last := now.Add(30*time.Second), now.Add(-2*time.Minute)
	return []crontasks.Task{
		{ID: uuid.MustParse("0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa"), Name: "inbox", Owner: "channel/pop3/42", Kind: "noop",
			Interval: events.Duration(time.Minute), Status: "active", NextRun: &next, LastRun: &last, RunCount: 3, CompletedCount: 2,
			CreatedAt: now.Add(-3 * time.Hour)},
		{ID: uuid.MustParse("1f6c1d2e-9a3b-4c5d-8e7f-1021324354aa"), Name: "gone", Owner: "demo", Kind: "noop",
			Interval: events.Duration(time.Hour), Status: "deleted", CreatedAt: now.Add(-50 * time.Hour)},
		{ID: uuid.MustParse("2f6c1d2e-9a3b-4c5d-8e7f-1021324354aa"), Name: "evil\nname\x1b[31m", Owner: "o\twner\u202e", Kind: "noop",
			Interval: events.Duration(time.Minute), Status: "paused", CreatedAt: now.Add(-time.Minute)},
	}
}

func sampleEvents(t *testing.T, id uuid.UUID) []events.Recorded {
	at := time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC)
	p, err := events.Propose(events.TaskCreated{TaskID: id, Name: "inbox", Owner: "channel/pop3/42", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(30 * time.Second), NextRun: at.Add(time.Minute)}, uuid.Nil, at)
	if err != nil {
		t.Fatal(err)
	}
	return []events.Recorded{{Metadata: events.Metadata{ID: p.ID, Stream: events.TaskStream(id), Version: 0,
		Position: events.Position{Commit: 1, Prepare: 1}, At: p.At}, Type: p.Type, Schema: p.Schema, Data: p.Data}}
}

// TestClientsHonourServerAndToken: every command that talks to the daemon
// takes --server/--token and, without them, CRONACTOR_SERVER and
// CRONACTOR_TOKEN (explain used to ignore both).
func TestClientsHonourServerAndToken(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	tasks := sampleTasks(now)
	d := newFakeDaemon(t, tasks, sampleEvents(t, tasks[0].ID))
	id := tasks[0].ID.String()
	calls := map[string][]string{
		"GET /v1/tasks":                     {"task", "list"},
		"GET /v1/tasks/" + id:               {"task", "get", id},
		"POST /v1/tasks":                    {"task", "create", "--name", "n", "--owner", "o", "--kind", "noop", "--interval", "1m"},
		"PATCH /v1/tasks/" + id:             {"task", "update", id, "--priority", "2"},
		"POST /v1/tasks/" + id + "/pause":   {"task", "pause", id},
		"POST /v1/tasks/" + id + "/resume":  {"task", "resume", id},
		"POST /v1/tasks/" + id + "/trigger": {"task", "trigger", id},
		"DELETE /v1/tasks/" + id:            {"task", "delete", id},
		"DELETE /v1/owners/demo/tasks":      {"owner", "delete", "demo"},
		"GET /v1/tasks/" + id + "/events":   {"history", id},
		"GET /v1/tasks/" + id + "/events ":  {"explain", id, "--at", "2026-11-22T02:00:30Z"},
		"GET /metrics":                      {"projections", "status"},
	}
	var names []string
	for k := range calls {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, want := range names {
		args := calls[want]
		want = strings.TrimSpace(want)
		// From the environment.
		var code int
		var errOut string
		if args[0] == "projections" {
			// projections status reads the data directory unless --server is given.
			code, _, errOut = cliRun(t, map[string]string{"CRONACTOR_TOKEN": "env-secret"}, append(args, "--server", d.URL)...)
		} else {
			code, _, errOut = cliRun(t, map[string]string{"CRONACTOR_SERVER": d.URL, "CRONACTOR_TOKEN": "env-secret"}, args...)
		}
		if code != 0 || d.last() != want+" Bearer env-secret" {
			t.Errorf("%q with CRONACTOR_*: exit %d %s; daemon saw %q, want %q with the env token", args, code, errOut, d.last(), want)
		}
		// Flags win over the environment.
		code, _, errOut = cliRun(t, map[string]string{"CRONACTOR_SERVER": "http://127.0.0.1:1", "CRONACTOR_TOKEN": "env-secret"},
			append(args, "--server", d.URL, "--token", "flag-secret")...)
		if code != 0 || d.last() != want+" Bearer flag-secret" {
			t.Errorf("%q with flags: exit %d %s; daemon saw %q", args, code, errOut, d.last())
		}
	}
	// The token is never shown as a default in help.
	_, out, _ := cliRun(t, map[string]string{"CRONACTOR_TOKEN": "env-secret"}, "explain", "--help")
	if strings.Contains(out, "env-secret") {
		t.Errorf("help shows the token:\n%s", out)
	}
	// projections status over the API prints the daemon's figures.
	_, out, _ = cliRun(t, nil, "projections", "status", "--server", d.URL)
	if !strings.Contains(out, "at position 41; log head 42; 1 events behind") {
		t.Errorf("projections status --server: %q", out)
	}
}

// TestTaskList: deleted tasks only with --all; table, wide and json
// outputs; control characters escaped.
func TestTaskList(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	d := newFakeDaemon(t, sampleTasks(now), nil)
	env := map[string]string{"CRONACTOR_SERVER": d.URL}

	code, out, errOut := cliRun(t, env, "task", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 3 || strings.Contains(out, "gone") {
		t.Fatalf("task list shows deleted tasks or broke a row:\n%s", out)
	}
	if !strings.HasPrefix(lines[0], "ID ") || !strings.Contains(lines[0], "NAME") || !strings.Contains(lines[0], "SCHEDULE") ||
		!strings.Contains(lines[0], "NEXT RUN") || !strings.Contains(lines[0], "AGE") {
		t.Errorf("header %q", lines[0])
	}
	for _, want := range []string{"inbox", "channel/pop3/42", "every 1m", "active", "in 30s", "2m ago", "3h"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("row %q lacks %q", lines[1], want)
		}
	}
	if !strings.Contains(lines[2], `evil\nname\x1b[31m`) || !strings.Contains(lines[2], `o\twner\u202e`) || strings.ContainsAny(out, "\x1b\t\u202e") {
		t.Errorf("control characters not escaped: %q", lines[2])
	}

	_, out, _ = cliRun(t, env, "task", "list", "--all")
	if !strings.Contains(out, "gone") || !strings.Contains(out, "deleted") {
		t.Errorf("--all hides deleted tasks:\n%s", out)
	}
	_, out, _ = cliRun(t, env, "task", "list", "-o", "wide")
	header := strings.SplitN(out, "\n", 2)[0]
	for _, col := range []string{"KIND", "QUEUE", "TOLERANCE", "TIMEBOX", "PRIORITY", "RUN STATE", "RUNS", "DONE", "DROPPED", "FORCED", "FAILED", "RETRIES", "MISSED"} {
		if !strings.Contains(header, col) {
			t.Errorf("-o wide header %q lacks %s", header, col)
		}
	}
	if !strings.Contains(out, "2026-11-22T12:00:30Z") {
		t.Errorf("-o wide shows no absolute times:\n%s", out)
	}
	for _, args := range [][]string{{"task", "list", "-o", "json"}, {"task", "list", "--output", "json"}, {"task", "list", "--json"}} {
		_, out, _ = cliRun(t, env, args...)
		var page crontasks.Page
		if err := json.Unmarshal([]byte(out), &page); err != nil || len(page.Tasks) != 3 {
			t.Errorf("%q: %v: %s", args, err, out)
		}
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 45 * time.Second: "45s", 119 * time.Second: "119s", 5*time.Minute + 30*time.Second: "5m30s",
		10 * time.Minute: "10m", 3*time.Hour + 10*time.Minute: "3h10m", 30 * time.Hour: "30h", 72 * time.Hour: "3d", 800 * 24 * time.Hour: "2y",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%s) = %s, want %s", d, got, want)
		}
	}
}

func TestEscapeControl(t *testing.T) {
	for in, want := range map[string]string{
		"plain/ünïcode": "plain/ünïcode", "a\nb": `a\nb`, "\x1b[2J": `\x1b[2J`, "tab\there": `tab\there`,
		"bad\xffutf8": `bad\xffutf8`, "rtl\u202eoverride": `rtl\u202eoverride`, "del\x7f": `del\x7f`,
	} {
		if got := escapeControl(in); got != want {
			t.Errorf("escapeControl(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWideShowsLastOutcome: -o wide says how the latest run that ended,
// ended, with its run and time: a task whose runs were a manual trigger
// and its retries has no LAST RUN (they move no lastRun), and the row must
// not read as if nothing ran. Durations read as the schedule's do (1h, not
// 1h0m0s).
func TestWideShowsLastOutcome(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	next, ended := now.Add(time.Minute), now.Add(-7*time.Second)
	tasks := []crontasks.Task{{ID: uuid.MustParse("0f6c1d2e-9a3b-4c5d-8e7f-1021324354aa"), Name: "sync", Owner: "o", Kind: "http",
		Interval: events.Duration(2 * time.Hour), Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(time.Hour),
		Status: "active", NextRun: &next, RunCount: 3, FailedCount: 3, RetryCount: 2, CreatedAt: now.Add(-time.Minute),
		LastOutcome: &crontasks.Outcome{Run: 3, Attempt: 3, Outcome: "failed", At: ended}}}
	env := map[string]string{"CRONACTOR_SERVER": newFakeDaemon(t, tasks, nil).URL}
	code, out, errOut := cliRun(t, env, "task", "list", "-o", "wide")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "LAST OUTCOME") {
		t.Fatalf("no LAST OUTCOME column:\n%s", out)
	}
	for _, want := range []string{"failed #3 (attempt 3) 2026-11-22T11:59:53Z", " 1h ", " 5s "} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("row %q lacks %q", lines[1], want)
		}
	}
	if strings.Contains(lines[1], "1h0m0s") {
		t.Errorf("row %q says a duration in Go's long form", lines[1])
	}
}

// TestUpcomingSaysWhyNone: a task with no slots left (deleted, paused,
// finished, or a schedule that ended) prints why, not nothing and not the
// slots a paused task would have once resumed (the dashboard shows none);
// -o json stays the server's answer.
func TestUpcomingSaysWhyNone(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	for status, want := range map[string]string{
		"deleted": "no upcoming slots: the task is deleted",
		"paused":  "no upcoming slots: the task is paused (task resume",
		"active":  "no upcoming slots: its schedule has none left",
	} {
		tasks := sampleTasks(now)
		tasks[0].Status = status
		env := map[string]string{"CRONACTOR_SERVER": newFakeDaemon(t, tasks, nil).URL}
		code, out, errOut := cliRun(t, env, "task", "upcoming", someID)
		if code != 0 || !strings.HasPrefix(out, want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", status, code, out, errOut, want)
		}
		if strings.Contains(out, "2026-11-22T12:01:00Z") {
			t.Errorf("%s: listed slots: %q", status, out)
		}
		if _, out, _ = cliRun(t, env, "task", "upcoming", someID, "-o", "json"); !strings.HasPrefix(out, `{"slots":[`) {
			t.Errorf("%s: -o json printed %q", status, out)
		}
	}
}
