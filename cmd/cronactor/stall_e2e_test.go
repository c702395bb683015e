package main_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// TestDaemonStallIsOneRunWithTheMissedCount freezes a real daemon (SIGSTOP,
// as a paused VM or a cgroup freeze would) for 5 s under a 1 s tick and a
// 1 s task, then lets it go on (SIGCONT). The stall must read as R8 reads a
// downtime: one RunEnqueued carrying the intervals missed, decided at the
// instant the daemon runs again — no run decided at a stale pre-stall
// instant (its next_run already behind), no catch-up dropped too_soon.
func TestDaemonStallIsOneRunWithTheMissedCount(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test builds and runs the daemon")
	}
	bin := buildBinary(t)
	d := startDaemonWith(t, bin, filepath.Join(t.TempDir(), "data"), freeAddr(t), "--tick", "1s")
	var task crontasks.Task
	if code := d.call("POST", "/v1/tasks", map[string]any{"name": "beat", "owner": "stall", "kind": "noop", "interval": "1s"}, &task); code != 201 {
		t.Fatalf("create task: %d", code)
	}
	id := task.ID.String()
	waitFor(t, 30*time.Second, "two runs before the stall", func() bool { return d.task(id).CompletedCount >= 2 })

	if err := d.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second) // the stall itself, not a wait for something
	resumed := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// decidedAfter is the task's events decided after the daemon was let
	// go on (it decides nothing while frozen, and everything it decided
	// before, it decided 5 s before that).
	decidedAfter := func() []events.Recorded {
		var out []events.Recorded
		for _, r := range d.events(id) {
			if r.At.After(resumed) {
				out = append(out, r)
			}
		}
		return out
	}
	enqueued := func(recs []events.Recorded) int {
		n := 0
		for _, r := range recs {
			if r.Type == "RunEnqueued" {
				n++
			}
		}
		return n
	}
	// Three enqueues after the stall: the first tick's and two more, by
	// which time any catch-up of the stall would have been decided too.
	waitFor(t, 30*time.Second, "three enqueues after the stall", func() bool { return enqueued(decidedAfter()) >= 3 })

	var trail []string
	catchUps := 0
	for _, r := range decidedAfter() {
		e, err := events.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		switch e := e.(type) {
		case events.RunEnqueued:
			trail = append(trail, fmt.Sprintf("RunEnqueued %d missed=%d next_run=%s", e.Run, e.Missed, e.NextRun.Sub(resumed).Round(time.Millisecond)))
			if e.Missed >= 3 {
				catchUps++
			}
			if e.NextRun.Before(resumed) {
				t.Errorf("run %d was decided at a stale instant: its next_run %s is before the daemon ran again", e.Run, e.NextRun.Sub(resumed))
			}
		case events.RunDropped:
			trail = append(trail, fmt.Sprintf("RunDropped %d %s", e.Run, e.Reason))
			if e.Reason == events.DropTooSoon {
				t.Errorf("run %d was dropped too_soon after the stall", e.Run)
			}
		default:
			trail = append(trail, r.Type)
		}
	}
	if catchUps != 1 {
		t.Errorf("%d enqueues after the stall carry missed >= 3, want exactly 1", catchUps)
	}
	if t.Failed() {
		t.Logf("events decided after the stall (next_run from SIGCONT):\n%s", strings.Join(trail, "\n"))
	}
}
