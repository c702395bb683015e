package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// writeTasks appends n created tasks, each with one enqueued run, to the
// embedded store in dir.
func writeTasks(t *testing.T, dir string, n int) {
	t.Helper()
	store, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "cli/%d", i))
		c, _ := events.Propose(events.TaskCreated{TaskID: id, Name: fmt.Sprint("t", i), Owner: "cli/1", Kind: "noop",
			Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Timebox: events.Duration(30 * time.Second),
			NextRun: at.Add(time.Minute)}, uuid.Nil, at)
		e, _ := events.Propose(events.RunEnqueued{RunID: events.RunID(id, 1), Run: 1, Due: at, NextRun: at.Add(time.Minute)}, uuid.Nil, at)
		if _, err := store.Append(context.Background(), events.TaskStream(id), events.NoStream, c, e); err != nil {
			t.Fatal(err)
		}
	}
}

func TestProjectionsRebuildAndStatus(t *testing.T) {
	dir := t.TempDir()
	writeTasks(t, dir, 30)
	var out, errOut, prog bytes.Buffer
	env := &cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	// Not a terminal: no progress at all.
	if err := dispatch(context.Background(), env, []string{"projections", "rebuild", "--data", dir, "--batch", "7"}); err != nil {
		t.Fatal(err, errOut.String())
	}
	if !strings.Contains(out.String(), "up to position 60") || errOut.Len() != 0 {
		t.Errorf("rebuild printed %q / %q", out.String(), errOut.String())
	}
	// A terminal: one progress line, redrawn in place and erased at the end.
	out.Reset()
	env.progress = &progressLine{w: &prog, every: time.Nanosecond}
	if err := dispatch(context.Background(), env, []string{"projections", "rebuild", "--data", dir, "--batch", "7"}); err != nil {
		t.Fatal(err, errOut.String())
	}
	env.progress = nil
	if p := prog.String(); !strings.Contains(p, "\r\033[K") || !strings.Contains(p, "60/60 events") || !strings.HasSuffix(p, "\r\033[K") || strings.Contains(p, "\n") {
		t.Errorf("progress line %q", p)
	}
	out.Reset()
	if err := dispatch(context.Background(), env, []string{"projections", "status", "--data", dir}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "at position 60; log head 60; 0 events behind") {
		t.Errorf("status printed %q", out.String())
	}

	for _, args := range [][]string{{"projections"}, {"projections", "shrink", "--data", dir},
		{"projections", "rebuild", "--batch", "0", "--data", dir}, {"projections", "status", "extra"}} {
		if err := dispatch(context.Background(), env, args); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v", args, err)
		}
	}

	store, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	v, err := crontasks.Open(crontasks.Config{Store: store, Dir: crontasks.DirIn(dir)})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	p, err := v.ByOwner(context.Background(), "cli/1", 100, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tasks) != 30 || p.Tasks[0].RunCount != 1 {
		b, _ := json.Marshal(p)
		t.Errorf("rebuilt view: %s", b)
	}
}

// TestProjectionsStatusCreatesNothing: status on a directory that is not
// there, or holds no event log, fails (exit 1) saying so and leaves the
// file system as it was; on a log without a view it does not make one.
func TestProjectionsStatusCreatesNothing(t *testing.T) {
	root := t.TempDir()
	missing := filepath.Join(root, "typo")
	code, out, errOut := cliRun(t, nil, "projections", "status", "--data", missing)
	if code != 1 || out != "" || errOut != "cronactor: no data directory at "+missing+" (give the daemon's with --data, or ask it with --server)\n" {
		t.Errorf("missing dir: exit %d, %q %q", code, out, errOut)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("status created %s (%v)", missing, err)
	}
	empty := filepath.Join(root, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cliRun(t, nil, "projections", "status", "--data", empty)
	if code != 1 || !strings.Contains(errOut, "no event log in "+empty) {
		t.Errorf("empty dir: exit %d, %q", code, errOut)
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("status wrote %d entries into %s", len(ents), empty)
	}
	// The default directory, ./cronactor-data, is not made either.
	t.Chdir(root)
	if code, _, errOut = cliRun(t, nil, "projections", "status"); code != 1 || !strings.Contains(errOut, "no data directory at ./cronactor-data") {
		t.Errorf("default dir: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(root, "cronactor-data")); !os.IsNotExist(err) {
		t.Errorf("status created ./cronactor-data (%v)", err)
	}
	// A log with no view yet: said, not made.
	data := filepath.Join(root, "data")
	writeTasks(t, data, 2)
	code, out, errOut = cliRun(t, nil, "projections", "status", "--data", data)
	if code != 0 || !strings.Contains(out, "no view at "+crontasks.DirIn(data)+" yet") || !strings.Contains(out, "log head 4") {
		t.Errorf("no view: exit %d, %q %q", code, out, errOut)
	}
	if _, err := os.Stat(crontasks.DirIn(data)); !os.IsNotExist(err) {
		t.Errorf("status created the view (%v)", err)
	}
}
