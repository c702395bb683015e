package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Build compiles the cronactor binary of the module rooted at root into
// dir and returns its path.
func Build(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "cronactor")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/cronactor")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("chaos: go build: %w\n%s", err, out)
	}
	return bin, nil
}

// ModuleRoot walks up from the working directory to the directory holding
// go.mod.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("chaos: no go.mod above the working directory")
		}
		dir = parent
	}
}

// FreeAddr returns a loopback address with a port free at the moment.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Logs collects a process's output, safe for concurrent writes.
type Logs struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *Logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Tail returns the last n lines.
func (l *Logs) Tail(n int) string {
	lines := strings.Split(strings.TrimRight(l.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Daemon is how to start `cronactor serve` on one data directory.
type Daemon struct {
	Bin  string
	Data string
	Addr string
	Tick time.Duration
	// Args are added to serve's flags.
	Args []string
}

// URL is the daemon's base URL.
func (d Daemon) URL() string { return "http://" + d.Addr }

// Proc is one running daemon process.
type Proc struct {
	cmd     *exec.Cmd
	Logs    *Logs
	Started time.Time
	done    chan struct{}
	err     error
}

// Start starts the daemon; it does not wait for it to serve.
func (d Daemon) Start() (*Proc, error) {
	args := append([]string{"serve", "--data", d.Data, "--listen", d.Addr, "--tick", d.Tick.String()}, d.Args...)
	cmd := exec.Command(d.Bin, args...)
	cmd.Env = append(os.Environ(), "CRONACTOR_TOKEN=")
	p := &Proc{cmd: cmd, Logs: &Logs{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Logs, p.Logs
	p.Started = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("chaos: start %s: %w", d.Bin, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// WaitHealthy polls /healthz until it answers 200 and returns the time from
// the process's start. It fails if the process exits first.
func (p *Proc) WaitHealthy(ctx context.Context, url string) (time.Duration, error) {
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/healthz", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(p.Started), nil
			}
		}
		select {
		case <-p.done:
			return 0, fmt.Errorf("chaos: daemon exited before serving (%v):\n%s", p.err, p.Logs.Tail(20))
		case <-ctx.Done():
			return 0, fmt.Errorf("chaos: daemon not healthy: %w\n%s", ctx.Err(), p.Logs.Tail(20))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Wait waits at most d for the process to exit and returns its exit code
// (-1 when killed by a signal); ok is false if it was still running.
func (p *Proc) Wait(d time.Duration) (code int, ok bool) {
	select {
	case <-p.done:
	case <-time.After(d):
		return 0, false
	}
	return p.cmd.ProcessState.ExitCode(), true
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }
