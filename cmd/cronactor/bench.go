package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cronactor/cronactor/internal/bench"
	"github.com/google/uuid"
)

// benchCommands holds the benchmarks under `cronactor bench`: flag parsing
// and printing here, the measurements in internal/bench.
var benchCommands = map[string]command{
	"store": {
		summary: "append throughput of the embedded store (or --store postgres) next to the disk's raw limit",
		run:     runBenchStore,
	},
	"projections": {
		summary: "how far the live cron_tasks view trails the log under full append load",
		run:     runBenchProjections,
	},
	"scheduler": {
		summary: "N tasks all due at once: runs/s end to end next to the store's raw append rate (--store postgres: and River's)",
		run:     runBenchScheduler,
	},
	"backlog": {
		summary: "too few workers for N tasks: queue depth, log growth, restart and drain times (R18)",
		run:     runBenchBacklog,
	},
	"lag": {
		summary: "p99 lag beyond the tick with due times arriving at a fraction of the measured peak",
		run:     runBenchLag,
	},
	"history": {
		summary: "one old task of N events: cold load, a history page and explain, next to a young task's",
		run:     runBenchHistory,
	},
	"report": {
		summary: "one table of the --json outputs of bench store, projections, scheduler (embedded and Postgres), lag and history",
		run:     runBenchReport,
	},
}

// restartChildCommand is the hidden command `bench scheduler` runs in a
// fresh process (its own executable) to time the restart of its data.
const restartChildCommand = "bench-restart-child"

// peersBinary is the peer schedulers' program (module internal/benchpeers),
// which make builds next to bin/cronactor.
const peersBinary = "cronactor-benchpeers"

func init() {
	commands["bench"] = command{
		summary: "measure throughput and latency next to a baseline: bench " + strings.Join(benchNames(), "|"),
		subs:    benchNames(),
		run: func(ctx context.Context, env *cliEnv, args []string) error {
			return benchCommands[args[0]].run(ctx, env, args[1:]) // dispatch checked the name
		},
	}
}

func init() {
	commands[restartChildCommand] = command{
		summary: "internal: the fresh process of bench scheduler's restart measurement",
		hidden:  true,
		run:     runBenchRestartChild,
	}
}

func benchNames() []string {
	var names []string
	for n := range benchCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// benchProgress shows a measurement's progress notes on the terminal's
// progress line; without a terminal it is quiet.
func benchProgress(env *cliEnv) bench.Progress {
	return func(format string, args ...any) { env.progress.update(true, strings.TrimSpace(format), args...) }
}

// printJSON prints v as one JSON object on its own line.
// printResult prints a bench's result r, unless err: as one JSON object
// with asJSON, as its text otherwise.
func printResult[R interface{ Text() string }](env *cliEnv, asJSON bool, r R, err error) error {
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(env, r)
	}
	_, err = fmt.Fprintln(env.stdout, r.Text())
	return err
}

func printJSON(env *cliEnv, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(env.stdout, string(b))
	return err
}

func runBenchStore(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "bench store")
	writers := fs.Int("writers", 0, "concurrent writers, one stream each (default: run 1, then 64)")
	duration := fs.Duration("duration", 5*time.Second, "how long each measurement appends")
	dir := fs.String("dir", "", "directory for the measured files (default: a new temporary directory)")
	asJSON := fs.Bool("json", false, "print each result as one JSON object; the last line is the last result")
	storeKind := fs.String("store", "embedded", "store to measure: embedded or postgres")
	pgURL := fs.String("postgres", env.getenv("CRONACTOR_POSTGRES"), "PostgreSQL connection `URL` for --store postgres (default $CRONACTOR_POSTGRES)")
	if err := fs.parse(args); err != nil {
		return err
	}
	switch {
	case *storeKind != "embedded" && *storeKind != "postgres":
		return fmt.Errorf("%w: --store must be embedded or postgres, got %q", errUsage, *storeKind)
	case *storeKind == "postgres" && *pgURL == "":
		return fmt.Errorf("%w: --store postgres needs --postgres URL (or CRONACTOR_POSTGRES)", errUsage)
	case *storeKind == "embedded":
		*pgURL = ""
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	if *writers < 0 || *writers > 10000 {
		return fmt.Errorf("%w: --writers must be between 1 and 10000", errUsage)
	}
	if *duration < 100*time.Millisecond || *duration > time.Hour {
		return fmt.Errorf("%w: --duration must be between 100ms and 1h", errUsage)
	}
	defer env.progress.done()
	cfg := bench.StoreConfig{Writers: *writers, Duration: *duration, Dir: *dir, Postgres: *pgURL, Progress: benchProgress(env)}
	return bench.Store(ctx, cfg, func(r bench.StoreResult) error {
		return printResult(env, *asJSON, r, nil)
	})
}

