package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cronactor/cronactor/projections/crontasks"
)

// loopFS is an ext4 file system in an image file, mounted on a loop device
// with errors=remount-ro (the default of most distributions' data disks).
type loopFS struct {
	t     *testing.T
	img   string
	mnt   string
	dev   string // /dev/loopN
	inode string // the ext4 name in /sys/fs/ext4 (loopN)
}

// mountLoop makes and mounts a loopFS, unmounted (lazily if it must be) and
// its loop device detached when the test ends; it skips the test where
// that is not permitted (not root, no loop devices, no ext4).
func mountLoop(t *testing.T) *loopFS {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a read-only file system is made with a loop mount, which needs root")
	}
	for _, tool := range []string{"mkfs.ext4", "mount", "umount", "losetup", "e2fsck"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("a loop mount needs %s: %v", tool, err)
		}
	}
	dir := t.TempDir()
	l := &loopFS{t: t, img: filepath.Join(dir, "disk.img"), mnt: filepath.Join(dir, "mnt")}
	if err := os.Mkdir(l.mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(l.img, 128<<20); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", l.img).CombinedOutput(); err != nil {
		t.Skipf("mkfs.ext4 not permitted here: %v: %s", err, out)
	}
	if out, err := exec.Command("losetup", "--find", "--show", l.img).CombinedOutput(); err != nil {
		t.Skipf("no loop device here: %v: %s", err, out)
	} else {
		l.dev = strings.TrimSpace(string(out))
		l.inode = filepath.Base(l.dev)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", l.dev).CombinedOutput(); err != nil {
			t.Logf("losetup -d %s: %v: %s", l.dev, err, out)
		}
	})
	if err := l.mount(); err != nil {
		t.Skipf("mount not permitted here: %v", err)
	}
	t.Cleanup(l.unmount)
	return l
}

func (l *loopFS) mount() error {
	if out, err := exec.Command("mount", "-t", "ext4", "-o", "errors=remount-ro", l.dev, l.mnt).CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// unmount unmounts, lazily if the mount is busy, and never fails.
func (l *loopFS) unmount() {
	if exec.Command("mountpoint", "-q", l.mnt).Run() != nil {
		return
	}
	if out, err := exec.Command("umount", l.mnt).CombinedOutput(); err != nil {
		l.t.Logf("umount %s: %v: %s; unmounting lazily", l.mnt, err, out)
		_ = exec.Command("umount", "-l", l.mnt).Run()
	}
}

// failDisk makes the kernel meet an error on the file system, as a failing
// disk does: with errors=remount-ro ext4 aborts its journal and turns the
// file system read-only, under the open files of whoever uses it.
func (l *loopFS) failDisk() {
	l.t.Helper()
	trigger := filepath.Join("/sys/fs/ext4", l.inode, "trigger_fs_error")
	if err := os.WriteFile(trigger, []byte("cronactor test\n"), 0); err != nil {
		l.t.Skipf("this kernel cannot be made to fail an ext4 file system (%s): %v", trigger, err)
	}
}

type roHealth struct {
	Status string `json:"status"`
	Store  struct {
		Writable       bool   `json:"writable"`
		Condition      string `json:"condition"`
		Message        string `json:"message"`
		RefusedAppends uint64 `json:"refused_appends"`
		RestartNeeded  bool   `json:"restart_needed"`
	} `json:"store"`
}

func (d *daemon) roHealth() (int, roHealth, string) {
	d.t.Helper()
	a := d.raw("GET", "/healthz", "")
	var h roHealth
	if err := json.Unmarshal(a.body, &h); err != nil {
		d.t.Fatalf("/healthz: %v: %s", err, a.body)
	}
	return a.code, h, string(a.body)
}

// countLines counts the lines of log at level ERROR, and those that hold
// text.
func countLines(log, text string) (errs, with int) {
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "level=ERROR") {
			errs++
		}
		if strings.Contains(l, text) {
			with++
		}
	}
	return errs, with
}

