package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cliEnv{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	err := dispatch(context.Background(), env, args)
	return out.String(), errb.String(), err
}

// `cronactor simulate` on the worked example (docs/lifecycle.md) prints its
// table, and its JSON lines with --format json (flags before or after the
// scenario).
func TestSimulateCommand(t *testing.T) {
	scenario := "../../actors/simulation/testdata/worked_example.yaml"
	for _, c := range []struct {
		args   []string
		golden string
	}{
		{[]string{"simulate", scenario}, "worked_example.table.golden"},
		{[]string{"simulate", "--format", "table", scenario}, "worked_example.table.golden"},
		{[]string{"simulate", scenario, "--format", "json"}, "worked_example.json.golden"},
	} {
		out, _, err := runCLI(t, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		want, err := os.ReadFile(filepath.Join("../../actors/simulation/testdata", c.golden))
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("%v printed:\n%s\nwant:\n%s", c.args, out, want)
		}
	}
}

func TestSimulateCommandErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("tick: 30s\nuntil: \"03:00\"\ntasks:\n  - name: A\n    interval: 1x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"simulate"}, true, "SCENARIO"},
		{[]string{"simulate", bad, "--format", "csv"}, true, "--format"},
		{[]string{"simulate", bad, "extra"}, true, "unexpected argument"},
		{[]string{"simulate", filepath.Join(dir, "missing.yaml")}, false, "no such file"},
		{[]string{"simulate", bad}, false, "line 5: tasks[0].interval: bad duration"},
	} {
		_, _, err := runCLI(t, c.args...)
		if err == nil {
			t.Fatalf("%v: no error", c.args)
		}
		if errors.Is(err, errUsage) != c.usage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v (usage %v), want %q (usage %v)", c.args, err, errors.Is(err, errUsage), c.want, c.usage)
		}
	}
}

// A scenario of several tasks prints a Task column, the rows' own text
// unchanged ("Cron enqueues A1"); --hide-idle leaves out exactly the ticks
// that found nothing to do, in both formats, and keeps the ticks that
// decided something (R18: a task at its bound of waiting runs).
func TestSimulateSeveralTasks(t *testing.T) {
	scenario := "../../actors/simulation/testdata/r18_backlog.yaml"
	code, table, errOut := cliRun(t, nil, "simulate", scenario)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"| MM:SS | Task | Event | nextRun | lastRun |\n|---|---|---|---|---|\n",
		"| 00:00 | A | Initial state | 00:30 | - |\n| 00:00 | B | Initial state | 00:30 | - |\n",
		"| 00:30 | A | Cron enqueues A1 | 01:00 | - |\n",
		"| 01:00 | B | Cron executes | 01:30 | - |\n",
		"| 02:00 | A | Cron executes (3 runs of A waiting: none enqueued) | 02:00 | - |\n",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	_, hidden, _ := cliRun(t, nil, "simulate", "--hide-idle", scenario)
	var kept []string
	idle := 0
	for _, l := range strings.SplitAfter(table, "\n") {
		if strings.Contains(l, "| Cron executes |") {
			idle++
			continue
		}
		kept = append(kept, l)
	}
	if idle == 0 || hidden != strings.Join(kept, "") {
		t.Errorf("--hide-idle (%d idle rows) printed:\n%s\nwant:\n%s", idle, hidden, strings.Join(kept, ""))
	}
	_, lines, _ := cliRun(t, nil, "simulate", scenario, "--format", "json")
	_, hiddenLines, _ := cliRun(t, nil, "simulate", scenario, "--format", "json", "--hide-idle")
	if n, m := strings.Count(lines, "\n"), strings.Count(hiddenLines, "\n"); n-m != idle {
		t.Errorf("--hide-idle left out %d JSON lines, want %d:\n%s", n-m, idle, hiddenLines)
	}
	if !strings.Contains(hiddenLines, `"event":"Tick"`) || strings.Contains(hiddenLines, `{"at":"01:00","task":"B","event":"Tick"`) {
		t.Errorf("--hide-idle JSON keeps an idle tick or drops a deciding one:\n%s", hiddenLines)
	}
	// One task: exactly the worked example's table, no Task column.
	_, one, _ := cliRun(t, nil, "simulate", "../../actors/simulation/testdata/worked_example.yaml")
	if !strings.HasPrefix(one, "| MM:SS | Event | nextRun | lastRun |\n") {
		t.Errorf("one task's table:\n%s", one)
	}
}

// A bad or misspelt --hide-idle is a usage error: exit 2, one line naming
// the flag, nothing on stdout.
func TestSimulateBadFlagExitsTwo(t *testing.T) {
	scenario := "../../actors/simulation/testdata/worked_example.yaml"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "--hide-idle=maybe", scenario}, `--hide-idle: want true or false, got "maybe"`},
		{[]string{"simulate", scenario, "--hide-idel"}, "unknown flag --hide-idel"},
		{[]string{"simulate", scenario, "--format", "markdown", "--hide-idle"}, "--format"},
	} {
		code, out, errOut := cliRun(t, nil, c.args...)
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		if code != 2 || out != "" || len(lines) != 2 || !strings.Contains(lines[0], c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %q", c.args, code, out, errOut, c.want)
		}
	}
}
