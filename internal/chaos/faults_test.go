package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFaultScripts runs the fault cases against the real daemon (make
// chaos): a write-ahead log damaged in the middle, a missing events/CURRENT,
// and a full disk (on a small tmpfs, when this machine lets the test mount
// one).
func TestFaultScripts(t *testing.T) {
	if os.Getenv("CRONACTOR_CHAOS") == "" {
		t.Skip("set CRONACTOR_CHAOS=1 (make chaos) to run the fault scripts")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := BuildBinary(root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg := func(dir string) Config {
		return Config{Binary: bin, Dir: dir, Uptime: time.Second, Logf: t.Logf}
	}

	t.Run("WAL damaged in the middle", func(t *testing.T) {
		c := cfg(filepath.Join(t.TempDir(), "data"))
		if _, err := LoadAndKill(ctx, c, 300); err != nil {
			t.Fatal(err)
		}
		file, off, err := DamageNewestWAL(c.Dir, 0.10, 64)
		if err != nil {
			t.Fatal(err)
		}
		before, _ := Snapshot(c.Dir)
		var exit *ExitError
		if err := Serve(ctx, c); !errors.As(err, &exit) {
			t.Fatalf("serve on a damaged log: %v, want it to refuse", err)
		}
		if !strings.Contains(exit.Stderr, filepath.Base(file)) || !strings.Contains(exit.Stderr, "offset") || strings.Contains(exit.Stderr, "rebuild") {
			t.Errorf("refusal (damage at %d of %s): %s", off, file, exit.Stderr)
		}
		after, _ := Snapshot(c.Dir)
		if ch := Changed(before, after); len(ch) > 0 {
			t.Errorf("the refused start changed files: %v", ch)
		}
		// The operator accepts the loss, then rebuilds the view on purpose.
		err = Serve(ctx, c, "--accept-data-loss")
		if err != nil && !strings.Contains(err.Error(), "ahead of the event log") {
			t.Fatalf("serve --accept-data-loss: %v", err)
		}
		if reports, _ := filepath.Glob(filepath.Join(c.Dir, "DATA_LOSS-*.json")); len(reports) != 1 {
			t.Fatalf("%d data-loss reports", len(reports))
		}
		if out, err := exec.Command(bin, "projections", "rebuild", "--data", c.Dir).CombinedOutput(); err != nil {
			t.Fatalf("projections rebuild: %v: %s", err, out)
		}
		if err := Serve(ctx, c); err != nil {
			t.Fatalf("serve after the accepted loss and the rebuild: %v", err)
		}
	})

	t.Run("events/CURRENT missing", func(t *testing.T) {
		c := cfg(filepath.Join(t.TempDir(), "data"))
		if _, err := LoadAndKill(ctx, c, 50); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(c.Dir, "events", "CURRENT")); err != nil {
			t.Fatal(err)
		}
		before, _ := Snapshot(c.Dir)
		for i := 0; i < 2; i++ {
			var exit *ExitError
			if err := Serve(ctx, c); !errors.As(err, &exit) || !strings.Contains(exit.Stderr, "CURRENT") || strings.Contains(exit.Stderr, "panic") {
				t.Fatalf("start %d without CURRENT: %v", i+1, err)
			}
			after, _ := Snapshot(c.Dir)
			if ch := Changed(before, after); len(ch) > 0 {
				t.Fatalf("start %d changed files: %v", i+1, ch)
			}
		}
	})

	t.Run("disk full", func(t *testing.T) {
		mnt := t.TempDir()
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=100m", "tmpfs", mnt).CombinedOutput(); err != nil {
			t.Skipf("cannot mount a tmpfs here (%v: %s)", err, strings.TrimSpace(string(out)))
		}
		defer exec.Command("umount", mnt).Run()
		c := cfg(filepath.Join(mnt, "data"))
		d, err := startDaemon(ctx, c.withDefaults())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5; i++ {
			if _, err := d.createTask(ctx, fmt.Sprintf("d%d", i), c.withDefaults()); err != nil {
				t.Fatal(err)
			}
		}
		fill := filepath.Join(mnt, "fill")
		fillTo := func(leave int64) {
			t.Helper()
			os.Remove(fill)
			out, err := exec.Command("df", "-B1", "--output=avail", mnt).Output()
			if err != nil {
				t.Fatal(err)
			}
			var avail int64
			fmt.Sscan(strings.Fields(string(out))[1], &avail)
			if out, err := exec.Command("fallocate", "-l", fmt.Sprint(avail-leave), fill).CombinedOutput(); err != nil {
				t.Fatalf("fallocate: %v %s", err, out)
			}
		}
		for _, leave := range []int64{30 << 20, 0} { // below the store's reserve, then nothing at all
			fillTo(leave)
			if _, err := d.createTask(ctx, fmt.Sprintf("full%d", leave), c.withDefaults()); err == nil || !strings.Contains(err.Error(), "507") {
				t.Fatalf("create with %d bytes free: %v, want 507", leave, err)
			}
			resp, err := http.Get(d.url + "/v1/tasks")
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("list on a full disk: %v %v", resp, err)
			}
			resp.Body.Close()
			os.Remove(fill)
			if _, err := d.createTask(ctx, fmt.Sprintf("back%d", leave), c.withDefaults()); err != nil {
				t.Fatalf("create once space is back: %v", err)
			}
		}
		d.kill()
		fillTo(0)
		var exit *ExitError
		if err := Serve(ctx, c); !errors.As(err, &exit) || !strings.Contains(exit.Stderr, "no space left on device") || strings.Contains(exit.Stderr, "panic") {
			t.Fatalf("start on a full disk: %v", err)
		}
		os.Remove(fill)
		if err := Serve(ctx, c); err != nil {
			t.Fatalf("start once space is back: %v", err)
		}
	})
}
