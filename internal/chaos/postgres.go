package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The Postgres mode of the fault cases and the fuzzer: the daemon runs with
// --store postgres on a schema of its own in the database the harness was
// given (CREATE SCHEMA, then search_path in the URL), so each case starts
// from an empty log without needing the right to create databases.

// pgSchemaURL creates a fresh schema in the database at base and returns
// base with search_path set to it.
func pgSchemaURL(ctx context.Context, base, name string) (string, error) {
	schema := fmt.Sprintf("chaos_%s_%s", strings.ReplaceAll(name, "-", "_"), strings.ReplaceAll(uuid.NewString()[:8], "-", ""))
	if err := pgExec(ctx, base, "CREATE SCHEMA "+schema); err != nil {
		return "", fmt.Errorf("chaos: create schema %s: %w", schema, err)
	}
	u, err := url.Parse(base)
	if err != nil || u.Scheme == "" {
		return base + " search_path=" + schema, nil // a key=value string
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func pgExec(ctx context.Context, connURL, sql string, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, connURL)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	_, err = c.Exec(ctx, sql, args...)
	return err
}

// pgTerminate ends every connection to the database of connURL but its own
// (pg_terminate_backend: the role needs pg_signal_backend or to be a
// superuser) and returns how many it ended.
func pgTerminate(ctx context.Context, connURL string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, connURL)
	if err != nil {
		return 0, err
	}
	defer c.Close(context.Background())
	var n int
	err = c.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()) AS t`).Scan(&n)
	return n, err
}

// isPostgres says whether dm runs on the Postgres store.
func (d Daemon) isPostgres() bool {
	for i := 0; i+1 < len(d.Args); i++ {
		if d.Args[i] == "--store" && d.Args[i+1] == "postgres" {
			return true
		}
	}
	return false
}

// health is one answer of /healthz: its code, status and store condition.
type health struct {
	code      int
	status    string
	condition string
	err       error
}

func getHealth(ctx context.Context, base string) health {
	client := &http.Client{Timeout: 5 * time.Second}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
	resp, err := client.Do(req)
	if err != nil {
		return health{err: err}
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Store  struct {
			Condition string `json:"condition"`
		} `json:"store"`
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	return health{code: resp.StatusCode, status: body.Status, condition: body.Store.Condition, err: err}
}

// waitHealth polls /healthz until want says yes (every 50 ms, for at most
// limit) and returns how long it took.
func waitHealth(ctx context.Context, base string, limit time.Duration, want func(health) bool) (time.Duration, health, bool) {
	start := time.Now()
	for {
		h := getHealth(ctx, base)
		if want(h) {
			return time.Since(start), h, true
		}
		if time.Since(start) > limit || ctx.Err() != nil {
			return time.Since(start), h, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pgOutage stops the Postgres server under a daemon with due tasks, keeps
// it down, and starts it again.
func pgOutage(ctx context.Context, f *faultEnv) FaultResult {
	if f.cfg.PostgresStop == nil || f.cfg.PostgresStart == nil {
		return FaultResult{Status: FaultSkipped, Detail: "needs a way to stop and start the Postgres server (-postgres-stop and -postgres-start commands)"}
	}
	sink, err := StartSink(SinkConfig{SleepMin: 5 * time.Millisecond, SleepMax: 50 * time.Millisecond, Seed: 5})
	if err != nil {
		return fail("%v", err)
	}
	defer sink.Close()
	dm, p, c, err := f.serve(ctx, filepath.Join(f.dir, "data"))
	if err != nil {
		return fail("%v", err)
	}
	defer p.Kill()
	l := newLoad(sink, 34)
	for range 20 {
		l.create(ctx, c)
	}
	time.Sleep(1500 * time.Millisecond) // runs go on
	var notes, problems []string
	if err := f.cfg.PostgresStop(); err != nil {
		return fail("stop the Postgres server: %v", err)
	}
	stopped := true
	defer func() {
		if stopped {
			_ = f.cfg.PostgresStart()
		}
	}()
	took, h, ok := waitHealth(ctx, dm.URL(), 15*time.Second, func(h health) bool {
		return h.code == http.StatusServiceUnavailable && h.status == "failing" && h.condition == "unreachable"
	})
	if !ok {
		problems = append(problems, fmt.Sprintf("/healthz did not say 503 failing unreachable within 15s of the stop (last: %d %q %q %v)", h.code, h.status, h.condition, h.err))
	} else {
		notes = append(notes, fmt.Sprintf("/healthz 503 unreachable %s after the stop", took.Round(10*time.Millisecond)))
	}
	// Writes fail with a JSON error, reads of the view go on.
	body, _ := json.Marshal(map[string]any{"name": "while-down", "owner": "chaos/faults", "kind": "noop", "interval": "1s"})
	status, b, err := c.Do(ctx, http.MethodPost, "/v1/tasks", body, nil)
	switch {
	case err != nil:
		problems = append(problems, fmt.Sprintf("a create while Postgres is down got no answer: %v", err))
	case status != http.StatusServiceUnavailable || !json.Valid(b):
		problems = append(problems, fmt.Sprintf("a create while Postgres is down: %d %s, want 503 with a JSON error", status, firstLines(string(b), 1)))
	default:
		notes = append(notes, "creates meanwhile 503")
	}
	if status, _, err := c.Do(ctx, http.MethodGet, "/v1/tasks?limit=5", nil, nil); err != nil || status != http.StatusOK {
		problems = append(problems, fmt.Sprintf("list while Postgres is down: %d %v, want 200 (the view is in memory)", status, err))
	}
	time.Sleep(2 * time.Second) // due runs meet the outage
	if err := f.cfg.PostgresStart(); err != nil {
		return fail("start the Postgres server: %v", err)
	}
	stopped = false
	took, h, ok = waitHealth(ctx, dm.URL(), 15*time.Second, func(h health) bool { return h.code == http.StatusOK })
	if !ok {
		problems = append(problems, fmt.Sprintf("/healthz not 200 within 15s of the start (last: %d %q %q %v)", h.code, h.status, h.condition, h.err))
	} else {
		notes = append(notes, fmt.Sprintf("200 again %s after the start", took.Round(10*time.Millisecond)))
	}
	back := false
	for end := time.Now().Add(30 * time.Second); !back && time.Now().Before(end) && !exited(p); time.Sleep(100 * time.Millisecond) {
		n := l.rep.CreatesAcked
		l.create(ctx, c)
		back = l.rep.CreatesAcked > n
	}
	if !back {
		problems = append(problems, "creates did not succeed again within 30s of the start")
	}
	if exited(p) {
		problems = append(problems, "the daemon died: "+refusalLines(p.Logs.Tail(10)))
	}
	if len(problems) > 0 {
		return fail("%s", strings.Join(append(problems, notes...), "; "))
	}
	return f.settleAndCheck(ctx, dm, p, c, l, sink, strings.Join(notes, "; "))
}

// pgConnKill ends every connection of the daemon to its database, again and
// again, under load: the daemon must stay up, answer every request, say
// healthy again at once, and lose nothing it acknowledged.
func pgConnKill(ctx context.Context, f *faultEnv) FaultResult {
	sink, err := StartSink(SinkConfig{SleepMin: 5 * time.Millisecond, SleepMax: 50 * time.Millisecond, Seed: 6})
	if err != nil {
		return fail("%v", err)
	}
	defer sink.Close()
	dm, p, c, err := f.serve(ctx, filepath.Join(f.dir, "data"))
	if err != nil {
		return fail("%v", err)
	}
	defer p.Kill()
	l := newLoad(sink, 35)
	for range 20 {
		l.create(ctx, c)
	}
	var problems []string
	killed, unhealthy, failed := 0, 0, 0
	const rounds = 6
	for round := range rounds {
		n, err := pgTerminate(ctx, f.pg)
		if err != nil {
			if strings.Contains(err.Error(), "permission denied") || strings.Contains(err.Error(), "42501") {
				return FaultResult{Status: FaultSkipped, Detail: fmt.Sprintf("the role cannot end other connections (grant it pg_signal_backend): %v", err)}
			}
			return fail("round %d: pg_terminate_backend: %v", round, err)
		}
		killed += n
		// Load right after the kill: the calls meet the broken connections.
		for range 3 {
			acked := l.rep.CreatesAcked
			l.create(ctx, c)
			if l.rep.CreatesAcked == acked {
				failed++
			}
			l.change(ctx, c)
		}
		if h := getHealth(ctx, dm.URL()); h.code != http.StatusOK {
			unhealthy++
		}
		if _, h, ok := waitHealth(ctx, dm.URL(), 5*time.Second, func(h health) bool { return h.code == http.StatusOK }); !ok {
			problems = append(problems, fmt.Sprintf("round %d: /healthz not 200 within 5s of the kill (last: %d %q %q %v)", round, h.code, h.status, h.condition, h.err))
		}
		time.Sleep(500 * time.Millisecond)
		if exited(p) {
			return fail("the daemon died after %d rounds: %s", round+1, refusalLines(p.Logs.Tail(10)))
		}
	}
	if len(problems) > 0 {
		return fail("%s", strings.Join(problems, "; "))
	}
	summary := fmt.Sprintf("%d rounds, %d connections ended; %d creates failed right after a kill; /healthz non-200 right after a kill %d times", rounds, killed, failed, unhealthy)
	return f.settleAndCheck(ctx, dm, p, c, l, sink, summary)
}

// newLoad is a load of tasks for a fault case (30 % http against sink).
func newLoad(sink *Sink, seed uint64) *load {
	return &load{cfg: KillConfig{}.withDefaults(), rnd: rand.New(rand.NewPCG(seed, 0x10ad)), sink: sink,
		ops: map[uuid.UUID][]Op{}, status: map[uuid.UUID]string{}, rep: &KillReport{}}
}

// settleAndCheck lets every run end, stops the daemon with SIGTERM and
// checks the log against what the load was told.
func (f *faultEnv) settleAndCheck(ctx context.Context, dm Daemon, p *Proc, c *Client, l *load, sink *Sink, summary string) FaultResult {
	statusAt, err := settle(ctx, c, time.Minute, l.rep)
	if err != nil {
		return fail("%s; settle: %v", summary, err)
	}
	_ = p.Signal(syscall.SIGTERM)
	code, ok := p.Wait(time.Minute)
	if !ok {
		return fail("%s; still running a minute after SIGTERM", summary)
	}
	log, err := f.readLog(ctx, filepath.Join(f.dir, "data"))
	if err != nil {
		return fail("%s; read the log: %v", summary, err)
	}
	res := Check(Input{Log: log, Ops: l.ops, Sink: sink.Seen(), Settled: true, StatusAt: statusAt})
	if code != 0 {
		res.Violations = append(res.Violations, Violation{InvFault, fmt.Sprintf("SIGTERM exit status %d, want 0", code)})
	}
	r := verdict(fmt.Sprintf("%s; %d tasks acknowledged, %d runs, %d started, outcomes %v",
		summary, l.rep.CreatesAcked, res.Runs, res.Started, res.Outcomes), res.Violations)
	if len(res.Violations) > 0 {
		// After the violations: the report cuts a long detail. The whole
		// log stays in the case's directory (kept with -dir).
		logPath := filepath.Join(f.dir, "daemon.log")
		_ = os.WriteFile(logPath, []byte(p.Logs.String()), 0o644)
		r.Detail += "; the daemon's log: " + logPath + "; its WARN and ERROR lines: " + problemLines(p.Logs.String(), 12)
	}
	return r
}

// readLog reads the whole log of the case's store: the Postgres schema, or
// a copy of the data directory data.
func (f *faultEnv) readLog(ctx context.Context, data string) ([]events.Recorded, error) {
	if f.pg != "" {
		return readPostgresLog(ctx, f.pg)
	}
	return ReadLogCopy(ctx, data, filepath.Join(f.dir, "copy"))
}

// problemLines keeps the first n WARN and ERROR lines of a daemon's log.
func problemLines(log string, n int) string {
	var keep []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
			keep = append(keep, strings.TrimSpace(l))
		}
	}
	return firstLines(strings.Join(keep, "\n"), n)
}
