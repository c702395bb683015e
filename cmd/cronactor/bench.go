package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cronactor/cronactor/internal/bench"
)

// benchCommands holds the benchmarks under `cronactor bench`: flag parsing
// and printing here, the measurements in internal/bench.
var benchCommands = map[string]command{
	"store": {
		summary: "append throughput of the embedded store next to the disk's raw limit",
		run:     runBenchStore,
	},
	"projections": {
		summary: "how far the live cron_tasks view trails the log under full append load",
		run:     runBenchProjections,
	},
	"scheduler": {
		summary: "N tasks all due at once: runs/s end to end next to the store's raw append rate",
		run:     runBenchScheduler,
	},
	"backlog": {
		summary: "too few workers for N tasks: queue depth, log growth, restart and drain times (R18)",
		run:     runBenchBacklog,
	},
}

func init() {
	commands["bench"] = command{
		summary: "measure throughput and latency next to a baseline: bench store|projections|scheduler|backlog",
		subs:    benchNames(),
		run: func(ctx context.Context, env *cliEnv, args []string) error {
			return benchCommands[args[0]].run(ctx, env, args[1:]) // dispatch checked the name
		},
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
	if err := fs.parse(args); err != nil {
		return err
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
	cfg := bench.StoreConfig{Writers: *writers, Duration: *duration, Dir: *dir, Progress: benchProgress(env)}
	return bench.Store(ctx, cfg, func(r bench.StoreResult) error {
		if *asJSON {
			return printJSON(env, r)
		}
		_, err := fmt.Fprintln(env.stdout, r.Text())
		return err
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
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env, r)
	}
	_, err = fmt.Fprintln(env.stdout, r.Text())
	return err
}

func runBenchScheduler(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "bench scheduler")
	tasks := fs.Int("tasks", 100000, "tasks, all due at once")
	workers := fs.Int("workers", 64, "scheduler workers (and raw-append writers)")
	dir := fs.String("dir", "", "directory for the measured files (default: a new temporary directory)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	if *tasks < 1 || *tasks > 10_000_000 || *workers < 1 || *workers > 10000 {
		return fmt.Errorf("%w: --tasks must be 1..10000000 and --workers 1..10000", errUsage)
	}
	defer env.progress.done()
	r, err := bench.Scheduler(ctx, bench.SchedulerConfig{Tasks: *tasks, Workers: *workers, Dir: *dir, Progress: benchProgress(env)})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env, r)
	}
	_, err = fmt.Fprintln(env.stdout, r.Text())
	return err
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
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(env, r)
	}
	_, err = fmt.Fprintln(env.stdout, r.Text())
	return err
}
