// Command cronactor-chaos runs the project's chaos harness against the real
// cronactor daemon: a kill run (SIGKILL under load, then every invariant
// checked from the log), the storage and signal fault cases, and an HTTP
// fuzzer. It prints a table per part and exits 1 on any violation.
//
//	cronactor-chaos [-kills 100] [-seed 1] [-fuzz 2000] [-parts kill,faults,fuzz] [-bin PATH] [-dir DIR]
//	                [-postgres URL [-postgres-stop CMD -postgres-start CMD]]
//
// With -postgres every part runs the daemon on the Postgres store: the kill
// run in the database as given (it must be empty), the fault cases and the
// fuzzer each in a fresh schema of it. The fault cases of a local disk are
// skipped then, and the Postgres ones run: pg_conn_kill (pg_terminate_backend
// of the daemon's connections) and, given the commands to stop and start the
// server, pg_outage; with them the kill run also restarts the server once.
//
// See docs/reliability.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
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
	only := flag.String("faults", "", "comma-separated fault cases to run (default all): wal_damage, missing_current, disk_full, graceful_stop, double_signal, pg_outage, pg_conn_kill")
	bin := flag.String("bin", "", "cronactor binary (default: build ./cmd/cronactor of this module)")
	dir := flag.String("dir", "", "scratch directory, kept afterwards (default: a temporary one, removed)")
	tasks := flag.Int("tasks", 40, "tasks created before the first kill")
	perLife := flag.Int("creates", 6, "tasks created during each life of the daemon")
	verbose := flag.Bool("v", false, "print a line per life of the daemon")
	pgURL := flag.String("postgres", "", "run the daemon on the Postgres store in this database (URL) instead of a data directory: empty for the kill run; the fault cases and the fuzzer create a schema each (the role needs CREATE on the database, and pg_signal_backend for pg_conn_kill)")
	pgStop := flag.String("postgres-stop", "", "with -postgres: a shell command that stops the Postgres server (e.g. 'pg_ctlcluster 15 main stop -m immediate'); enables pg_outage and a server restart in the kill run")
	pgStart := flag.String("postgres-start", "", "with -postgres: a shell command that starts the Postgres server again")
	flag.Parse()
	var stopPG, startPG func() error
	if (*pgStop == "") != (*pgStart == "") || (*pgStop != "" && *pgURL == "") {
		fmt.Fprintln(os.Stderr, "-postgres-stop and -postgres-start go together, with -postgres")
		return 2
	}
	if *pgStop != "" {
		stopPG, startPG = shell(*pgStop), shell(*pgStart)
	}

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
			if stopPG != nil {
				cfg.RestartStore = func() error {
					if err := stopPG(); err != nil {
						return err
					}
					return startPG()
				}
			}
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
			fc := chaos.FaultConfig{Bin: *bin, Dir: sub, Postgres: *pgURL, PostgresStop: stopPG, PostgresStart: startPG}
			if *only != "" {
				fc.Only = strings.Split(*only, ",")
			}
			results := chaos.Faults(ctx, fc)
			chaos.WriteFaults(os.Stdout, results)
			for _, r := range results {
				failed = failed || r.Status == chaos.FaultFailed
			}
		case "fuzz":
			rep, err := chaos.Fuzz(ctx, chaos.FuzzConfig{Bin: *bin, Dir: sub, Requests: *fuzzN, Seed: *seed, Postgres: *pgURL})
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

// shell runs cmd with sh -c, its output to stderr.
func shell(cmd string) func() error {
	return func() error {
		c := exec.Command("sh", "-c", cmd)
		c.Stdout, c.Stderr = os.Stderr, os.Stderr
		if err := c.Run(); err != nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
		return nil
	}
}
