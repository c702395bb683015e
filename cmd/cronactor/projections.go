package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/crontasks"
)

func init() {
	commands["projections"] = command{
		summary: "rebuild the cron_tasks view from the log, or show how far it trails",
		run:     runProjections,
		subs:    []string{"rebuild", "status"},
	}
}

func runProjections(ctx context.Context, env *cliEnv, args []string) error {
	sub := args[0]
	fs := newFlags(env, "projections "+sub)
	data := fs.String("data", "./cronactor-data", "the daemon's data `directory`")
	// Each subcommand has only its own flags: status folds nothing, so it
	// has no --batch, and rebuild opens the directory, so no --server.
	batch := new(int)
	*batch = 1024
	var c *client
	if sub == "status" {
		c = clientFlags(fs)
		fs.misplaced = map[string]string{"batch": "only projections rebuild folds events in batches"}
	} else {
		fs.IntVar(batch, "batch", 1024, "fold `N` events per atomic batch (1 to 65536)")
		fs.misplaced = map[string]string{
			"server": "rebuild opens the data directory itself: stop the daemon and give --data",
			"token":  "rebuild opens the data directory itself: stop the daemon and give --data",
		}
	}
	if err := fs.parse(args[1:]); err != nil {
		return err
	}
	if err := fs.noArgs(); err != nil {
		return err
	}
	if *batch < 1 || *batch > 65536 {
		return fmt.Errorf("%w: --batch must be between 1 and 65536", errUsage)
	}
	if sub == "status" && fs.given("server") {
		if err := c.resolve(env); err != nil {
			return err
		}
		return remoteStatus(ctx, env, c)
	}
	if sub == "status" {
		// A status never creates anything: opening a store that is not
		// there would make an empty one and call it healthy.
		if err := checkDataDir(*data); err != nil {
			return err
		}
	}
	store, err := embedded.Open(*data, embedded.Options{})
	if errors.Is(err, embedded.ErrLocked) {
		if sub == "rebuild" {
			return fmt.Errorf("the daemon holds %s: stop it before rebuilding the view (%w)", *data, err)
		}
		// The daemon runs: ask it.
		if err := c.resolve(env); err != nil {
			return err
		}
		fmt.Fprintf(env.stderr, "cronactor: %s is in use by the daemon; asking it at %s\n", *data, c.server)
		return remoteStatus(ctx, env, c)
	}
	if err != nil {
		return fmt.Errorf("open the event log in %s: %w", *data, err)
	}
	defer store.Close()
	cfg := crontasks.Config{Store: store, Dir: crontasks.DirIn(*data), BatchSize: *batch}
	if sub == "rebuild" {
		return rebuildView(ctx, env, cfg, store.Head().Commit)
	}
	if _, err := os.Stat(cfg.Dir); errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(env.stdout, "no view at %s yet (serve or projections rebuild makes it); log head %s\n", cfg.Dir, store.Head())
		return nil
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

// checkDataDir fails unless dir is a data directory with an event log in
// it (the embedded store keeps its log in events/).
func checkDataDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("no data directory at %s (give the daemon's with --data, or ask it with --server)", dir)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory (give the daemon's data directory with --data)", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "events")); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no event log in %s: it is not a cronactor data directory (give the daemon's with --data)", dir)
	}
	return nil
}

// remoteStatus reads the view's position from a running daemon's metrics.
func remoteStatus(ctx context.Context, env *cliEnv, c *client) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(c.server, "/")+"/metrics", nil)
	if err != nil {
		return fmt.Errorf("%w: --server %q: %v", errUsage, c.server, err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the daemon at %s (is `cronactor serve` running?): %w", c.server, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: GET %s/metrics: %s", errServer, c.server, resp.Status)
	}
	want := map[string]float64{}
	names := []string{"cronactor_projection_position", "cronactor_log_head_position", "cronactor_projection_lag_events"}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		for _, n := range names {
			if name == n {
				if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
					want[n] = f
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("GET %s/metrics: %w", c.server, err)
	}
	for _, n := range names {
		if _, ok := want[n]; !ok {
			return fmt.Errorf("the daemon at %s does not report %s (an older version?)", c.server, n)
		}
	}
	fmt.Fprintf(env.stdout, "view of the daemon at %s at position %d; log head %d; %d events behind\n", c.server,
		uint64(want[names[0]]), uint64(want[names[1]]), uint64(want[names[2]]))
	return nil
}

// rebuildHoldEnv, set to anything, makes `projections rebuild` stop after
// its first batch until interrupted (tests only).
const rebuildHoldEnv = "CRONACTOR_TEST_HOLD_REBUILD"

// rebuildView rebuilds the view, with a progress line on a terminal.
func rebuildView(ctx context.Context, env *cliEnv, cfg crontasks.Config, head uint64) error {
	start := time.Now()
	defer env.progress.done()
	env.progress.update(true, "rebuilding %s from %d events", cfg.Dir, head)
	// The interrupt test holds the rebuild after its first batch until the
	// process is signalled, so that it is cut short mid-way for sure.
	hold := env.getenv(rebuildHoldEnv) != ""
	cp, err := crontasks.Rebuild(ctx, cfg, func(p crontasks.Progress) {
		if hold {
			hold = false
			fmt.Fprintln(env.stderr, "rebuild held for a test")
			<-ctx.Done()
		}
		pct := 100.0
		if head > 0 {
			pct = 100 * float64(p.Position.Commit) / float64(head)
		}
		rate := float64(p.Applied) / max(p.Elapsed.Seconds(), 1e-9)
		env.progress.update(false, "rebuilding %s: %d/%d events (%.0f%%), %.0f events/s", cfg.Dir, p.Position.Commit, head, pct, rate)
	})
	env.progress.done()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("rebuild of %s interrupted; the view is as it was: %w", cfg.Dir, err)
		}
		return err
	}
	fmt.Fprintf(env.stdout, "rebuilt %s up to position %s in %s\n", cfg.Dir, cp, time.Since(start).Round(time.Millisecond))
	return nil
}
