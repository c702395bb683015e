package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"
)

// The fault scripts of the chaos plan: each damages a data directory the
// way the world does, so a test can check the daemon's answer.

// LoadAndKill starts the daemon on cfg.Dir, creates n tasks, lets it run
// for cfg.Uptime and kills it with SIGKILL. It returns the IDs of the tasks
// whose creation was acknowledged.
func LoadAndKill(ctx context.Context, cfg Config, n int) ([]string, error) {
	cfg = cfg.withDefaults()
	d, err := startDaemon(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var ids []string
	for i := 0; i < n; i++ {
		id, err := d.createTask(ctx, fmt.Sprintf("f%05d", i), cfg)
		if err != nil {
			d.kill()
			return ids, err
		}
		ids = append(ids, id)
	}
	time.Sleep(cfg.Uptime)
	d.kill()
	return ids, nil
}

// DamageNewestWAL inverts n bytes at fraction frac of the newest
// write-ahead log of the store in dir, and says which file and where.
func DamageNewestWAL(dir string, frac float64, n int) (string, int64, error) {
	logs, err := filepath.Glob(filepath.Join(dir, "events", "*.log"))
	if err != nil || len(logs) == 0 {
		return "", 0, fmt.Errorf("chaos: no write-ahead log in %s", dir)
	}
	sort.Strings(logs)
	path := logs[len(logs)-1]
	b, err := os.ReadFile(path)
	if err != nil {
		return "", 0, err
	}
	off := int64(float64(len(b)) * frac)
	for i := off; i < off+int64(n) && i < int64(len(b)); i++ {
		b[i] ^= 0xff
	}
	return path, off, os.WriteFile(path, b, 0o644)
}

// Serve runs `cronactor serve` on cfg.Dir with extra flags until it is
// healthy (then stops it with SIGTERM and returns nil) or exits (then
// returns its error output).
func Serve(ctx context.Context, cfg Config, extra ...string) error {
	cfg = cfg.withDefaults()
	port, err := freePort()
	if err != nil {
		return err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := append([]string{"serve", "--data", cfg.Dir, "--listen", addr, "--tick", cfg.Tick.String()}, extra...)
	d := &daemon{url: "http://" + addr, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	d.cmd = exec.Command(cfg.Binary, args...)
	d.cmd.Stderr = d.stderr
	if err := d.cmd.Start(); err != nil {
		return err
	}
	go func() { d.done <- d.cmd.Wait() }()
	for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-d.done:
			return &ExitError{Err: err, Stderr: d.stderr.String()}
		default:
		}
		if healthy(d.url) {
			d.stop()
			return nil
		}
	}
	d.kill()
	return errors.New("chaos: serve neither became healthy nor exited within a minute")
}

// ExitError is a daemon that exited instead of serving.
type ExitError struct {
	Err    error
	Stderr string
}

func (e *ExitError) Error() string { return fmt.Sprintf("daemon exited (%v): %s", e.Err, e.Stderr) }

// Snapshot maps every file under dir (but lock files) to its content, to
// check that a refused start changed nothing.
func Snapshot(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || e.Name() == "LOCK" {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = b
		return err
	})
	return out, err
}

// Changed lists the files deleted, changed or added between two snapshots.
func Changed(before, after map[string][]byte) []string {
	var out []string
	for n, b := range before {
		if a, ok := after[n]; !ok {
			out = append(out, "deleted "+n)
		} else if !bytes.Equal(a, b) {
			out = append(out, "changed "+n)
		}
	}
	for n := range after {
		if _, ok := before[n]; !ok {
			out = append(out, "added "+n)
		}
	}
	sort.Strings(out)
	return out
}
