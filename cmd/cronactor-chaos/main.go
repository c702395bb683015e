// Command cronactor-chaos runs the project's chaos harness against the real
// cronactor daemon: a kill run (SIGKILL under load, then every invariant
// checked from the log), the storage and signal fault cases, and an HTTP
// fuzzer. It prints a table per part and exits 1 on any violation.
//
//	cronactor-chaos [-kills 100] [-seed 1] [-fuzz 2000] [-parts kill,faults,fuzz] [-bin PATH] [-dir DIR]
//
// See docs/reliability.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/cronactor/cronactor/internal/chaos"
)

func main() {
	os.Exit(run())
}

func run() int {
	kills := flag.Int("kills", 100, "SIGKILLs in the kill run")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()), "seed of the kill points, load and fuzzer (printed, to repeat a run)")
	fuzzN := flag.Int("fuzz", 2000, "requests the HTTP fuzzer sends")
	parts := flag.String("parts", "kill,faults,fuzz", "comma-separated parts to run: kill, faults, fuzz")
	only := flag.String("faults", "", "comma-separated fault cases to run (default all): wal_damage, missing_current, disk_full, graceful_stop, double_signal")
	bin := flag.String("bin", "", "cronactor binary (default: build ./cmd/cronactor of this module)")
	dir := flag.String("dir", "", "scratch directory, kept afterwards (default: a temporary one, removed)")
	tasks := flag.Int("tasks", 40, "tasks created before the first kill")
	perLife := flag.Int("creates", 6, "tasks created during each life of the daemon")
	verbose := flag.Bool("v", false, "print a line per life of the daemon")
	pgURL := flag.String("postgres", "", "kill run only: run the daemon on the Postgres store in this empty database (URL) instead of a data directory")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	scratch := *dir
	if scratch != "" {
		if err := os.MkdirAll(scratch, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	} else {
		d, err := os.MkdirTemp("", "cronactor-chaos-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(d)
		scratch = d
	}
	if *bin == "" {
		root, err := chaos.ModuleRoot()
		if err == nil {
			*bin, err = chaos.Build(ctx, root, scratch)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Printf("cronactor-chaos: seed %d, binary %s\n\n", *seed, *bin)
	failed := false
	for _, part := range strings.Split(*parts, ",") {
		sub, err := os.MkdirTemp(scratch, part+"-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		switch strings.TrimSpace(part) {
		case "kill":
			cfg := chaos.KillConfig{Bin: *bin, Dir: sub, Kills: *kills, Seed: *seed, InitialTasks: *tasks, CreatesPerLife: *perLife, Postgres: *pgURL}
			if *verbose {
				cfg.Progress = os.Stderr
			}
			rep, err := chaos.Kill(ctx, cfg)
			if err != nil {
				fmt.Fprintln(os.Stderr, "kill run:", err)
				return 1
			}
			chaos.WriteKillReport(os.Stdout, rep)
			failed = failed || len(rep.Result.Violations) > 0
		case "faults":
			fc := chaos.FaultConfig{Bin: *bin, Dir: sub}
			if *only != "" {
				fc.Only = strings.Split(*only, ",")
			}
			results := chaos.Faults(ctx, fc)
			chaos.WriteFaults(os.Stdout, results)
			for _, r := range results {
				failed = failed || r.Status == chaos.FaultFailed
			}
		case "fuzz":
			rep, err := chaos.Fuzz(ctx, chaos.FuzzConfig{Bin: *bin, Dir: sub, Requests: *fuzzN, Seed: *seed})
			if err != nil {
				fmt.Fprintln(os.Stderr, "fuzz:", err)
				return 1
			}
			chaos.WriteFuzzReport(os.Stdout, rep)
			failed = failed || len(rep.Violations) > 0
		default:
			fmt.Fprintf(os.Stderr, "unknown part %q (kill, faults, fuzz)\n", part)
			return 2
		}
		fmt.Println()
	}
	if failed {
		fmt.Println("cronactor-chaos: VIOLATIONS (see above)")
		return 1
	}
	fmt.Println("cronactor-chaos: no violations")
	return 0
}
