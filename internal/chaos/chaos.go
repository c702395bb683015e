// Package chaos is the project's chaos harness: it runs the real daemon
// (a built cronactor binary) under load, kills it with SIGKILL many times,
// and then checks the scheduler's promises from the audit log of every
// task it was told about. It is run by `make chaos`, never by `make test`.
//
// The invariants checked (the scheduling rules of docs/lifecycle.md and the
// reliability promises: nothing acknowledged is lost, no run starts twice):
//   - every task whose creation was acknowledged exists after the kills;
//   - a task's events have contiguous versions from 0;
//   - every run that started or ended was enqueued, no run started twice,
//     and no run has more than one outcome (completed, failed, dropped,
//     forced end); runs still waiting or running at the end are counted;
//   - two scheduled first attempts of a task never start closer than
//     interval − tolerance.
//
// Restart time is measured from the daemon's start to its first healthy
// answer.
//
// Half of the tasks are http tasks whose runs go to a sink in this process
// that sleeps and counts: no run may reach it twice, and every run it
// received must be recorded as started.
//
// faults.go holds the fault scripts (WAL damage, missing files, a full
// disk). Still to come from the chaos plan: graceful and double signals,
// and an HTTP fuzzer.
//
// Concurrency: Run is not safe to call twice on one directory at once.
package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Config is one chaos run.
type Config struct {
	// Binary is the cronactor binary to run. Required.
	Binary string
	// Dir is the data directory (created; it should be empty). Required.
	Dir string
	// Kills is how many times the daemon is killed. Default 100.
	Kills int
	// Uptime bounds how long the daemon runs before each kill: a random
	// duration in [Uptime/2, Uptime). Default 2s.
	Uptime time.Duration
	// CreatePerRound is how many tasks are created while each round runs.
	// Default 5.
	CreatePerRound int
	// Interval and Tolerance of the tasks created. Defaults 1s and 100ms.
	Interval, Tolerance time.Duration
	// Tick is the daemon's clock tick. Default 100ms.
	Tick time.Duration
	// Drain is how long the daemon runs after the last kill, before the
	// checks, so waiting runs can end. Default 3s.
	Drain time.Duration
	// HTTPEvery makes every n-th task an http task that POSTs its runs to a
	// sink in this process, which sleeps SinkDelay and counts deliveries;
	// the others are noop tasks. Default 2 (half of them); negative: none.
	HTTPEvery int
	// SinkDelay is how long the sink takes to answer. Default 50ms.
	SinkDelay time.Duration
	// Seed makes the kill times repeatable. Default: the time.
	Seed int64
	// Logf receives progress lines. Default: none.
	Logf func(format string, args ...any)

	sinkURL string // set by Run
}

