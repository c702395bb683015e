package main_test

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cronactor/cronactor/projections/crontasks"
)

// TestDaemonHistoryRetention: serve --history-retention 2s removes a 1 s
// task's old events behind a TaskCompacted, the row says when, and after
// kill -9 the daemon loads the task from what remains and it keeps running.
func TestDaemonHistoryRetention(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test builds and runs the daemon")
	}
	bin := buildBinary(t)
	data := filepath.Join(t.TempDir(), "data")
	addr := freeAddr(t)
	d := startDaemonWith(t, bin, data, addr, "--tick", "100ms", "--history-retention", "2s")
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
	d2 := startDaemonWith(t, bin, data, addr, "--tick", "100ms", "--history-retention", "2s")
	runs := d2.task(id).RunCount
	before := d2.events(id)[0].Version
	waitFor(t, 30*time.Second, "runs and a later removal after the restart\n"+d2.logs.String(), func() bool {
		recs := d2.events(id)
		return d2.task(id).RunCount >= runs+3 && recs[0].Type == "TaskCompacted" && recs[0].Version > before
	})
}