func runBenchProjections(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "bench projections")
	writers := fs.Int("writers", 64, "concurrent writers, one task each")
	duration := fs.Duration("duration", 5*time.Second, "how long each phase appends")
	dir := fs.String("dir", "", "directory for the measured files (default: a new temporary directory)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	rounds := fs.Int("rounds", 3, "alternating rounds of baseline and measured phase")
	memView := fs.Bool("memory-view", false, "keep the view in memory instead of on disk next to the log")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	if *writers < 1 || *writers > 10000 {
		return fmt.Errorf("%w: --writers must be between 1 and 10000", errUsage)
	}
	if *rounds < 1 || *rounds > 100 {
		return fmt.Errorf("%w: --rounds must be between 1 and 100", errUsage)
	}
	if *duration < 100*time.Millisecond || *duration > time.Hour {
		return fmt.Errorf("%w: --duration must be between 100ms and 1h", errUsage)
	}
	defer env.progress.done()
	r, err := bench.Projections(ctx, bench.ProjectionsConfig{Writers: *writers, Duration: *duration, Rounds: *rounds,
		MemoryView: *memView, Dir: *dir, Progress: benchProgress(env)})
	return printResult(env, *asJSON, r, err)
}

func runBenchScheduler(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "bench scheduler")
	tasks := fs.Int("tasks", 100000, "tasks, all due at once")
	workers := fs.Int("workers", 64, "scheduler workers (and raw-append writers)")
	tick := fs.Duration("tick", bench.DefaultTick, "the scheduler's tick")
	peers := fs.String("peers", "", "the peers' program: a path, or none (default: "+peersBinary+" next to this executable, else on PATH)")
	dir := fs.String("dir", "", "directory for the measured files (default: a new temporary directory)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the wave to `FILE`, and of creating the tasks to FILE.create")
	memProfile := fs.String("memprofile", "", "write Go allocation profiles to `FILE` (end of the wave), FILE.created and FILE.start")
	traceFile := fs.String("trace", "", "write a Go execution trace of the wave to `FILE` (go tool trace)")
	storeKind := fs.String("store", "embedded", "store to measure: embedded or postgres (then River runs among the peers on the same database)")
	pgURL := fs.String("postgres", env.getenv("CRONACTOR_POSTGRES"), "PostgreSQL connection `URL` for --store postgres (default $CRONACTOR_POSTGRES)")
	riverWorkers := fs.Int("river-workers", 1000, "with --store postgres, River is measured with --workers workers and once more with this many (0: not)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	switch {
	case *storeKind != "embedded" && *storeKind != "postgres":
		return fmt.Errorf("%w: --store must be embedded or postgres, got %q", errUsage, *storeKind)
	case *storeKind == "postgres" && *pgURL == "":
		return fmt.Errorf("%w: --store postgres needs --postgres URL (or CRONACTOR_POSTGRES)", errUsage)
	case *storeKind == "embedded":
		*pgURL = ""
	}
	if *tasks < 1 || *tasks > 10_000_000 || *workers < 1 || *workers > 10000 {
		return fmt.Errorf("%w: --tasks must be 1..10000000 and --workers 1..10000", errUsage)
	}
	p, err := findPeers(*peers)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("bench scheduler: this program's path, to restart it: %w", err)
	}
	cfg := bench.SchedulerConfig{Tasks: *tasks, Workers: *workers, Tick: *tick, Dir: *dir, Postgres: *pgURL, RiverWorkers: *riverWorkers, Peers: p,
		Child: restartChild(exe), Profiles: bench.Profiles{CPU: *cpuProfile, Mem: *memProfile, Trace: *traceFile}, Progress: benchProgress(env)}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	defer env.progress.done()
	r, err := bench.Scheduler(ctx, cfg)
	return printResult(env, *asJSON, r, err)
}