// Validate names a field out of its limits.
func (c Config) Validate() error {
	switch {
	case c.Binary == "":
		return errors.New("chaos: Config.Binary is required")
	case c.Dir == "":
		return errors.New("chaos: Config.Dir is required")
	case c.Kills < 0:
		return fmt.Errorf("chaos: Config.Kills %d is negative", c.Kills)
	case c.Tolerance*2 >= c.Interval && c.Interval != 0:
		return fmt.Errorf("chaos: Config.Tolerance %s must be below half the interval %s", c.Tolerance, c.Interval)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Kills == 0 {
		c.Kills = 100
	}
	if c.Uptime == 0 {
		c.Uptime = 2 * time.Second
	}
	if c.CreatePerRound == 0 {
		c.CreatePerRound = 5
	}
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.Tolerance == 0 {
		c.Tolerance = 100 * time.Millisecond
	}
	if c.Tick == 0 {
		c.Tick = 100 * time.Millisecond
	}
	if c.Drain == 0 {
		c.Drain = 3 * time.Second
	}
	if c.HTTPEvery == 0 {
		c.HTTPEvery = 2
	}
	if c.SinkDelay == 0 {
		c.SinkDelay = 50 * time.Millisecond
	}
	if c.Seed == 0 {
		c.Seed = time.Now().UnixNano()
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	return c
}

// Report is what a run found.
type Report struct {
	Kills         int
	TasksAcked    int
	TasksFound    int
	Events        int
	RunsEnqueued  int
	RunsStarted   int
	Outcomes      map[string]int // by event type
	RunsPending   int            // enqueued, no outcome yet at the end
	Restarts      []time.Duration
	Violations    []string
	CreatesFailed int // creations not acknowledged (cut by a kill)
	Deliveries    int // runs the http sink received
}

// OK reports a run without violations.
func (r Report) OK() bool { return len(r.Violations) == 0 }

// Table prints the report as a table.
func (r Report) Table() string {
	var b strings.Builder
	med, max := restartStats(r.Restarts)
	row := func(k string, v any) { fmt.Fprintf(&b, "%-34s %v\n", k, v) }
	row("kills (SIGKILL)", r.Kills)
	row("tasks acknowledged / found", fmt.Sprintf("%d / %d", r.TasksAcked, r.TasksFound))
	row("creations cut by a kill", r.CreatesFailed)
	row("events checked", r.Events)
	row("runs enqueued / started", fmt.Sprintf("%d / %d", r.RunsEnqueued, r.RunsStarted))
	var kinds []string
	for k := range r.Outcomes {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		row("  "+k, r.Outcomes[k])
	}
	row("runs without an outcome at the end", r.RunsPending)
	row("http sink deliveries", r.Deliveries)
	row("restart to healthy (median / max)", fmt.Sprintf("%s / %s", med.Round(time.Millisecond), max.Round(time.Millisecond)))
	row("violations", len(r.Violations))
	for i, v := range r.Violations {
		if i == 20 {
			fmt.Fprintf(&b, "  … %d more\n", len(r.Violations)-20)
			break
		}
		fmt.Fprintf(&b, "  %s\n", v)
	}
	return b.String()
}

func restartStats(d []time.Duration) (median, max time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[len(s)-1]
}

// Run runs the daemon cfg.Kills times, killing each with SIGKILL after a
// random uptime while tasks are being created, then once more to drain,
// and checks the audit log of every acknowledged task.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	cfg = cfg.withDefaults()
	rng := rand.New(rand.NewSource(cfg.Seed))
	rep := Report{Outcomes: map[string]int{}}
	var acked []string
	sink := newSink(cfg.SinkDelay)
	defer sink.Close()
	cfg.sinkURL = sink.URL
	seq := 0
	for round := 0; round <= cfg.Kills; round++ {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		last := round == cfg.Kills
		d, err := startDaemon(ctx, cfg)
		if err != nil {
			return rep, fmt.Errorf("chaos: round %d: %w", round, err)
		}
		rep.Restarts = append(rep.Restarts, d.healthyAfter)
		uptime := cfg.Uptime/2 + time.Duration(rng.Int63n(int64(cfg.Uptime/2)+1))
		if last {
			uptime = cfg.Drain
		}
		deadline := time.Now().Add(uptime)
		pause := uptime / time.Duration(cfg.CreatePerRound+1)
		for i := 0; i < cfg.CreatePerRound && !last; i++ {
			seq++
			id, err := d.createTask(ctx, fmt.Sprintf("t%05d", seq), cfg)
			if err != nil {
				rep.CreatesFailed++
				cfg.Logf("round %d: create t%05d: %v", round, seq, err)
			} else {
				acked = append(acked, id)
			}
			time.Sleep(pause)
		}
		time.Sleep(time.Until(deadline))
		if last {
			d.stop()
			break
		}
		d.kill()
		rep.Kills++
		cfg.Logf("round %d: killed after %s (restart took %s), %d tasks acknowledged", round, uptime.Round(time.Millisecond),
			d.healthyAfter.Round(time.Millisecond), len(acked))
	}
	// Read every audit log from a last, quiet daemon.
	d, err := startDaemon(ctx, cfg)
	if err != nil {
		return rep, fmt.Errorf("chaos: final start: %w", err)
	}
	defer d.stop()
	rep.TasksAcked = len(acked)
	// The deliveries first: the daemon still runs, and a run delivered
	// after a task's log was read would look unrecorded. A delivery taken
	// here follows its RunStarted, which is durable before the handler runs.
	delivered := sink.deliveries()
	started := map[string]bool{}
	for _, id := range acked {
		evs, err := d.taskEvents(ctx, id)
		if errors.Is(err, errNotFound) {
			rep.Violations = append(rep.Violations, fmt.Sprintf("task %s: acknowledged, not found", id))
			continue
		}
		if err != nil {
			return rep, fmt.Errorf("chaos: audit log of %s: %w", id, err)
		}
		rep.TasksFound++
		check(&rep, id, evs, cfg)
		for _, e := range evs {
			if e.Type == "RunStarted" {
				started[e.RunID] = true
			}
		}
	}
	ackedSet := map[string]bool{}
	for _, id := range acked {
		ackedSet[id] = true
	}
	for _, d := range delivered {
		rep.Deliveries += d.count
		if d.count > 1 {
			rep.Violations = append(rep.Violations, fmt.Sprintf("task %s: run %s delivered %d times", d.task, d.run, d.count))
		}
		if ackedSet[d.task] && !started[d.run] {
			rep.Violations = append(rep.Violations, fmt.Sprintf("task %s: run %s delivered but never recorded as started", d.task, d.run))
		}
	}
	return rep, nil
}

// sink is the http tasks' endpoint: it counts each run it receives.
type sink struct {
	*httptest.Server
	mu   sync.Mutex
	runs map[string]*delivery
}

type delivery struct {
	task, run string
	count     int
}

func newSink(delay time.Duration) *sink {
	s := &sink{runs: map[string]*delivery{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			TaskID string `json:"task_id"`
			RunID  string `json:"run_id"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.RunID == "" {
			http.Error(w, "bad run", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		d := s.runs[req.RunID]
		if d == nil {
			d = &delivery{task: req.TaskID, run: req.RunID}
			s.runs[req.RunID] = d
		}
		d.count++
		s.mu.Unlock()
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusOK)
	}))
	return s
}

func (s *sink) deliveries() []delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]delivery, 0, len(s.runs))
	for _, d := range s.runs {
		out = append(out, *d)
	}
	return out
}

// auditEvent is the part of GET /v1/tasks/{id}/events the checks read.
type auditEvent struct {
	Version uint64          `json:"version"`
	Type    string          `json:"type"`
	At      time.Time       `json:"at"`
	RunID   string          `json:"run_id"`
	Data    json.RawMessage `json:"data"`
}

var outcomes = map[string]bool{"RunCompleted": true, "RunFailed": true, "RunDropped": true, "RunForcedEnd": true}

// check applies the invariants to one task's audit log.
func check(rep *Report, id string, evs []auditEvent, cfg Config) {
	type run struct {
		enqueued, started, ended int
		firstAttempt             bool
	}
	runs := map[string]*run{}
	get := func(rid string) *run {
		r := runs[rid]
		if r == nil {
			r = &run{}
			runs[rid] = r
		}
		return r
	}
	var lastStart time.Time
	for i, e := range evs {
		rep.Events++
		if e.Version != uint64(i) {
			rep.Violations = append(rep.Violations, fmt.Sprintf("task %s: event %d has version %d", id, i, e.Version))
		}
		if e.RunID == "" {
			continue
		}
		r := get(e.RunID)
		switch {
		case e.Type == "RunEnqueued":
			r.enqueued++
			rep.RunsEnqueued++
			var body struct {
				Attempt int    `json:"attempt"`
				Trigger string `json:"trigger"`
			}
			_ = json.Unmarshal(e.Data, &body)
			r.firstAttempt = body.Attempt <= 1 && body.Trigger == ""
		case e.Type == "RunStarted":
			r.started++
			rep.RunsStarted++
			if r.enqueued == 0 {
				rep.Violations = append(rep.Violations, fmt.Sprintf("task %s: run %s started, never enqueued", id, e.RunID))
			}
			if r.started > 1 {
				rep.Violations = append(rep.Violations, fmt.Sprintf("task %s: run %s started twice", id, e.RunID))
			}
			if r.firstAttempt {
				if !lastStart.IsZero() && e.At.Sub(lastStart) < cfg.Interval-cfg.Tolerance {
					rep.Violations = append(rep.Violations, fmt.Sprintf("task %s: starts %s apart (at %s), below %s",
						id, e.At.Sub(lastStart), e.At.Format(time.RFC3339Nano), cfg.Interval-cfg.Tolerance))
				}
				lastStart = e.At
			}
		case outcomes[e.Type]:
			r.ended++
			rep.Outcomes[e.Type]++
			if r.enqueued == 0 {
				rep.Violations = append(rep.Violations, fmt.Sprintf("task %s: run %s ended (%s), never enqueued", id, e.RunID, e.Type))
			}
			if r.ended > 1 {
				rep.Violations = append(rep.Violations, fmt.Sprintf("task %s: run %s has %d outcomes", id, e.RunID, r.ended))
			}
		}
	}
	for _, r := range runs {
		if r.enqueued > 1 {
			rep.Violations = append(rep.Violations, fmt.Sprintf("task %s: a run was enqueued %d times", id, r.enqueued))
		}
		if r.enqueued > 0 && r.ended == 0 {
			rep.RunsPending++
		}
	}
}

// daemon is one running cronactor serve.
type daemon struct {
	cmd          *exec.Cmd
	url          string
	healthyAfter time.Duration
	stderr       *bytes.Buffer
	done         chan error
}

var errNotFound = errors.New("not found")

func startDaemon(ctx context.Context, cfg Config) (*daemon, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	d := &daemon{url: "http://" + addr, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	d.cmd = exec.Command(cfg.Binary, "serve", "--data", cfg.Dir, "--listen", addr, "--tick", cfg.Tick.String())
	d.cmd.Stdout = io.Discard
	d.cmd.Stderr = d.stderr
	start := time.Now()
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { d.done <- d.cmd.Wait() }()
	for {
		select {
		case err := <-d.done:
			return nil, fmt.Errorf("daemon exited before it was healthy (%v): %s", err, lastLines(d.stderr.String(), 5))
		case <-ctx.Done():
			d.kill()
			return nil, ctx.Err()
		default:
		}
		if healthy(d.url) {
			d.healthyAfter = time.Since(start)
			return d, nil
		}
		if time.Since(start) > time.Minute {
			d.kill()
			return nil, fmt.Errorf("daemon not healthy after a minute: %s", lastLines(d.stderr.String(), 5))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func healthy(url string) bool {
	resp, err := http.Get(url + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func (d *daemon) kill() {
	_ = d.cmd.Process.Signal(syscall.SIGKILL)
	<-d.done
}

func (d *daemon) stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(time.Minute):
		d.kill()
	}
}

func (d *daemon) createTask(ctx context.Context, name string, cfg Config) (string, error) {
	task := map[string]any{"name": name, "owner": "chaos", "kind": "noop",
		"interval": cfg.Interval.String(), "tolerance": cfg.Tolerance.String()}
	if cfg.sinkURL != "" && cfg.HTTPEvery > 0 && seqOf(name)%cfg.HTTPEvery == 0 {
		task["kind"], task["payload"] = "http", map[string]string{"url": cfg.sinkURL}
	}
	body, _ := json.Marshal(task)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", d.url+"/v1/tasks", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	var t struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &t); err != nil || t.ID == "" {
		return "", fmt.Errorf("no task id in %s", b)
	}
	return t.ID, nil
}

func (d *daemon) taskEvents(ctx context.Context, id string) ([]auditEvent, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", d.url+"/v1/tasks/"+id+"/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, errNotFound
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	var list struct {
		Events []auditEvent `json:"events"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, err
	}
	return list.Events, nil
}

// seqOf is the number at the end of a task name ("t00012" -> 12).
func seqOf(name string) int {
	n := 0
	for _, c := range name {
		if c >= '0' && c <= '9' {
			n = n*10 + int(c-'0')
		}
	}
	return n
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// BuildBinary builds ./cmd/cronactor of the module at root into dir.
func BuildBinary(root, dir string) (string, error) {
	out := filepath.Join(dir, "cronactor")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/cronactor")
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("chaos: build cronactor: %w", err)
	}
	return out, nil
}