// TestDaemonOnReadOnlyDisk: the daemon's data directory is on a real ext4
// file system that the kernel turns read-only under it (a disk error with
// errors=remount-ro). /healthz fails with 503 and says why; writes answer
// 503 with a JSON error naming the condition; the log says it once, not
// once per due task per tick; the metrics show it. ext4 does not let a file
// system it turned read-only be remounted writable (only a fsck does, after
// an unmount, so a restart): once the daemon is stopped, the file system
// checked and mounted again, the daemon starts with every task (a start
// before that refuses, saying the data directory is read-only).
func TestDaemonOnReadOnlyDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test builds and runs the daemon")
	}
	disk := mountLoop(t)
	bin := buildBinary(t)
	data := filepath.Join(disk.mnt, "data")
	addr := freeAddr(t)
	d, logs, exited := startDaemonEnv(t, bin, data, addr)
	const tasks = 10
	var first crontasks.Task
	for i := range tasks {
		if code := d.call("POST", "/v1/tasks", map[string]any{"name": fmt.Sprint("t", i), "owner": "o", "kind": "noop", "interval": "1s"}, &first); code != 201 {
			t.Fatalf("create task %d: %d", i, code)
		}
	}
	waitFor(t, 30*time.Second, "runs", func() bool { return d.task(first.ID.String()).CompletedCount >= 2 })
	if code, h, body := d.roHealth(); code != 200 || h.Status != "ok" || !h.Store.Writable {
		t.Fatalf("/healthz before the fault: %d %s", code, body)
	}

	disk.failDisk()
	waitFor(t, 20*time.Second, "/healthz to fail", func() bool { code, _, _ := d.roHealth(); return code == 503 })
	// The kernel answers writes with EROFS once it turned the file system
	// read-only; one that was under way as it did may meet EIO instead,
	// which the store takes for a failed write (restart needed).
	code, h, body := d.roHealth()
	want := map[string]string{"read_only": "store: data directory is read-only", "write_failed": "store: a write to the event store failed"}[h.Store.Condition]
	if h.Status != "failing" || h.Store.Writable || want == "" || !strings.HasPrefix(h.Store.Message, want) {
		t.Fatalf("/healthz on a read-only disk: %d %s", code, body)
	}
	if strings.Contains(body, disk.mnt) {
		t.Errorf("/healthz shows the path: %s", body)
	}
	a := d.raw("POST", "/v1/tasks", `{"name":"new","owner":"o","kind":"noop","interval":"1m"}`)
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(a.body, &e); err != nil || a.code != 503 || !strings.HasPrefix(e.Error.Message, want) {
		t.Fatalf("create on a read-only disk: %d %s", a.code, a.body)
	}
	if a := d.raw("POST", "/v1/tasks/"+first.ID.String()+"/pause", ""); a.code != 503 {
		t.Fatalf("pause on a read-only disk: %d %s", a.code, a.body)
	}
	if a := d.raw("GET", "/v1/tasks/"+first.ID.String(), ""); a.code != 200 {
		t.Fatalf("read on a read-only disk: %d %s", a.code, a.body)
	}
	m := d.raw("GET", "/metrics", "")
	if !strings.Contains(string(m.body), "\ncronactor_store_writable 0\n") || !strings.Contains(string(m.body), `cronactor_append_failures_total{reason="`+h.Store.Condition+`"}`) {
		t.Errorf("metrics on a read-only disk do not say it:\n%s", grepLines(string(m.body), "cronactor_store_", "cronactor_append_failures"))
	}

	// Three seconds are 30 ticks, 3 due runs of each task: all refused,
	// and logged once.
	time.Sleep(3 * time.Second)
	_, h, _ = d.roHealth()
	if h.Store.RefusedAppends < tasks*2 {
		t.Fatalf("%d appends refused in 3 s of %d tasks due every second", h.Store.RefusedAppends, tasks)
	}
	errs, refused := countLines(logs.String(), "appends refused")
	if errs != 1 || refused != 1 {
		t.Fatalf("%d ERROR lines (%d saying appends are refused) for %d refused appends, want 1:\n%s", errs, refused, h.Store.RefusedAppends, logs)
	}

	// ext4 keeps a file system it turned read-only read-only: a remount
	// to read-write fails (older kernels allowed it; then the daemon
	// recovers by itself).
	out, err := exec.Command("mount", "-o", "remount,rw", disk.mnt).CombinedOutput()
	if err == nil {
		waitFor(t, 20*time.Second, "/healthz to recover", func() bool { code, _, _ := d.roHealth(); return code == 200 })
		if a := d.raw("POST", "/v1/tasks/"+first.ID.String()+"/pause", ""); a.code != 200 {
			t.Fatalf("pause once writable again: %d %s", a.code, a.body)
		}
		_, resumed := countLines(logs.String(), "appends resume")
		if resumed != 1 {
			t.Fatalf("recovery not logged once:\n%s", logs)
		}
		return
	}
	t.Logf("remount,rw refused, as ext4 does after an error: %v: %s", err, out)
	if code, _, body := d.roHealth(); code != 503 {
		t.Fatalf("/healthz after a refused remount: %d %s", code, body)
	}

	// What docs/operations.md says to do: stop, unmount, fsck, mount,
	// start.
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("the daemon did not stop on a read-only disk:\n%s", logs)
	}
	if _, resumed := countLines(logs.String(), "appends resume"); resumed != 0 {
		t.Fatalf("the log says appends resumed on a disk that stayed read-only:\n%s", logs)
	}
	// A start on the read-only file system refuses, saying why.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := exec.CommandContext(ctx, bin, "serve", "--data", data, "--listen", freeAddr(t))
	start.Env = append(os.Environ(), "CRONACTOR_TOKEN=")
	if out, err := start.CombinedOutput(); err == nil || !strings.Contains(string(out), "data directory is read-only") {
		t.Fatalf("a start on the read-only file system: %v:\n%s", err, out)
	}
	if out, err := exec.Command("umount", disk.mnt).CombinedOutput(); err != nil {
		t.Fatalf("umount after the daemon stopped: %v: %s", err, out)
	}
	if out, err := exec.Command("e2fsck", "-fy", disk.dev).CombinedOutput(); err != nil {
		// 1: errors corrected, which is what is expected.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 1 {
			t.Fatalf("e2fsck: %v: %s", err, out)
		}
	}
	if err := disk.mount(); err != nil {
		t.Fatal(err)
	}
	d2, _, _ := startDaemonEnv(t, bin, data, freeAddr(t))
	if code, h, body := d2.roHealth(); code != 200 || !h.Store.Writable {
		t.Fatalf("/healthz after the restart: %d %s", code, body)
	}
	var list struct {
		Tasks []crontasks.Task `json:"tasks"`
	}
	if code := d2.call("GET", "/v1/tasks?limit=100", nil, &list); code != 200 || len(list.Tasks) != tasks {
		t.Fatalf("tasks after the restart: %d, %d tasks, want %d", code, len(list.Tasks), tasks)
	}
	if a := d2.raw("POST", "/v1/tasks/"+first.ID.String()+"/pause", ""); a.code != 200 {
		t.Fatalf("pause after the restart: %d %s", a.code, a.body)
	}
}

// grepLines is the lines of s that start with one of prefixes.
func grepLines(s string, prefixes ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
			}
		}
	}
	return strings.Join(out, "\n")
}
