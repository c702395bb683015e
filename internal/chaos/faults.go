package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/cronactor/cronactor/events"
)

// FaultConfig shapes the fault cases.
type FaultConfig struct {
	// Bin is the cronactor binary; Dir a scratch directory.
	Bin, Dir string
	// Only, if set, runs the cases with these names.
	Only []string
	// Postgres, when set, is the URL of a PostgreSQL database: each case
	// runs the daemon on the Postgres store in a fresh schema of it
	// (CREATE SCHEMA: the role needs CREATE on the database), the cases of
	// a local disk are skipped, and the Postgres cases run.
	Postgres string
	// PostgresStop and PostgresStart stop the Postgres server (as a crash
	// would, or as an operator) and start it again; pg_outage needs them
	// and is skipped without.
	PostgresStop, PostgresStart func() error
}

// FaultStatus is how a fault case ended.
type FaultStatus string

// Fault case statuses.
const (
	FaultPassed  FaultStatus = "pass"
	FaultFailed  FaultStatus = "FAIL"
	FaultSkipped FaultStatus = "skip"
)

// FaultResult is one fault case's verdict, with what was seen.
type FaultResult struct {
	Name   string
	Status FaultStatus
	Detail string
	// Violations are the log invariants the case found broken, if it
	// checked the log (also in Detail).
	Violations []Violation
}

// FaultCase is one repeatable fault script.
type FaultCase struct {
	Name string
	// Expect says in words what the daemon must do.
	Expect string
	Run    func(ctx context.Context, f *faultEnv) FaultResult
	// Store is the store the case needs: storeDisk (the embedded store's
	// data directory), storePostgres, or "" (either).
	Store string
}

// Values of FaultCase.Store.
const (
	storeDisk     = "disk"
	storePostgres = "postgres"
)

// FaultCases lists the fault scripts in the order they run.
var FaultCases = []FaultCase{
	{"wal_damage", "a WAL damaged in the middle of a killed data dir: the start refuses, naming the file and offset, suggests no destructive step, and changes no file", walDamage, storeDisk},
	{"missing_current", "events/CURRENT removed: two starts both refuse naming CURRENT, without a panic, and change no file", missingCurrent, storeDisk},
	{"disk_full", "a full tmpfs: creates fail with a JSON error (no crash), reads work, writes come back with space; a start on a full disk refuses without a panic and serves once space returns", diskFull, storeDisk},
	{"graceful_stop", "SIGTERM under load: exit status 0 after the running runs end; no run starts after the stop began; none is found lost after restart; every run has one outcome", gracefulStop, ""},
	{"double_signal", "a second SIGTERM during the drain exits at once, while a run is still held; after restart that run ends as process_lost", doubleSignal, ""},
	{"pg_outage", "the Postgres server stopped under load: /healthz 503 failing/unreachable within 15s, creates 503 with a JSON error, lists 200; started again: /healthz 200 within 15s, creates succeed, nothing acknowledged lost, no run twice, every run one outcome", pgOutage, storePostgres},
	{"pg_conn_kill", "every connection of the daemon ended with pg_terminate_backend, 6 times under load: the daemon stays up, /healthz 200 again within 5s of each, nothing acknowledged lost, no run twice, every run one outcome", pgConnKill, storePostgres},
}

type faultEnv struct {
	cfg FaultConfig
	dir string
	pg  string // the case's Postgres URL (its own schema), or ""
}

func (f *faultEnv) daemon(data string, args ...string) (Daemon, error) {
	addr, err := FreeAddr()
	if err != nil {
		return Daemon{}, err
	}
	if f.pg != "" {
		args = append(append([]string(nil), args...), "--store", "postgres", "--postgres", f.pg)
	}
	return Daemon{Bin: f.cfg.Bin, Data: data, Addr: addr, Tick: 100 * time.Millisecond, Args: args}, nil
}

