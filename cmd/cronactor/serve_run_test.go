package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/crontasks"
)

func TestServeConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	os.WriteFile(file, []byte("# settings\ntick: 5s\nworkers: 3\ndata: /from/file\nlog_format: json\nallow_exec: true\n"), 0o644)
	env := map[string]string{"CRONACTOR_TICK": "4s", "CRONACTOR_DATA": "/from/env", "CRONACTOR_CONFIG": file}
	c, err := parseServeFlags(envOf(env), []string{"--tick", "3s"})
	if err != nil {
		t.Fatal(err)
	}
	// flag > env > file > default, setting by setting.
	if c.tick != 3*time.Second || c.data != "/from/env" || c.workers != 3 || c.logFormat != "json" || !c.allowExec || c.listen != "127.0.0.1:7070" || c.drainTimeout != 30*time.Second {
		t.Errorf("got %+v", c)
	}
	for flag, want := range map[string]string{"tick": "flag --tick", "data": "env CRONACTOR_DATA", "workers": "file", "listen": "default"} {
		if c.source[flag] != want {
			t.Errorf("source of %s = %q, want %q", flag, c.source[flag], want)
		}
	}
	// --config wins over CRONACTOR_CONFIG.
	other := filepath.Join(dir, "other.yaml")
	os.WriteFile(other, []byte("workers: 9\n"), 0o644)
	if c, err := parseServeFlags(envOf(env), []string{"--config", other}); err != nil || c.workers != 9 || c.tick != 4*time.Second {
		t.Errorf("--config over CRONACTOR_CONFIG: %+v %v", c, err)
	}

	// --print-config prints a file --config reads back to the same settings.
	code, out, errOut := cliRun(t, env, "serve", "--tick", "3s", "--token", "s3cret", "--print-config")
	if code != 0 || errOut != "" {
		t.Fatalf("--print-config: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"tick: 3s # flag --tick", "data: /from/env # env CRONACTOR_DATA", "workers: 3 # file", "listen: 127.0.0.1:7070 # default", "allow_exec: true # file"} {
		if !strings.Contains(out, want) {
			t.Errorf("--print-config lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") {
		t.Errorf("--print-config shows the token:\n%s", out)
	}
	printed := filepath.Join(dir, "printed.yaml")
	os.WriteFile(printed, []byte(strings.Replace(out, "(set, not shown)", "s3cret", 1)), 0o644)
	again, err := parseServeFlags(envOf(nil), []string{"--config", printed})
	if err != nil || again.tick != c.tick || again.data != c.data || again.workers != c.workers || again.token != "s3cret" || again.logFormat != "json" {
		t.Errorf("printed config read back: %+v %v", again, err)
	}

	for text, want := range map[string]string{
		"tick: 1s\nticks: 2s\n": `line 2: unknown setting "ticks"`,
		"tick: soon\n":          "line 1: tick: want a duration",
		"workers: [1, 2]\n":     "line 1: workers: want a single value",
		"- tick\n":              "want a mapping",
		"tick: 1s\ntick: 2s\n":  "tick given twice",
		"insecure: maybe\n":     "insecure: want true or false",
	} {
		os.WriteFile(file, []byte(text), 0o644)
		_, err := parseServeFlags(envOf(nil), []string{"--config", file})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want a usage error with %q", text, err, want)
		}
	}
	if _, err := parseServeFlags(envOf(nil), []string{"--config", filepath.Join(dir, "missing.yaml")}); !errors.Is(err, errUsage) {
		t.Errorf("missing config file: %v", err)
	}

	// --accept-data-loss is a flag only: never from the environment or the file.
	if c, err := parseServeFlags(envOf(map[string]string{"CRONACTOR_ACCEPT_DATA_LOSS": "true"}), nil); err != nil || c.acceptDataLoss {
		t.Errorf("CRONACTOR_ACCEPT_DATA_LOSS turned it on: %+v %v", c, err)
	}
	os.WriteFile(file, []byte("accept_data_loss: true\n"), 0o644)
	if _, err := parseServeFlags(envOf(nil), []string{"--config", file}); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "unknown setting") {
		t.Errorf("accept_data_loss in the file: %v", err)
	}
	if c, err := parseServeFlags(envOf(nil), []string{"--accept-data-loss"}); err != nil || !c.acceptDataLoss {
		t.Errorf("--accept-data-loss: %+v %v", c, err)
	}
}

