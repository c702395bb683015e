package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/google/uuid"
)

// RestartChildConfig is what the fresh process of the restart measurement
// does (RestartChild): reopen Dir, start a scheduler with Tick and
// Workers, and wait until the first tick has decided about Probe, a task
// that was due before the process started.
type RestartChildConfig struct {
	// Dir is the embedded store's directory. Required.
	Dir string
	// Probe is the task the first tick must decide about. Required.
	Probe uuid.UUID
	// Tick is the scheduler's tick: 1ms to 1h.
	Tick time.Duration
	// Workers is the scheduler's workers: 1 to 10000.
	Workers int
	// RecoveryGC is the scheduler's Config.RecoveryGC: the daemon's, so
	// that the restart measured is the daemon's. Nil: none.
	RecoveryGC func() (restore func())
}

// Validate reports a field out of its limits.
func (c RestartChildConfig) Validate() error {
	switch {
	case c.Dir == "":
		return errors.New("bench: RestartChildConfig.Dir is required")
	case c.Probe == uuid.Nil:
		return errors.New("bench: RestartChildConfig.Probe is required")
	case c.Tick < time.Millisecond || c.Tick > time.Hour:
		return fmt.Errorf("bench: RestartChildConfig.Tick %s: want 1ms to 1h", c.Tick)
	case c.Workers < 1 || c.Workers > 10000:
		return fmt.Errorf("bench: RestartChildConfig.Workers %d: want 1 to 10000", c.Workers)
	}
	return nil
}

// ChildCommand says how to start the fresh process: the program and the
// arguments that make it call RestartChild with cfg and print to its
// stdout (cmd/cronactor: its own executable with the hidden command
// bench-restart-child).
type ChildCommand func(cfg RestartChildConfig) (path string, args []string)

// childDecided is the child's first line, printed the moment the first
// tick's decision is durable; the parent's clock stops when it reads it.
// The times are since RestartChild was entered (after the runtime's own
// start, which only the parent's figure includes).
type childDecided struct {
	Decided  bool    `json:"decided"`
	OpenS    float64 `json:"open_s"`
	StartS   float64 `json:"start_s"`
	DecidedS float64 `json:"decided_s"`
}

// childMemory is the child's second line: its resident set with the store
// open and nothing recovered, and once the tasks are recovered and idle.
type childMemory struct {
	Tasks          int   `json:"tasks"`
	RSSMeasured    bool  `json:"rss_measured"`
	RSSBeforeBytes int64 `json:"rss_before_bytes"`
	RSSBytes       int64 `json:"rss_bytes"`
}

// errProbeSeen ends the child's subscription.
var errProbeSeen = errors.New("probe decided")

