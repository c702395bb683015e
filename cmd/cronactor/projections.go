package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/crontasks"
)

func init() {
	commands["projections"] = command{
		summary: "rebuild the cron_tasks view from the log, or show how far it trails (projections rebuild|status --data DIR)",
		run:     runProjections,
	}
}

func runProjections(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 || (args[0] != "rebuild" && args[0] != "status") {
		return fmt.Errorf("%w: projections needs rebuild or status", errUsage)
	}
	fs := flag.NewFlagSet("projections "+args[0], flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	data := fs.String("data", "./cronactor-data", "the daemon's data directory (stop the daemon first)")
	batch := fs.Int("batch", 1024, "events folded per atomic batch")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if *batch < 1 || *batch > 65536 {
		return fmt.Errorf("%w: --batch must be between 1 and 65536", errUsage)
	}
	store, err := embedded.Open(*data, embedded.Options{})
	if err != nil {
		return fmt.Errorf("open the event log in %s: %w", *data, err)
	}
	defer store.Close()
	cfg := crontasks.Config{Store: store, Dir: crontasks.DirIn(*data), BatchSize: *batch}
	if args[0] == "rebuild" {
		return rebuildView(ctx, env, cfg, store.Head().Commit)
	}
	v, err := crontasks.Open(cfg)
	if err != nil {
		return err
	}
	defer v.Close()
	l := v.Lag()
	fmt.Fprintf(env.stdout, "view %s at position %s; log head %s; %d events behind\n", cfg.Dir, l.Checkpoint, l.Head, l.Events)
	return nil
}

// rebuildView rebuilds the view, printing progress about once a second.
func rebuildView(ctx context.Context, env *cliEnv, cfg crontasks.Config, head uint64) error {
	start := time.Now()
	var next time.Time
	fmt.Fprintf(env.stderr, "rebuilding %s from %d events\n", cfg.Dir, head)
	cp, err := crontasks.Rebuild(ctx, cfg, func(p crontasks.Progress) {
		if now := time.Now(); now.After(next) {
			next = now.Add(time.Second)
			pct := 100.0
			if head > 0 {
				pct = 100 * float64(p.Position.Commit) / float64(head)
			}
			rate := float64(p.Applied) / max(p.Elapsed.Seconds(), 1e-9)
			fmt.Fprintf(env.stderr, "  %d/%d events (%.0f%%), %.0f events/s\n", p.Position.Commit, head, pct, rate)
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "rebuilt %s up to position %s in %s\n", cfg.Dir, cp, time.Since(start).Round(time.Millisecond))
	return nil
}