// restartChild runs exe's hidden restart command.
func restartChild(exe string) bench.ChildCommand {
	return func(c bench.RestartChildConfig) (string, []string) {
		return exe, []string{restartChildCommand, "--dir", c.Dir, "--probe", c.Probe.String(),
			"--tick", c.Tick.String(), "--workers", strconv.Itoa(c.Workers)}
	}
}

func runBenchRestartChild(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, restartChildCommand)
	dir := fs.String("dir", "", "the data directory to reopen")
	probe := fs.String("probe", "", "the ID of the task the first tick decides about")
	tick := fs.Duration("tick", bench.DefaultTick, "the scheduler's tick")
	workers := fs.Int("workers", 64, "scheduler workers")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	id, err := uuid.Parse(*probe)
	if err != nil {
		return fmt.Errorf("%w: --probe: %v", errUsage, err)
	}
	cfg := bench.RestartChildConfig{Dir: *dir, Probe: id, Tick: *tick, Workers: *workers, RecoveryGC: raiseGCForRecovery}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return bench.RestartChild(ctx, cfg, env.stdout)
}

// findPeers resolves --peers: "none", a path, or (empty) the peers'
// program next to this executable, else on PATH; when that finds nothing
// the peers are not measured and the result says why.
func findPeers(flagValue string) (bench.Peers, error) {
	name := peersBinary
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	switch flagValue {
	case "none":
		return bench.Peers{Note: "--peers none"}, nil
	case "":
		if exe, err := os.Executable(); err == nil {
			p := filepath.Join(filepath.Dir(exe), name)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return bench.Peers{Path: p}, nil
			}
		}
		if p, err := exec.LookPath(name); err == nil {
			return bench.Peers{Path: p}, nil
		}
		return bench.Peers{Note: name + " not found next to this executable or on PATH (make peers builds bin/" + name + ")"}, nil
	}
	if st, err := os.Stat(flagValue); err != nil || st.IsDir() {
		if err == nil {
			err = errors.New("is a directory")
		}
		return bench.Peers{}, fmt.Errorf("%w: --peers %s: %v", errUsage, flagValue, err)
	}
	return bench.Peers{Path: flagValue}, nil
}

func runBenchLag(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "bench lag")
	tasks := fs.Int("tasks", 100000, "tasks in each phase: the peak (all due at once), then the paced one")
	workers := fs.Int("workers", 64, "scheduler workers (and raw-append writers)")
	load := fs.Float64("load", 0.5, "the fraction of the measured peak the paced phase drives: more than 0, at most 1")
	rate := fs.Float64("rate", 0, "the paced phase's rate of due times, runs/s, instead of load × a measured peak (no peak phase): 0 or 1 to 1000000")
	tick := fs.Duration("tick", bench.DefaultLagTick, "the scheduler's tick, in both phases")
	peers := fs.String("peers", "", "the peers' program: a path, or none (default: "+peersBinary+" next to this executable, else on PATH)")
	dir := fs.String("dir", "", "directory for the measured files (default: a new temporary directory)")
	traceFile := fs.String("trace", "", "write a Go execution trace of the paced phase to `FILE` (go tool trace)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	p, err := findPeers(*peers)
	if err != nil {
		return err
	}
	cfg := bench.LagConfig{Tasks: *tasks, Workers: *workers, Load: *load, Rate: *rate, Tick: *tick, Dir: *dir, Trace: *traceFile, Peers: p, Progress: benchProgress(env)}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	defer env.progress.done()
	r, err := bench.Lag(ctx, cfg)
	return printResult(env, *asJSON, r, err)
}