// lineWriter collects a log and signals when a line containing want is
// written.
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.want != "" && bytes.Contains(p, []byte(w.want)) {
		w.once.Do(func() { close(w.seen) })
	}
	return w.buf.Write(p)
}

func (w *lineWriter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.buf.String() }

// startServe runs serve in-process until the returned stop is called.
func startServe(t *testing.T, logs *lineWriter, args ...string) (url string, stop func() error) {
	t.Helper()
	return startServeWith(t, &cliEnv{stdout: logs, stderr: logs, getenv: func(string) string { return "" }}, args...)
}

func startServeWith(t *testing.T, env *cliEnv, args ...string) (url string, stop func() error) {
	t.Helper()
	logs := env.stderr.(*lineWriter)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	env.ready = func(a net.Addr) { ready <- a }
	done := make(chan error, 1)
	go func() { done <- dispatch(ctx, env, append([]string{"serve"}, args...)) }()
	select {
	case a := <-ready:
		return "http://" + a.String(), func() error { cancel(); return <-done }
	case err := <-done:
		cancel()
		t.Fatalf("serve ended before serving: %v\n%s", err, logs.String())
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatalf("serve did not start\n%s", logs.String())
	}
	return "", nil
}

var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// TestServeLogsOneFormat: with --log-format json every line the daemon
// writes is a JSON object with snake_case keys, each key always of one
// type (the tick was a number in one line and a string in another); each
// start-up phase has a line with its duration; a failing run is a WARN
// line with task_id, run_id, attempt and error.
func TestServeLogsOneFormat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon in-process")
	}
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "mailbox unavailable", http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	logs := &lineWriter{want: `"msg":"run failed"`, seen: make(chan struct{})}
	url, stop := startServe(t, logs, "--data", filepath.Join(t.TempDir(), "data"), "--listen", "127.0.0.1:0", "--tick", "20ms", "--log-format", "json")
	body := `{"name":"poll","owner":"demo","kind":"http","interval":"1s","payload":{"url":"` + failing.URL + `"}}`
	resp, err := http.Post(url+"/v1/tasks", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %s", resp.Status)
	}
	select {
	case <-logs.seen:
	case <-time.After(30 * time.Second):
		t.Fatalf("no run failure logged\n%s", logs.String())
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	types := map[string]string{}
	phases := map[string]bool{}
	var failed map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Errorf("not a JSON line: %q", sc.Text())
			continue
		}
		for k, v := range line {
			if !snakeKey.MatchString(k) {
				t.Errorf("key %q is not snake_case: %s", k, sc.Text())
			}
			typ := "null"
			switch v.(type) {
			case string:
				typ = "string"
			case float64:
				typ = "number"
			case bool:
				typ = "bool"
			case map[string]any, []any:
				typ = "object"
			}
			if prev, ok := types[k]; ok && prev != typ {
				t.Errorf("key %q is a %s here and a %s elsewhere: %s", k, typ, prev, sc.Text())
			}
			types[k] = typ
		}
		if line["msg"] == "start-up phase done" {
			phases[line["phase"].(string)] = true
			// "tasks" is the scheduler started line's count of every task
			// in the log, deleted ones included; the phase counts those in
			// memory (actors and resting records), under a key that says so.
			if _, ok := line["tasks"]; ok && line["phase"] == "recover_tasks" {
				t.Errorf("recover_tasks says \"tasks\", which the next line uses for every task in the log: %s", sc.Text())
			}
			if _, ok := line["tasks_in_memory"]; !ok && line["phase"] == "recover_tasks" {
				t.Errorf("recover_tasks lacks tasks_in_memory: %s", sc.Text())
			}
			if d, _ := line["duration"].(string); d == "" {
				t.Errorf("phase without a duration: %s", sc.Text())
			} else if _, err := time.ParseDuration(d); err != nil {
				t.Errorf("phase duration %q: %v", d, err)
			}
		}
		if line["msg"] == "run failed" && failed == nil {
			failed = line
		}
	}
	for _, p := range []string{"listen", "open_store", "open_view", "catch_up_view", "recover_tasks"} {
		if !phases[p] {
			t.Errorf("no start-up line for phase %s\n%s", p, logs.String())
		}
	}
	if failed["level"] != "WARN" || failed["task_id"] == nil || failed["run_id"] == nil || failed["attempt"] != float64(1) ||
		!strings.Contains(failed["error"].(string), "503") {
		t.Errorf("run failure line: %v", failed)
	}
	if types["tick"] != "string" {
		t.Errorf("tick logged as %s", types["tick"])
	}
}