// RestartChild is the fresh process's side of the restart measurement: it
// opens cfg.Dir, starts a scheduler on it (every task recovered), and
// prints one JSON line to out as soon as the first event the first tick
// decided for cfg.Probe is durable; then a second line with its resident
// memory; then it stops without draining.
func RestartChild(ctx context.Context, cfg RestartChildConfig, out io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	t0 := time.Now()
	store, err := embedded.Open(cfg.Dir, embedded.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	openS := time.Since(t0).Seconds()
	// As in the parent's figure, the store's own memory is in the before:
	// what is measured is the tasks. A GC of the young heap: about 1ms.
	rssBefore, rssOK := settledRSS()
	s, err := scheduler.New(scheduler.Config{Store: store, Tick: cfg.Tick, Workers: cfg.Workers, RecoveryGC: cfg.RecoveryGC})
	if err != nil {
		return err
	}
	if err := s.Register("noop", kinds.Noop()); err != nil {
		return err
	}
	stream := events.TaskStream(cfg.Probe)
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	decided := make(chan struct{})
	subErr := make(chan error, 1)
	go func() {
		subErr <- store.Subscribe(subCtx, store.Head(), func(r events.Recorded) error {
			if r.Stream == stream {
				close(decided)
				return errProbeSeen
			}
			return nil
		})
	}()
	if err := s.Start(ctx); err != nil {
		return err
	}
	defer func() {
		stopCtx, stop := context.WithCancel(context.Background())
		stop() // abandon what runs: the measurement is over
		_ = s.Stop(stopCtx)
	}()
	startS := time.Since(t0).Seconds()
	select {
	case <-decided:
	case err := <-subErr:
		return fmt.Errorf("bench: restart child: subscription ended before the probe was decided: %w", err)
	case <-ctx.Done():
		return ctx.Err()
	}
	line, _ := json.Marshal(childDecided{Decided: true, OpenS: openS, StartS: startS, DecidedS: time.Since(t0).Seconds()})
	if _, err := fmt.Fprintf(out, "%s\n", line); err != nil {
		return err
	}
	mem := childMemory{Tasks: s.Stats().Tasks}
	rss, ok := settledRSS()
	if ok && rssOK {
		mem.RSSMeasured, mem.RSSBeforeBytes, mem.RSSBytes = true, rssBefore, rss
	}
	line, _ = json.Marshal(mem)
	_, err = fmt.Fprintf(out, "%s\n", line)
	return err
}

// restartResult is the parent's view of one restart.
type restartResult struct {
	seconds float64 // exec → the first line read
	decided childDecided
	memory  childMemory
}

// measureRestart runs the child for cfg and times it from just before the
// exec until its first line is read.
func measureRestart(ctx context.Context, child ChildCommand, cfg RestartChildConfig) (restartResult, error) {
	var res restartResult
	path, args := child(cfg)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return res, err
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("bench: restart child: %w", err)
	}
	sc := bufio.NewScanner(stdout)
	var lines [][]byte
	for sc.Scan() {
		if len(lines) == 0 {
			res.seconds = time.Since(t0).Seconds()
		}
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	waitErr := cmd.Wait()
	if waitErr != nil || len(lines) < 2 {
		return res, fmt.Errorf("bench: restart child %s: %v (%d lines): %s", path, waitErr, len(lines),
			strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(lines[0], &res.decided); err != nil || !res.decided.Decided {
		return res, fmt.Errorf("bench: restart child: first line %q: %v", lines[0], err)
	}
	if err := json.Unmarshal(lines[1], &res.memory); err != nil {
		return res, fmt.Errorf("bench: restart child: second line %q: %w", lines[1], err)
	}
	return res, nil
}

// lockedBuffer is a bytes.Buffer written by exec's copying goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// probeLead is how far ahead of now the probe task is due when created:
// long enough for the scheduler to stop ticking first.
const probeLead = time.Second

// leaveProbe creates the probe task the restart measurement waits for (due
// probeLead from now), stops s before it is due, checks the probe did not
// run, and waits until it is due: the next process's first tick must
// decide about it.
func leaveProbe(ctx context.Context, s *scheduler.Scheduler, store events.Store) (uuid.UUID, error) {
	due := time.Now().Add(probeLead)
	t, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: "restart-probe", Owner: "bench", Kind: "noop",
		Interval: time.Hour, FirstRun: due})
	if err != nil {
		return uuid.Nil, err
	}
	if err := s.Stop(context.Background()); err != nil {
		return uuid.Nil, err
	}
	recs, err := store.ReadStream(ctx, events.TaskStream(t.ID), 0, 0)
	if err != nil {
		return uuid.Nil, err
	}
	for _, r := range recs {
		if r.Type != (events.TaskCreated{}).EventType() {
			return uuid.Nil, fmt.Errorf("bench: the restart probe recorded %s before the scheduler stopped; the machine is too busy", r.Type)
		}
	}
	// Past its due time: the new process's first tick finds it due.
	if d := time.Until(due); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return uuid.Nil, ctx.Err()
		}
	}
	return t.ID, nil
}