// serve starts the daemon on data with args and waits until it serves; the
// caller kills p.
func (f *faultEnv) serve(ctx context.Context, data string, args ...string) (dm Daemon, p *Proc, c *Client, err error) {
	if dm, err = f.daemon(data, args...); err != nil {
		return Daemon{}, nil, nil, err
	}
	if p, err = startHealthy(ctx, dm); err != nil {
		return Daemon{}, nil, nil, err
	}
	return dm, p, NewClient(dm.URL(), 10*time.Second), nil
}

// startHealthy starts dm and waits until it serves; the caller kills the
// process.
func startHealthy(ctx context.Context, dm Daemon) (*Proc, error) {
	p, err := dm.Start()
	if err != nil {
		return nil, err
	}
	if _, err := p.WaitHealthy(ctx, dm.URL()); err != nil {
		p.Kill()
		return nil, err
	}
	if dm.isPostgres() {
		// The view is rebuilt in memory at start: task queries answer
		// 503 until it is ready.
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := waitReady(rctx, dm.URL()); err != nil {
			p.Kill()
			return nil, err
		}
	}
	return p, nil
}

// restartSettled starts dm again and waits until it serves and every run
// has an outcome (within timeout); the caller kills the process.
func restartSettled(ctx context.Context, dm Daemon, c *Client, timeout time.Duration) (*Proc, error) {
	p, err := startHealthy(ctx, dm)
	if err != nil {
		return nil, fmt.Errorf("restart: %w", err)
	}
	var rep KillReport
	if _, err := settle(ctx, c, timeout, &rep); err != nil {
		p.Kill()
		return nil, fmt.Errorf("settle: %w", err)
	}
	return p, nil
}

// verdict passes with summary when vs is empty, else fails with summary and
// the violations.
func verdict(summary string, vs []Violation) FaultResult {
	if len(vs) > 0 {
		var b strings.Builder
		WriteViolations(&b, nil, vs)
		r := fail("%s; %s", summary, b.String())
		r.Violations = vs
		return r
	}
	return pass("%s", summary)
}

// Faults runs the fault cases.
func Faults(ctx context.Context, cfg FaultConfig) []FaultResult {
	var out []FaultResult
	for i, c := range FaultCases {
		if len(cfg.Only) > 0 && !contains(cfg.Only, c.Name) {
			continue
		}
		switch {
		case cfg.Postgres != "" && c.Store == storeDisk:
			out = append(out, FaultResult{Name: c.Name, Status: FaultSkipped, Detail: "local disk only: on Postgres the daemon keeps no data directory (the server's disk is the server's to watch)"})
			continue
		case cfg.Postgres == "" && c.Store == storePostgres:
			out = append(out, FaultResult{Name: c.Name, Status: FaultSkipped, Detail: "Postgres only: run with -postgres URL"})
			continue
		}
		dir := filepath.Join(cfg.Dir, fmt.Sprintf("%02d-%s", i, c.Name))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			out = append(out, FaultResult{Name: c.Name, Status: FaultFailed, Detail: err.Error()})
			continue
		}
		env := &faultEnv{cfg: cfg, dir: dir}
		if cfg.Postgres != "" {
			pg, err := pgSchemaURL(ctx, cfg.Postgres, c.Name)
			if err != nil {
				out = append(out, FaultResult{Name: c.Name, Status: FaultFailed, Detail: err.Error()})
				continue
			}
			env.pg = pg
		}
		r := c.Run(ctx, env)
		r.Name = c.Name
		out = append(out, r)
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// WriteFaults prints the fault cases' table.
func WriteFaults(w io.Writer, rs []FaultResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "fault case\tresult")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\n", r.Name, r.Status)
	}
	tw.Flush()
	for _, r := range rs {
		if r.Detail != "" {
			fmt.Fprintf(w, "  %s: %s\n", r.Name, oneLine(r.Detail))
		}
	}
}

func pass(format string, args ...any) FaultResult {
	return FaultResult{Status: FaultPassed, Detail: fmt.Sprintf(format, args...)}
}

