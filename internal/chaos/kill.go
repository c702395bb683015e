package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/events/postgres"
	"github.com/google/uuid"
)

// KillConfig shapes a kill run. Zero fields take the defaults in brackets.
type KillConfig struct {
	// Bin is the cronactor binary; Dir a scratch directory for the data
	// directory and the copy the checker reads.
	Bin, Dir string
	// Kills is how many times the daemon is killed with SIGKILL [100].
	Kills int
	// Seed makes the kill points and the load repeatable [1].
	Seed uint64
	// InitialTasks are created before the first kill [40].
	InitialTasks int
	// CreatesPerLife are created during each life of the daemon [6].
	CreatesPerLife int
	// HTTPRatio of the tasks are http tasks against the sink, the rest noop
	// [0.3].
	HTTPRatio float64
	// A life lasts a random time in [MinLife, MaxLife] after /healthz answers
	// [200ms, 2.5s].
	MinLife, MaxLife time.Duration
	// EarlyRatio of the kills hit before /healthz answers, during recovery
	// [0.1].
	EarlyRatio float64
	// SettleTimeout bounds the wait for every run to have its outcome at the
	// end [2m].
	SettleTimeout time.Duration
	// Workers is passed to serve --workers [8].
	Workers int
	// Postgres, when set, is the URL of an empty PostgreSQL database: the
	// daemon runs on the Postgres store there (serve --store postgres)
	// instead of a data directory, and the checker reads the log from it.
	Postgres string
	// RestartStore, when set, is called once, in the middle life of the
	// daemon while its load runs, to stop the store's server and start it
	// again (the daemon must ride it out). Postgres only.
	RestartStore func() error
	// Progress, if set, gets one line per life.
	Progress io.Writer
}