// TestServeTextLogs: the text format is one key=value line per record
// too, with nothing printed beside the logger.
func TestServeTextLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon in-process")
	}
	logs := &lineWriter{}
	_, stop := startServe(t, logs, "--data", filepath.Join(t.TempDir(), "data"), "--listen", "127.0.0.1:0")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if !strings.HasPrefix(l, "time=") || !strings.Contains(l, " level=") {
			t.Errorf("not a text log line: %q", l)
		}
	}
	if !strings.Contains(logs.String(), "tick=1s") {
		t.Errorf("no tick=1s in\n%s", logs.String())
	}
}

// TestServeBusyPortFailsFirst: a port in use fails serve before it opens
// anything: no view directory, no decision recorded, although the data
// directory holds a waiting run a started scheduler would take at once.
func TestServeBusyPortFailsFirst(t *testing.T) {
	data := t.TempDir()
	writeTasks(t, data, 3) // each with a run waiting
	store, err := embedded.Open(data, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	head := store.Head()
	store.Close()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()

	logs := &lineWriter{}
	env := &cliEnv{stdout: logs, stderr: logs, getenv: func(string) string { return "" }}
	code := runMain(context.Background(), env, []string{"serve", "--data", data, "--listen", busy.Addr().String(), "--tick", "1ms", "--log-format", "json"})
	if code != 1 || !strings.Contains(logs.String(), "listen on "+busy.Addr().String()) {
		t.Fatalf("exit %d, log:\n%s", code, logs.String())
	}
	if _, err := os.Stat(crontasks.DirIn(data)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the view was opened before the port was bound: %v", err)
	}
	store, err = embedded.Open(data, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if got := store.Head(); got != head {
		t.Errorf("log head moved from %s to %s: decisions were recorded", head, got)
	}
	// The failure is logged once, as JSON like every other line.
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if !json.Valid([]byte(l)) {
			t.Errorf("not a JSON line: %q", l)
		}
	}
}

// TestProjectionsStatusWhileServing: the daemon holds the data directory;
// projections status asks it instead of failing on the lock.
func TestProjectionsStatusWhileServing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon in-process")
	}
	data := t.TempDir()
	writeTasks(t, data, 4)
	url, stop := startServe(t, &lineWriter{}, "--data", data, "--listen", "127.0.0.1:0")
	defer stop()
	code, out, errOut := cliRun(t, map[string]string{"CRONACTOR_SERVER": url}, "projections", "status", "--data", data)
	if code != 0 || !strings.Contains(out, "view of the daemon at "+url+" at position ") || !strings.Contains(out, "events behind") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "in use by the daemon") {
		t.Errorf("stderr %q does not say why it asked the daemon", errOut)
	}
	// rebuild must not run beside the daemon.
	code, _, errOut = cliRun(t, nil, "projections", "rebuild", "--data", data)
	if code != 1 || !strings.Contains(errOut, "stop it before rebuilding") {
		t.Errorf("rebuild beside the daemon: exit %d: %s", code, errOut)
	}
}

// TestServeRecoveryProgress: on a terminal, recovering the tasks shows a
// progress line, erased before the daemon serves; elsewhere nothing.
func TestServeRecoveryProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the daemon in-process")
	}
	data := t.TempDir()
	writeTasks(t, data, 5)
	var prog bytes.Buffer
	logs := &lineWriter{}
	env := &cliEnv{stdout: logs, stderr: logs, getenv: func(string) string { return "" },
		progress: &progressLine{w: &prog, every: time.Nanosecond}}
	_, stop := startServeWith(t, env, "--data", data, "--listen", "127.0.0.1:0")
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if p := prog.String(); !strings.Contains(p, "recovering tasks: 10/10 events read") || !strings.HasSuffix(p, "\r\033[K") {
		t.Errorf("progress %q", p)
	}
	if strings.Contains(logs.String(), "recovering") {
		t.Errorf("progress went into the log:\n%s", logs.String())
	}
	// The restart's three task counts are said in words.
	if !strings.Contains(logs.String(), "scheduler started (tasks: every task in the log; actors: those with a run open") {
		t.Errorf("the start line does not say what its counts are:\n%s", logs.String())
	}
}