func fail(format string, args ...any) FaultResult {
	return FaultResult{Status: FaultFailed, Detail: fmt.Sprintf(format, args...)}
}

// loadAndKill starts the daemon on data, creates n noop tasks, lets it run
// for d and kills it with SIGKILL.
func (f *faultEnv) loadAndKill(ctx context.Context, data string, n int, d time.Duration) error {
	_, p, c, err := f.serve(ctx, data)
	if err != nil {
		return err
	}
	defer p.Kill()
	if err := createTasks(ctx, c, "f", n, "noop", nil, "1s"); err != nil {
		return err
	}
	time.Sleep(d)
	return nil
}

// createTasks creates n tasks from 4 goroutines.
// extra are more fields of the body, as name, value pairs.
func createTasks(ctx context.Context, c *Client, prefix string, n int, kind string, payload any, interval string, extra ...string) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	next := make(chan int)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fields := map[string]any{"name": fmt.Sprintf("%s%05d", prefix, i), "owner": "chaos/faults",
					"kind": kind, "payload": payload, "interval": interval, "tolerance": "100ms"}
				for j := 0; j+1 < len(extra); j += 2 {
					fields[extra[j]] = extra[j+1]
				}
				body, _ := json.Marshal(fields)
				status, b, err := c.Do(ctx, http.MethodPost, "/v1/tasks", body, nil)
				if err == nil && status/100 != 2 {
					err = fmt.Errorf("create: %d %s", status, b)
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}

// startOutcome is how one start of the daemon on a faulty directory went.
type startOutcome struct {
	served bool   // /healthz answered
	exit   int    // exit status when it did not serve
	output string // its output
}

// tryStart starts the daemon and waits until it serves (then stops it with
// SIGTERM) or exits.
func (f *faultEnv) tryStart(ctx context.Context, data string, args ...string) (startOutcome, error) {
	dm, err := f.daemon(data, args...)
	if err != nil {
		return startOutcome{}, err
	}
	p, err := dm.Start()
	if err != nil {
		return startOutcome{}, err
	}
	hctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := p.WaitHealthy(hctx, dm.URL()); err != nil {
		select {
		case <-p.Done():
			code, _ := p.Wait(0)
			return startOutcome{exit: code, output: p.Logs.String()}, nil
		default:
			p.Kill()
			return startOutcome{}, fmt.Errorf("neither served nor exited: %w", err)
		}
	}
	_ = p.Signal(syscall.SIGTERM)
	if _, ok := p.Wait(time.Minute); !ok {
		p.Kill()
	}
	return startOutcome{served: true, output: p.Logs.String()}, nil
}

// snapshot maps every file under dir but lock files to its content.
func snapshot(dir string) (map[string][]byte, error) {
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

// changed lists the files deleted, changed or added between two snapshots.
func changed(before, after map[string][]byte) []string {
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

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, " | ")
}

// refusalLines keeps the lines of a refused start that say why.
func refusalLines(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "level=INFO") || strings.TrimSpace(l) == "" {
			continue
		}
		keep = append(keep, strings.TrimSpace(l))
	}
	return firstLines(strings.Join(keep, "\n"), 4)
}