func (c KillConfig) withDefaults() KillConfig {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.Kills == 0 {
		c.Kills = 100
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.InitialTasks == 0 {
		c.InitialTasks = 40
	}
	if c.CreatesPerLife == 0 {
		c.CreatesPerLife = 6
	}
	if c.HTTPRatio == 0 {
		c.HTTPRatio = 0.3
	}
	def(&c.MinLife, 200*time.Millisecond)
	def(&c.MaxLife, 2500*time.Millisecond)
	if c.EarlyRatio == 0 {
		c.EarlyRatio = 0.1
	}
	def(&c.SettleTimeout, 2*time.Minute)
	if c.Workers == 0 {
		c.Workers = 8
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c
}

// KillReport is what a kill run measured and found.
type KillReport struct {
	Kills, EarlyKills int
	// StoreRestarts counts the restarts of the store's server (Postgres).
	StoreRestarts int
	// Restarts are the times from a start to /healthz answering 200.
	Restarts     []time.Duration
	Creates      int
	CreatesAcked int
	Ops          int
	OpsAcked     int
	SinkCalls    int
	Settle       time.Duration
	Elapsed      time.Duration
	Result       Result
	// FinalExit is the exit status of the graceful stop at the end.
	FinalExit int
}

// load drives the API during one life of the daemon: creates tasks, and
// pauses, resumes or deletes some, recording which calls were answered 2xx.
type load struct {
	cfg    KillConfig
	rnd    *rand.Rand
	sink   *Sink
	ops    map[uuid.UUID][]Op
	live   []uuid.UUID // tasks whose create was acknowledged and not deleted
	status map[uuid.UUID]string
	next   int
	rep    *KillReport
}

func (l *load) create(ctx context.Context, c *Client) {
	n := l.next
	l.next++
	body := map[string]any{
		"name":      fmt.Sprintf("t%05d", n),
		"owner":     fmt.Sprintf("chaos/o%d", n%7),
		"interval":  []string{"1s", "1500ms", "2s"}[l.rnd.IntN(3)],
		"tolerance": "200ms",
		"kind":      "noop",
	}
	if l.rnd.Float64() < l.cfg.HTTPRatio {
		body["kind"] = "http"
		body["payload"] = map[string]any{"url": l.sink.URL()}
	}
	b, _ := json.Marshal(body)
	var row Row
	l.rep.Creates++
	status, _, err := c.Do(ctx, http.MethodPost, "/v1/tasks", b, &row)
	// The ID is derived from owner and name, so an unanswered create can
	// be looked for in the log too: ask the daemon on a 2xx only.
	if err != nil || status/100 != 2 {
		return
	}
	id, perr := uuid.Parse(row.ID)
	if perr != nil {
		return
	}
	l.rep.CreatesAcked++
	l.ops[id] = append(l.ops[id], Op{Status: StatusActive, Acked: true})
	l.live = append(l.live, id)
	l.status[id] = StatusActive
}

func (l *load) change(ctx context.Context, c *Client) {
	if len(l.live) == 0 {
		return
	}
	i := l.rnd.IntN(len(l.live))
	id := l.live[i]
	var path, method, to string
	switch {
	case l.rnd.IntN(10) == 0:
		method, path, to = http.MethodDelete, "/v1/tasks/"+id.String(), StatusDeleted
	case l.status[id] == StatusPaused:
		method, path, to = http.MethodPost, "/v1/tasks/"+id.String()+"/resume", StatusActive
	default:
		method, path, to = http.MethodPost, "/v1/tasks/"+id.String()+"/pause", StatusPaused
	}
	l.rep.Ops++
	status, _, err := c.Do(ctx, method, path, nil, nil)
	acked := err == nil && status/100 == 2
	l.ops[id] = append(l.ops[id], Op{Status: to, Acked: acked})
	if acked {
		l.rep.OpsAcked++
		l.status[id] = to
		if to == StatusDeleted {
			l.live = append(l.live[:i], l.live[i+1:]...)
		}
	}
}

// Kill runs the kill loop, lets the daemon settle, stops it gracefully and
// checks the log.
func Kill(ctx context.Context, cfg KillConfig) (*KillReport, error) {
	cfg = cfg.withDefaults()
	start := time.Now()
	rnd := rand.New(rand.NewPCG(cfg.Seed, 0xc4a05))
	sink, err := StartSink(SinkConfig{SleepMin: 5 * time.Millisecond, SleepMax: 60 * time.Millisecond,
		SlowRatio: 0.02, Slow: 1500 * time.Millisecond, FailRatio: 0.05, Seed: cfg.Seed})
	if err != nil {
		return nil, err
	}
	defer sink.Close()
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	data := filepath.Join(cfg.Dir, "data")
	rep := &KillReport{}
	l := &load{cfg: cfg, rnd: rand.New(rand.NewPCG(cfg.Seed, 0x10ad)), sink: sink, ops: map[uuid.UUID][]Op{}, status: map[uuid.UUID]string{}, rep: rep}
	daemon := func() Daemon {
		tick := []time.Duration{100 * time.Millisecond, 150 * time.Millisecond, 200 * time.Millisecond}[rnd.IntN(3)]
		args := []string{"--workers", fmt.Sprint(cfg.Workers)}
		if cfg.Postgres != "" {
			args = append(args, "--store", "postgres", "--postgres", cfg.Postgres)
		}
		return Daemon{Bin: cfg.Bin, Data: data, Addr: addr, Tick: tick, Args: args}
	}
	client := NewClient("http://"+addr, 5*time.Second)

	for life := 0; rep.Kills < cfg.Kills; life++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d := daemon()
		p, err := d.Start()
		if err != nil {
			return nil, err
		}
		if life > 0 && rnd.Float64() < cfg.EarlyRatio {
			// Kill during recovery, before it serves.
			time.Sleep(time.Duration(rnd.Int64N(int64(300 * time.Millisecond))))
			p.Kill()
			rep.Kills++
			rep.EarlyKills++
			fmt.Fprintf(cfg.Progress, "life %d: killed during start-up\n", life)
			continue
		}
		hctx, cancel := context.WithTimeout(ctx, time.Minute)
		took, err := p.WaitHealthy(hctx, d.URL())
		cancel()
		if err != nil {
			p.Kill()
			return nil, fmt.Errorf("life %d: %w", life, err)
		}
		rep.Restarts = append(rep.Restarts, took)
		if life == 0 {
			for i := 0; i < cfg.InitialTasks && ctx.Err() == nil; i++ {
				l.create(ctx, client)
			}
		}
		creates, changes := cfg.CreatesPerLife, 2
		// The load runs until the kill; the call in flight then is
		// unanswered.
		lifeEnd := time.Now().Add(cfg.MinLife + time.Duration(rnd.Int64N(int64(cfg.MaxLife-cfg.MinLife)+1)))
		pause := time.Duration(10+rnd.IntN(40)) * time.Millisecond
		lctx, stopLoad := context.WithCancel(ctx)
		loadDone := make(chan struct{})
		go func() {
			defer close(loadDone)
			for i := 0; lctx.Err() == nil; i++ {
				switch {
				case creates > 0:
					creates--
					l.create(lctx, client)
				case changes > 0 && i%8 == 0:
					changes--
					l.change(lctx, client)
				}
				select {
				case <-lctx.Done():
				case <-time.After(pause):
				}
			}
		}()
		if cfg.RestartStore != nil && life == cfg.Kills/2 {
			if err := cfg.RestartStore(); err != nil {
				p.Kill()
				stopLoad()
				<-loadDone
				return nil, fmt.Errorf("life %d: restart the store: %w", life, err)
			}
			rep.StoreRestarts++
			fmt.Fprintf(cfg.Progress, "life %d: the store's server restarted\n", life)
		}
		time.Sleep(time.Until(lifeEnd))
		p.Kill()
		stopLoad()
		<-loadDone
		rep.Kills++
		fmt.Fprintf(cfg.Progress, "life %d: healthy after %s, killed; %d tasks acknowledged\n", life, took.Round(time.Millisecond), rep.CreatesAcked)
	}

	// The last life: let every open run end, then stop gracefully.
	d := daemon()
	p, err := d.Start()
	if err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, time.Minute)
	took, err := p.WaitHealthy(hctx, d.URL())
	cancel()
	if err != nil {
		p.Kill()
		return nil, err
	}
	rep.Restarts = append(rep.Restarts, took)
	if cfg.Postgres != "" {
		// The view is rebuilt in memory at start: task queries answer 503
		// until it is ready.
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := waitReady(rctx, d.URL())
		cancel()
		if err != nil {
			p.Kill()
			return nil, fmt.Errorf("the last life: %w\n%s", err, p.Logs.Tail(20))
		}
	}
	statusAt, err := settle(ctx, client, cfg.SettleTimeout, rep)
	if err != nil {
		p.Kill()
		return nil, fmt.Errorf("settle: %w\n%s", err, p.Logs.Tail(20))
	}
	_ = p.Signal(syscall.SIGTERM)
	code, ok := p.Wait(time.Minute)
	if !ok {
		p.Kill()
		return nil, fmt.Errorf("the daemon did not stop within a minute of SIGTERM:\n%s", p.Logs.Tail(20))
	}
	rep.FinalExit = code
	var log []events.Recorded
	if cfg.Postgres != "" {
		log, err = readPostgresLog(ctx, cfg.Postgres)
	} else {
		log, err = ReadLogCopy(ctx, data, filepath.Join(cfg.Dir, "copy"))
	}
	if err != nil {
		return nil, err
	}
	seen := sink.Seen()
	for _, n := range seen {
		rep.SinkCalls += n
	}
	rep.Result = Check(Input{Log: log, Ops: l.ops, Sink: seen, Settled: true, StatusAt: statusAt})
	if code != 0 {
		rep.Result.Violations = append(rep.Result.Violations, Violation{InvFault, fmt.Sprintf("the final SIGTERM exited %d, want 0", code)})
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// settle records the log position the load's calls reached, pauses every
// task so nothing new is enqueued, and waits until no run is pending.
func settle(ctx context.Context, c *Client, timeout time.Duration, rep *KillReport) (events.Position, error) {
	begin := time.Now()
	rows, err := c.ListAll(ctx)
	if err != nil {
		return events.Start, err
	}
	var at events.Position
	for _, r := range rows {
		if p, err := events.ParsePosition(r.Position); err == nil && at.Less(p) {
			at = p
		}
	}
	for _, r := range rows {
		if r.Status != StatusActive {
			continue
		}
		status, b, err := c.Do(ctx, http.MethodPost, "/v1/tasks/"+r.ID+"/pause", nil, nil)
		if err != nil || status/100 != 2 {
			return at, fmt.Errorf("pause %s: %d %s %v", r.ID, status, b, err)
		}
	}
	end := time.Now().Add(timeout)
	for {
		rows, err := c.ListAll(ctx)
		if err != nil {
			return at, err
		}
		var pending int64
		for _, r := range rows {
			pending += r.Pending
		}
		if pending == 0 {
			rep.Settle = time.Since(begin)
			return at, nil
		}
		if time.Now().After(end) {
			rep.Settle = time.Since(begin)
			return at, nil // the checker reports the open runs
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// ReadLogCopy copies the data directory dir (the daemon stopped) to scratch
// and reads the whole global log from the copy, so the directory under test
// is never opened by anything but the daemon.
func ReadLogCopy(ctx context.Context, dir, scratch string) ([]events.Recorded, error) {
	if err := os.RemoveAll(scratch); err != nil {
		return nil, err
	}
	if err := copyDir(dir, scratch); err != nil {
		return nil, fmt.Errorf("chaos: copy the data directory: %w", err)
	}
	s, err := embedded.Open(scratch, embedded.Options{})
	if err != nil {
		return nil, fmt.Errorf("chaos: open the copy of the store: %w", err)
	}
	defer s.Close()
	return readLog(ctx, s)
}

// readPostgresLog reads the whole global log of the Postgres store at url.
func readPostgresLog(ctx context.Context, url string) ([]events.Recorded, error) {
	s, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		return nil, fmt.Errorf("chaos: open the Postgres store: %w", err)
	}
	defer s.Close()
	return readLog(ctx, s)
}

// readLog reads the whole global log of s, a page at a time.
func readLog(ctx context.Context, s events.Store) ([]events.Recorded, error) {
	var out []events.Recorded
	after := events.Start
	for {
		page, err := s.ReadAll(ctx, after, 10000)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			return out, nil
		}
		out = append(out, page...)
		after = page[len(page)-1].Position
	}
}

// waitReady polls /healthz until its status is "ok" (the view ready).
func waitReady(ctx context.Context, url string) error {
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/healthz", nil)
		if resp, err := client.Do(req); err == nil {
			var body struct{ Status string }
			derr := json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if derr == nil && body.Status == "ok" {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("chaos: daemon not ready (/healthz status ok): %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// Median returns the median of ds (0 when empty).
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// Max returns the largest of ds.
func Max(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}
