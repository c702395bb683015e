package main_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// appendTasks appends n created tasks to the embedded store in dir.
func appendTasks(t *testing.T, dir string, n int) {
	t.Helper()
	store, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "rebuild/%d", i))
		c, _ := events.Propose(events.TaskCreated{TaskID: id, Name: fmt.Sprint("t", i), Owner: "rebuild/1", Kind: "noop",
			Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Timebox: events.Duration(30 * time.Second),
			NextRun: at.Add(time.Minute)}, uuid.Nil, at)
		if _, err := store.Append(context.Background(), events.TaskStream(id), events.NoStream, c); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInterruptedRebuildLeavesNothing: a real `projections rebuild`,
// signalled (SIGTERM, SIGINT) while its partial view is on disk, removes
// that partial view, keeps the old view and exits 1 saying it was
// interrupted.
func TestInterruptedRebuildLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	data := t.TempDir()
	appendTasks(t, data, 20)
	view := crontasks.DirIn(data)
	partial := view + ".rebuild"
	// A first, whole rebuild makes the view that must survive.
	if out, err := exec.Command(bin, "projections", "rebuild", "--data", data).CombinedOutput(); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(bin, "projections", "rebuild", "--data", data, "--batch", "1")
		cmd.Env = append(os.Environ(), "CRONACTOR_TEST_HOLD_REBUILD=1")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 16)
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		var got []string
		held := false
		timeout := time.After(60 * time.Second)
		for !held {
			select {
			case l, ok := <-lines:
				if !ok {
					cmd.Wait()
					t.Fatalf("%v: rebuild ended before it was held: %q", sig, got)
				}
				got = append(got, l)
				held = strings.Contains(l, "rebuild held for a test")
			case <-timeout:
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("%v: rebuild not held in 60s: %q", sig, got)
			}
		}
		if _, err := os.Stat(partial); err != nil {
			t.Fatalf("%v: no partial view while the rebuild is held: %v", sig, err)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		for l := range lines {
			got = append(got, l)
		}
		err = cmd.Wait()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Errorf("%v: exit %v, want 1", sig, err)
		}
		if !strings.Contains(strings.Join(got, "\n"), "interrupted") {
			t.Errorf("%v: stderr does not say it was interrupted: %q", sig, got)
		}
		if _, err := os.Stat(partial); !os.IsNotExist(err) {
			t.Errorf("%v: the partial view %s is left behind (%v)", sig, partial, err)
		}
	}
	// The old view is whole.
	out, err := exec.Command(bin, "projections", "status", "--data", data).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "at position 20; log head 20; 0 events behind") {
		t.Errorf("status after the interrupted rebuilds: %v\n%s", err, out)
	}
}

// TestStartRemovesPartialRebuild: a partial view left by a rebuild that was
// killed (-9, power cut) is removed by the next rebuild and by serve.
func TestStartRemovesPartialRebuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	data := t.TempDir()
	appendTasks(t, data, 3)
	partial := crontasks.DirIn(data) + ".rebuild"
	leave := func() {
		t.Helper()
		if err := os.MkdirAll(partial, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(partial, "000001.sst"), make([]byte, 4096), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	leave()
	d := startDaemonOn(t, bin, freeAddr(t), "--data", data)
	if _, err := os.Stat(partial); !os.IsNotExist(err) {
		t.Errorf("serve left %s (%v)", partial, err)
	}
	if !strings.Contains(d.logs.String(), "removed a partial view left by an interrupted projections rebuild") {
		t.Errorf("serve did not log the removal:\n%s", d.logs.String())
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	d.cmd.Wait()

	leave()
	if out, err := exec.Command(bin, "projections", "rebuild", "--data", data).CombinedOutput(); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(partial, "000001.sst")); !os.IsNotExist(err) {
		t.Errorf("rebuild kept the leftover (%v)", err)
	}
}