func walDamage(ctx context.Context, f *faultEnv) FaultResult {
	data := filepath.Join(f.dir, "data")
	if err := f.loadAndKill(ctx, data, 300, 1500*time.Millisecond); err != nil {
		return fail("load: %v", err)
	}
	wals, _ := filepath.Glob(filepath.Join(data, "events", "*.log"))
	if len(wals) == 0 {
		return fail("no write-ahead log in %s/events", data)
	}
	sort.Strings(wals)
	wal := wals[len(wals)-1]
	b, err := os.ReadFile(wal)
	if err != nil {
		return fail("%v", err)
	}
	off := len(b) / 10
	for i := off; i < off+64 && i < len(b); i++ {
		b[i] ^= 0xff
	}
	if err := os.WriteFile(wal, b, 0o644); err != nil {
		return fail("%v", err)
	}
	before, _ := snapshot(data)
	got, err := f.tryStart(ctx, data)
	if err != nil {
		return fail("%v", err)
	}
	after, _ := snapshot(data)
	where := fmt.Sprintf("64 bytes flipped at offset %d of %s (%d bytes)", off, filepath.Base(wal), len(b))
	var problems []string
	if got.served {
		problems = append(problems, "the daemon started and served on the damaged log (acknowledged events after the damage are silently gone)")
	} else {
		out := got.output
		if !strings.Contains(out, filepath.Base(wal)) || !regexp.MustCompile(`(?i)offset`).MatchString(out) {
			problems = append(problems, "the refusal names neither the file nor the offset")
		}
		if strings.Contains(out, "projections rebuild") || strings.Contains(out, "panic") {
			problems = append(problems, "the refusal suggests a rebuild or panics")
		}
	}
	if ch := changed(before, after); len(ch) > 0 {
		problems = append(problems, fmt.Sprintf("the start changed files: %v", ch))
	}
	if len(problems) > 0 {
		return fail("%s: %s; output: %s", where, strings.Join(problems, "; "), refusalLines(got.output))
	}
	refusal := refusalLines(got.output)
	// The operator accepts the loss on purpose, then rebuilds the view
	// (now ahead of the log) on purpose: the daemon serves again.
	got, err = f.tryStart(ctx, data, "--accept-data-loss")
	if err != nil {
		return fail("%s: serve --accept-data-loss: %v", where, err)
	}
	if !got.served && !strings.Contains(got.output, "ahead of the event log") {
		return fail("%s: serve --accept-data-loss neither served nor named the view ahead of the log: %s", where, refusalLines(got.output))
	}
	if reports, _ := filepath.Glob(filepath.Join(data, "DATA_LOSS-*.json")); len(reports) != 1 {
		return fail("%s: %d DATA_LOSS reports after --accept-data-loss, want 1", where, len(reports))
	}
	if out, err := exec.CommandContext(ctx, f.cfg.Bin, "projections", "rebuild", "--data", data).CombinedOutput(); err != nil {
		return fail("%s: projections rebuild after the accepted loss: %v: %s", where, err, firstLines(string(out), 3))
	}
	if got, err = f.tryStart(ctx, data); err != nil || !got.served {
		return fail("%s: serve after the accepted loss and the rebuild: %v %s", where, err, refusalLines(got.output))
	}
	return pass("%s: refused, nothing changed: %s; --accept-data-loss wrote one DATA_LOSS report, and after projections rebuild it serves", where, refusal)
}

func missingCurrent(ctx context.Context, f *faultEnv) FaultResult {
	data := filepath.Join(f.dir, "data")
	if err := f.loadAndKill(ctx, data, 50, 500*time.Millisecond); err != nil {
		return fail("load: %v", err)
	}
	if err := os.Remove(filepath.Join(data, "events", "CURRENT")); err != nil {
		return fail("%v", err)
	}
	before, _ := snapshot(data)
	var seen []string
	for i := 1; i <= 2; i++ {
		got, err := f.tryStart(ctx, data)
		if err != nil {
			return fail("start %d: %v", i, err)
		}
		after, _ := snapshot(data)
		var problems []string
		switch {
		case got.served:
			problems = append(problems, "it started and served (a silent reset)")
		case strings.Contains(got.output, "panic"):
			problems = append(problems, "it panicked")
		case !strings.Contains(got.output, "CURRENT"):
			problems = append(problems, "the refusal does not name CURRENT")
		}
		if ch := changed(before, after); len(ch) > 0 {
			problems = append(problems, fmt.Sprintf("files changed: %v", firstN(ch, 6)))
		}
		if len(problems) > 0 {
			return fail("start %d without events/CURRENT: %s; output: %s", i, strings.Join(problems, "; "), refusalLines(got.output))
		}
		seen = append(seen, refusalLines(got.output))
	}
	return pass("both starts refused, nothing changed: %s", seen[0])
}