func runBenchHistory(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "bench history")
	n := fs.Int("events", 1000000, "the old task's events (N), written straight into a fresh store")
	baseline := fs.Int("baseline", 1000, "the young task's events, measured in the same run (-1: none)")
	page := fs.Int("page", 100, "rows of the history page read")
	dir := fs.String("dir", "", "directory for the measured files (default: a new temporary directory)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	cfg := bench.HistoryConfig{Events: *n, Baseline: *baseline, Page: *page, Dir: *dir, Progress: benchProgress(env)}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	defer env.progress.done()
	r, err := bench.History(ctx, cfg)
	return printResult(env, *asJSON, r, err)
}

func runBenchReport(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "bench report")
	files := map[string]*string{}
	for _, k := range []string{"store", "projections", "scheduler", "lag", "history"} {
		files[k] = fs.String(k, "", "the --json output of bench "+k)
	}
	files["scheduler-postgres"] = fs.String("scheduler-postgres", "", "the --json output of bench scheduler --store postgres")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	var r bench.Report
	var err error
	if r.Store, err = readResults[bench.StoreResult](*files["store"]); err != nil {
		return err
	}
	r.Projections, err = readLast[bench.ProjectionsResult](*files["projections"])
	if err != nil {
		return err
	}
	if r.Scheduler, err = readLast[bench.SchedulerResult](*files["scheduler"]); err != nil {
		return err
	}
	if r.SchedulerPostgres, err = readLast[bench.SchedulerResult](*files["scheduler-postgres"]); err != nil {
		return err
	}
	if r.Lag, err = readLast[bench.LagResult](*files["lag"]); err != nil {
		return err
	}
	if r.History, err = readLast[bench.HistoryResult](*files["history"]); err != nil {
		return err
	}
	if r.Store == nil && r.Projections == nil && r.Scheduler == nil && r.SchedulerPostgres == nil && r.Lag == nil && r.History == nil {
		return fmt.Errorf("%w: name at least one of --store, --projections, --scheduler, --scheduler-postgres, --lag, --history", errUsage)
	}
	_, err = fmt.Fprint(env.stdout, r.Table())
	return err
}

// readResults reads every JSON line of path ("": none).
func readResults[T any](path string) ([]T, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out, err := bench.ReadJSONLines[T](f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// readLast is the last JSON line of path, nil when there is none.
func readLast[T any](path string) (*T, error) {
	all, err := readResults[T](path)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	return &all[len(all)-1], nil
}

func runBenchBacklog(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "bench backlog")
	tasks := fs.Int("tasks", 2000, "tasks, all first due at once")
	workers := fs.Int("workers", 4, "scheduler workers: too few on purpose")
	tick := fs.Duration("tick", time.Second, "the clock's tick")
	interval := fs.Duration("interval", time.Second, "every task's interval")
	work := fs.Duration("work", 20*time.Millisecond, "how long each run's handler works")
	duration := fs.Duration("duration", time.Minute, "how long the overload lasts")
	dir := fs.String("dir", "", "directory for the measured files (default: a new temporary directory)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	cfg := bench.BacklogConfig{Tasks: *tasks, Workers: *workers, Tick: *tick, Interval: *interval, Work: *work,
		Duration: *duration, Dir: *dir, Progress: benchProgress(env)}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	defer env.progress.done()
	r, err := bench.Backlog(ctx, cfg)
	return printResult(env, *asJSON, r, err)
}
