package main

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --queue NAME=N is repeatable; CRONACTOR_QUEUE and the file's queue key
// (a list, a mapping or one comma-separated value) take the same; flags
// replace the environment's, which replace the file's.
func TestServeQueues(t *testing.T) {
	c, err := parseServeFlags(envOf(nil), []string{"--queue", "reports=2", "--queue", "mail=8"})
	if err != nil || !maps.Equal(c.queues, map[string]int{"reports": 2, "mail": 8}) {
		t.Fatalf("two flags: %v %v", c.queues, err)
	}
	c, err = parseServeFlags(envOf(nil), nil)
	if err != nil || len(c.queues) != 0 {
		t.Fatalf("none: %v %v", c.queues, err)
	}
	c, err = parseServeFlags(envOf(map[string]string{"CRONACTOR_QUEUE": "a=1, b=2"}), nil)
	if err != nil || !maps.Equal(c.queues, map[string]int{"a": 1, "b": 2}) {
		t.Fatalf("env: %v %v", c.queues, err)
	}
	c, err = parseServeFlags(envOf(map[string]string{"CRONACTOR_QUEUE": "a=1"}), []string{"--queue", "b=3"})
	if err != nil || !maps.Equal(c.queues, map[string]int{"b": 3}) {
		t.Fatalf("flag over env: %v %v", c.queues, err)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	for text, want := range map[string]map[string]int{
		"queue: [reports=2, mail=8]\n":        {"reports": 2, "mail": 8},
		"queue:\n  - reports=2\n  - mail=8\n": {"reports": 2, "mail": 8},
		"queue: {reports: 2, mail: 8}\n":      {"reports": 2, "mail": 8},
		"queue: reports=2,mail=8\n":           {"reports": 2, "mail": 8},
		"queue: \"\"\n":                       nil,
	} {
		os.WriteFile(file, []byte(text), 0o644)
		c, err := parseServeFlags(envOf(nil), []string{"--config", file})
		if err != nil || !maps.Equal(c.queues, want) {
			t.Errorf("file %q: %v %v, want %v", text, c.queues, err, want)
		}
	}

	// Printed settings read back.
	code, out, errOut := cliRun(t, nil, "serve", "--queue", "reports=2", "--queue", "mail=8", "--print-config")
	if code != 0 || !strings.Contains(out, "queue: mail=8,reports=2 # flag --queue") {
		t.Fatalf("--print-config: %d %s %s", code, out, errOut)
	}
	os.WriteFile(file, []byte(out), 0o644)
	if c, err := parseServeFlags(envOf(nil), []string{"--config", file}); err != nil || !maps.Equal(c.queues, map[string]int{"reports": 2, "mail": 8}) {
		t.Errorf("printed config read back: %v %v", c.queues, err)
	}
}

func TestServeQueuesRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--queue", "reports"}, `--queue: want NAME=N (e.g. reports=2), got "reports"`},
		{[]string{"--queue", "reports=0"}, "--queue: reports: the limit must be between 1 and 100000, got 0"},
		{[]string{"--queue", "reports=-2"}, "got -2"},
		{[]string{"--queue", "reports=100001"}, "got 100001"},
		{[]string{"--queue", "reports=two"}, `reports: want a whole number of runs executing at once, got "two"`},
		{[]string{"--queue", "=2"}, "--queue: a queue name must not be empty"},
		{[]string{"--queue", "my queue=2"}, `--queue: queue name "my queue" may hold only letters`},
		{[]string{"--queue", "a=1", "--queue", "a=2"}, "queue a given twice"},
		{[]string{"--queue", "a=1,"}, `want NAME=N (e.g. reports=2), got ""`},
	} {
		_, err := parseServeFlags(envOf(nil), tc.args)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
	if _, err := parseServeFlags(envOf(map[string]string{"CRONACTOR_QUEUE": "a=0"}), nil); !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "CRONACTOR_QUEUE") {
		t.Errorf("env: err = %v", err)
	}
	file := filepath.Join(t.TempDir(), "c.yaml")
	for text, want := range map[string]string{
		"queue: [reports]\n":           "line 1: queue: want NAME=N",
		"queue: [[a=1]]\n":             "line 1: queue: line 1: want NAME=N items",
		"queue: {a: [1]}\n":            "want NAME: N entries",
		"queue: {a: 0}\n":              "a: the limit must be between 1 and 100000, got 0",
		"queue: [a=1]\nqueue: [b=1]\n": "queue given twice",
	} {
		os.WriteFile(file, []byte(text), 0o644)
		_, err := parseServeFlags(envOf(nil), []string{"--config", file})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), want) {
			t.Errorf("file %q: err = %v, want a usage error with %q", text, err, want)
		}
	}
	// A usage error exits 2, with the message on stderr.
	if code, _, errOut := cliRun(t, nil, "serve", "--queue", "mail=0"); code != 2 || !strings.Contains(errOut, "--queue") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