func exited(p *Proc) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

func firstN(xs []string, n int) []string {
	if len(xs) > n {
		return append(xs[:n:n], fmt.Sprintf("… %d more", len(xs)-n))
	}
	return xs
}

func diskFull(ctx context.Context, f *faultEnv) FaultResult {
	mnt := filepath.Join(f.dir, "tmpfs")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return fail("%v", err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=128m", "tmpfs", mnt).CombinedOutput(); err != nil {
		return FaultResult{Status: FaultSkipped, Detail: fmt.Sprintf("cannot mount a tmpfs here (%v: %s): run as root where mount is permitted", err, strings.TrimSpace(string(out)))}
	}
	defer exec.Command("umount", "-l", mnt).Run()
	data := filepath.Join(mnt, "data")
	fill := filepath.Join(mnt, "fill")
	_, p, c, err := f.serve(ctx, data)
	if err != nil {
		return fail("%v", err)
	}
	defer p.Kill()
	if err := createTasks(ctx, c, "d", 20, "noop", nil, "1s"); err != nil {
		return fail("create before filling: %v", err)
	}
	var notes, problems []string
	pad := strings.Repeat("x", 16<<10)
	// Below the store's reserve of free space, then nothing free at all. At
	// 0 the store may still have space it allocated before (a preallocated
	// log): write until an append is refused, with padded payloads.
	for _, leave := range []int64{30 << 20, 0} {
		if exited(p) {
			break
		}
		if err := fillTo(mnt, fill, leave); err != nil {
			return fail("%v", err)
		}
		stage := fmt.Sprintf("%d MiB free", leave>>20)
		refused := false
		for i := 0; i < 2000 && !refused; i++ {
			body, _ := json.Marshal(map[string]any{"name": fmt.Sprintf("full%d-%04d", leave, i), "owner": "chaos/faults", "kind": "noop",
				"interval": "1s", "payload": map[string]string{"pad": pad}})
			status, b, err := c.Do(ctx, http.MethodPost, "/v1/tasks", body, nil)
			switch {
			case err != nil:
				problems = append(problems, fmt.Sprintf("%s: create %d: no answer (%v)", stage, i, err))
				refused = true
			case status/100 == 2:
				continue
			case (status != http.StatusInsufficientStorage && status != http.StatusServiceUnavailable) || !json.Valid(b):
				problems = append(problems, fmt.Sprintf("%s: create %d: %d %s, want 507 or 503 with a JSON error", stage, i, status, firstLines(string(b), 1)))
				refused = true
			default:
				notes = append(notes, fmt.Sprintf("%s: create %d answered %d", stage, i, status))
				refused = true
			}
		}
		if !refused {
			notes = append(notes, stage+": 2000 padded creates all succeeded")
		}
		if status, _, err := c.Do(ctx, http.MethodGet, "/v1/tasks?limit=5", nil, nil); err != nil || status != http.StatusOK {
			problems = append(problems, fmt.Sprintf("%s: list: %d %v, want 200", stage, status, err))
		}
		os.Remove(fill)
		back := false
		for end := time.Now().Add(30 * time.Second); !back && time.Now().Before(end) && !exited(p); time.Sleep(250 * time.Millisecond) {
			status, _, err := c.Do(ctx, http.MethodPost, "/v1/tasks", []byte(fmt.Sprintf(`{"name":"back%d","owner":"chaos/faults","kind":"noop","interval":"1s"}`, leave)), nil)
			back = err == nil && status/100 == 2
		}
		if !back {
			problems = append(problems, stage+": creates did not succeed again within 30s of space returning, without a restart")
		} else {
			notes = append(notes, stage+": writes back without a restart")
		}
	}
	select {
	case <-p.Done():
		problems = append(problems, "the daemon died: "+refusalLines(p.Logs.String()))
	default:
	}
	p.Kill()
	if err := fillTo(mnt, fill, 0); err != nil {
		return fail("%v", err)
	}
	got, err := f.tryStart(ctx, data)
	if err != nil {
		return fail("%v", err)
	}
	switch {
	case strings.Contains(got.output, "panic"):
		problems = append(problems, "a start on a full disk panicked: "+refusalLines(got.output))
	case !got.served && !strings.Contains(got.output, "no space left on device"):
		problems = append(problems, "a start on a full disk refused without saying the disk is full: "+refusalLines(got.output))
	case got.served:
		notes = append(notes, "a start on a full disk served")
	default:
		notes = append(notes, "a start on a full disk refused: "+refusalLines(got.output))
	}
	os.Remove(fill)
	got, err = f.tryStart(ctx, data)
	if err != nil || !got.served {
		problems = append(problems, fmt.Sprintf("a start once space is back did not serve: %v %s", err, refusalLines(got.output)))
	}
	if len(problems) > 0 {
		return fail("%s", strings.Join(append(problems, notes...), "; "))
	}
	return pass("%s", strings.Join(notes, "; "))
}

