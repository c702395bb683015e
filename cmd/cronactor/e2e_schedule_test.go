package main_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// startDaemonTick is startDaemon with a chosen tick: the daemon's default 1 s,
// on which R1's tick instant shows.
func startDaemonTick(t *testing.T, bin, data, addr, tick string) *daemon {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--data", data, "--listen", addr, "--tick", tick)
	cmd.Env = append(os.Environ(), "CRONACTOR_TOKEN=")
	logs := &syncBuf{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemon{t: t, cmd: cmd, url: "http://" + addr}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	waitFor(t, 20*time.Second, "daemon up\n"+logs.String(), func() bool {
		resp, err := http.Get(d.url + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return d
}

// times are the times of a task's events of one type, from its audit
// trail.
func (d *daemon) times(id, typ string) []time.Time {
	var out []time.Time
	for _, r := range d.events(id) {
		if r.Type == typ {
			out = append(out, r.At)
		}
	}
	return out
}

// gaps are the times between consecutive instants, sorted.
func gaps(ts []time.Time) []time.Duration {
	var out []time.Duration
	for i := 1; i < len(ts); i++ {
		out = append(out, ts[i].Sub(ts[i-1]))
	}
	slices.Sort(out)
	return out
}

// TestDaemonSchedulesOnTime: in the real daemon on a 1 s tick, a 2 s
// interval task starts every 2 s (R1: nextRun is the tick's own instant +
// interval, so not every 3 s) and a `*/3 * * * * *` cron task every 3 s
// (R10). Read from the tasks' audit trails: every enqueue is one schedule
// step after the one before (the decision, up to a little processing
// lag), and the typical (median) gap between starts is the schedule's —
// a start picked up late on a loaded machine may make R3 drop the next
// run, which is the rule, not the schedule.
func TestDaemonSchedulesOnTime(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test builds and runs the daemon")
	}
	bin := buildBinary(t)
	d := startDaemonTick(t, bin, filepath.Join(t.TempDir(), "data"), freeAddr(t), "1s")
	var iv, cr crontasks.Task
	if code := d.call("POST", "/v1/tasks", map[string]any{"name": "every-2s", "owner": "e2e", "kind": "noop", "interval": "2s"}, &iv); code != 201 {
		t.Fatalf("create interval task: %d", code)
	}
	if code := d.call("POST", "/v1/tasks", map[string]any{"name": "cron-3s", "owner": "e2e", "kind": "noop", "cron": "*/3 * * * * *"}, &cr); code != 201 {
		t.Fatalf("create cron task: %d", code)
	}
	const runs = 7
	started := (events.RunStarted{}).EventType()
	waitFor(t, 90*time.Second, "seven starts of each task", func() bool {
		return len(d.times(iv.ID.String(), started)) >= runs && len(d.times(cr.ID.String(), started)) >= runs
	})
	const slack = 400 * time.Millisecond
	for _, c := range []struct {
		task crontasks.Task
		want time.Duration
	}{{iv, 2 * time.Second}, {cr, 3 * time.Second}} {
		id := c.task.ID.String()
		enq := gaps(d.times(id, (events.RunEnqueued{}).EventType())[:runs])
		if enq[0] < c.want-slack || enq[len(enq)-1] > c.want+slack {
			t.Errorf("%s: enqueued %v apart; want %s (± %s); trail:\n%s", c.task.Name, enq, c.want, slack, d.trail(id))
		}
		st := gaps(d.times(id, started)[:runs])
		if med := st[len(st)/2]; med < c.want-slack || med > c.want+slack {
			t.Errorf("%s: started %v apart (median %s); want %s (± %s); trail:\n%s", c.task.Name, st, med, c.want, slack, d.trail(id))
		}
	}
	// The cron task's runs are enqueued at the first tick at or after each
	// whole multiple of 3 s.
	for _, s := range d.times(cr.ID.String(), (events.RunEnqueued{}).EventType())[:runs] {
		if off := s.Sub(s.Truncate(3 * time.Second)); off > time.Second+slack {
			t.Errorf("cron run enqueued at %s, %s after its slot", s.Format(time.RFC3339Nano), off)
		}
	}
}

// trail is a task's events as "time type run" lines, for failure messages.
func (d *daemon) trail(id string) string {
	var b strings.Builder
	for _, r := range d.events(id) {
		e, _ := events.Decode(r)
		fmt.Fprintf(&b, "%s %s", r.At.Format("15:04:05.000"), r.Type)
		switch e := e.(type) {
		case events.RunEnqueued:
			fmt.Fprintf(&b, " %d due %s", e.Run, e.Due.Format("15:04:05.000"))
		case events.RunDropped:
			fmt.Fprintf(&b, " %d %s", e.Run, e.Detail)
		}
		b.WriteByte('\n')
	}
	return b.String()
}
