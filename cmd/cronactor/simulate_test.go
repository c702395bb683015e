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