// stopLine is the daemon's log line when a stop begins.
var stopLine = regexp.MustCompile(`time=(\S+) level=INFO msg="shutting down`)

func gracefulStop(ctx context.Context, f *faultEnv) FaultResult {
	sink, err := StartSink(SinkConfig{SleepMin: 100 * time.Millisecond, SleepMax: 400 * time.Millisecond, Seed: 3})
	if err != nil {
		return fail("%v", err)
	}
	defer sink.Close()
	data := filepath.Join(f.dir, "data")
	dm, p, c, err := f.serve(ctx, data, "--workers", "3")
	if err != nil {
		return fail("%v", err)
	}
	defer p.Kill()
	// More due work than 3 workers can take: runs wait in the queue and
	// some are running when the stop begins.
	if err := createTasks(ctx, c, "h", 30, "http", map[string]string{"url": sink.URL()}, "1s"); err != nil {
		return fail("%v", err)
	}
	if err := createTasks(ctx, c, "n", 30, "noop", nil, "1s"); err != nil {
		return fail("%v", err)
	}
	time.Sleep(2500 * time.Millisecond)
	inFlight := sink.InFlight()
	_ = p.Signal(syscall.SIGTERM)
	code, ok := p.Wait(2 * time.Minute)
	if !ok {
		return fail("still running two minutes after SIGTERM")
	}
	m := stopLine.FindStringSubmatch(p.Logs.String())
	if m == nil {
		return fail("exit %d; no \"shutting down\" line in the log: %s", code, refusalLines(p.Logs.String()))
	}
	stopAt, err := time.Parse(time.RFC3339Nano, m[1])
	if err != nil {
		return fail("stop time %q: %v", m[1], err)
	}
	// Restart, let everything settle, stop, and read the log.
	p2, err := restartSettled(ctx, dm, c, time.Minute)
	if err != nil {
		return fail("%v", err)
	}
	defer p2.Kill()
	restartAt := p2.Started
	_ = p2.Signal(syscall.SIGTERM)
	if _, ok := p2.Wait(time.Minute); !ok {
		return fail("the second life did not stop")
	}
	log, err := f.readLog(ctx, data)
	if err != nil {
		return fail("%v", err)
	}
	res := Check(Input{Log: log, Sink: sink.Seen(), Settled: true})
	res.Violations = append(res.Violations, stopViolations(log, stopAt, restartAt)...)
	if code != 0 {
		res.Violations = append(res.Violations, Violation{InvFault, fmt.Sprintf("SIGTERM exit status %d, want 0", code)})
	}
	return verdict(fmt.Sprintf("exit %d; %d sink calls in flight at SIGTERM; %d runs, %d started, outcomes %v",
		code, inFlight, res.Runs, res.Started, res.Outcomes), res.Violations)
}

