package main_test

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events/postgres/pgtest"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// TestDaemonHistoryRetention: serve --history-retention 2s removes a 1 s
// task's old events behind a TaskCompacted, the row says when, and after
// kill -9 the daemon loads the task from what remains and it keeps running.
func TestDaemonHistoryRetention(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test builds and runs the daemon")
	}
	testHistoryRetention(t, buildBinary(t))
}

// The same on the Postgres store (events.Truncater deletes the rows), whose
// scheduler no longer says retention is off.
func TestDaemonHistoryRetentionOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test builds and runs the daemon")
	}
	testHistoryRetention(t, buildBinary(t), "--store", "postgres", "--postgres", pgtest.URL(t))
}

func testHistoryRetention(t *testing.T, bin string, store ...string) {
	data := filepath.Join(t.TempDir(), "data")
	addr := freeAddr(t)
	args := append([]string{"--tick", "100ms", "--history-retention", "2s"}, store...)
	d := startDaemonWith(t, bin, data, addr, args...)
	waitReady(t, d)
	var task crontasks.Task
	if code := d.call("POST", "/v1/tasks", map[string]any{"name": "tick", "owner": "demo", "kind": "noop", "interval": "1s"}, &task); code != 201 {
		t.Fatalf("create: %d", code)
	}
	id := task.ID.String()
	waitFor(t, 30*time.Second, "the first events removed\n"+d.logs.String(), func() bool {
		recs := d.events(id)
		return len(recs) > 0 && recs[0].Type == "TaskCompacted" && recs[0].Version > 0
	})
	if row := d.task(id); row.CompactedAt == nil {
		t.Fatalf("the row has no compacted_at: %+v", row)
	}
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	d.cmd.Wait()
	if logs := d.logs.String(); strings.Contains(logs, "history retention off") {
		t.Fatalf("the scheduler says retention is off:\n%s", logs)
	}
	d2 := startDaemonWith(t, bin, data, addr, args...)
	waitReady(t, d2) // on Postgres the view is rebuilt in memory first
	runs := d2.task(id).RunCount
	before := d2.events(id)[0].Version
	waitFor(t, 30*time.Second, "runs and a later removal after the restart\n"+d2.logs.String(), func() bool {
		recs := d2.events(id)
		return d2.task(id).RunCount >= runs+3 && recs[0].Type == "TaskCompacted" && recs[0].Version > before
	})
}