// stopViolations finds runs started after a graceful stop began (and before
// the restart), and runs started before it that were found lost afterwards.
func stopViolations(log []events.Recorded, stopAt, restartAt time.Time) []Violation {
	var out []Violation
	startedBefore := map[string]bool{}
	for _, r := range log {
		var b body
		_ = json.Unmarshal(r.Data, &b)
		switch r.Type {
		case "RunStarted":
			if r.At.After(stopAt) && r.At.Before(restartAt) {
				out = append(out, Violation{InvStopStart, fmt.Sprintf("%s run %d started at %s, %s after the stop began",
					r.Stream, b.Run, r.At.Format(time.RFC3339Nano), r.At.Sub(stopAt))})
			}
			if !r.At.After(stopAt) {
				startedBefore[b.RunID.String()] = true
			}
		case "RunForcedEnd":
			if b.Reason == events.ForcedProcessLost && startedBefore[b.RunID.String()] {
				out = append(out, Violation{InvLostOnStop, fmt.Sprintf("%s run %d started before the stop and was found lost after it", r.Stream, b.Run)})
			}
		}
	}
	return out
}

func doubleSignal(ctx context.Context, f *faultEnv) FaultResult {
	sink, err := StartSink(SinkConfig{Hold: true, Seed: 4})
	if err != nil {
		return fail("%v", err)
	}
	defer sink.Close()
	data := filepath.Join(f.dir, "data")
	dm, p, c, err := f.serve(ctx, data, "--drain-timeout", "5m")
	if err != nil {
		return fail("%v", err)
	}
	defer p.Kill()
	// The run starts a second from now and may run 20 s: without the
	// second signal the drain would wait for it until its deadline.
	first := time.Now().Add(time.Second).UTC().Format(time.RFC3339)
	if err := createTasks(ctx, c, "hold", 1, "http", map[string]string{"url": sink.URL()}, "1h", "timebox", "20s", "first_run", first); err != nil {
		return fail("%v", err)
	}
	select {
	case <-sink.Arrived():
	case <-time.After(time.Minute):
		return fail("the http run never reached the sink")
	}
	deadline := sink.Deadline()
	_ = p.Signal(syscall.SIGTERM)
	// The drain waits for the held run: the daemon must still be there.
	if code, exited := p.Wait(time.Second); exited {
		return fail("the first SIGTERM exited (%d) while a run was still running: the drain did not wait", code)
	}
	if sink.InFlight() == 0 {
		return fail("the held run ended before the second SIGTERM")
	}
	_ = p.Signal(syscall.SIGTERM)
	code, exited := p.Wait(time.Minute)
	gone := time.Now()
	if !exited {
		return fail("still running a minute after the second SIGTERM")
	}
	if n := sink.Answered(); n > 0 {
		return fail("exited %d only after the held run was answered", code)
	}
	if !gone.Before(deadline) {
		return fail("exited %d only at the held run's deadline (%s), not at the second SIGTERM", code, deadline.Format(time.RFC3339Nano))
	}
	sink.Release()
	// Restart: the held run must end as process_lost once its deadline
	// passes.
	p2, err := restartSettled(ctx, dm, c, 2*time.Minute)
	if err != nil {
		return fail("%v", err)
	}
	defer p2.Kill()
	_ = p2.Signal(syscall.SIGTERM)
	p2.Wait(time.Minute)
	log, err := f.readLog(ctx, data)
	if err != nil {
		return fail("%v", err)
	}
	res := Check(Input{Log: log, Sink: sink.Seen(), Settled: true})
	summary := fmt.Sprintf("second SIGTERM: exit %d with the run still held, %s before its deadline; after restart: outcomes %v",
		code, deadline.Sub(gone).Round(time.Second), res.Outcomes)
	if res.Outcomes["forced_end/"+events.ForcedProcessLost] == 0 {
		res.Violations = append(res.Violations, Violation{InvFault, "the run held at exit was not recorded as process_lost"})
	}
	return verdict(summary, res.Violations)
}
