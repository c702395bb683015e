// Command cronactor-benchpeers measures the schedulers that
// `cronactor bench scheduler` and `bench lag` print beside cronactor's own
// figures: robfig/cron and gocron in memory, and with --postgres River on
// that database, each given N jobs all due at one instant, timed until
// every job ran once (River: until every job's completion is recorded).
//
// It is its own Go module so that the product's go.mod carries neither
// peer (docs/decisions/0012-benchmark-peers.md). `make bench` builds it as
// bin/cronactor-benchpeers next to bin/cronactor, where the bench looks for
// it.
//
// Output: one JSON object per peer, one per line, on stdout:
//
//	{"peer":"robfig/cron","version":"v3.0.1","label":"in memory, not durable","jobs":100000,
//	 "setup_s":0.2,"runs_s":0.3,"runs_per_s":333333,"lag_p50_ms":120,"lag_p99_ms":290}
//
// runs_s is from the due instant until the last job has run; lag is due →
// the job's function entered. robfig/cron and gocron write nothing to disk:
// a crash loses every job, which is what "not durable" means. River
// (--postgres URL) keeps its jobs in Postgres: its runs_s ends when River
// reports the last job completed, which it does once that completion is
// written; it works with --workers workers (cronactor's count), and its
// label says "durable, on the same Postgres".
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/robfig/cron/v3"
)

// Result is one peer's measurement. `cronactor bench` parses these lines
// (internal/bench.PeerResult holds the same fields).
type Result struct {
	Peer     string  `json:"peer"`
	Version  string  `json:"version"`
	Label    string  `json:"label"`
	Jobs     int     `json:"jobs"`
	SetupS   float64 `json:"setup_s"`
	RunsS    float64 `json:"runs_s"`
	RunsPerS float64 `json:"runs_per_s"`
	LagP50ms float64 `json:"lag_p50_ms"`
	LagP99ms float64 `json:"lag_p99_ms"`
	// Workers is River's worker count (0, left out: the in-memory peers
	// have none).
	Workers int `json:"workers,omitempty"`
}

// label says what a peer's figure is not: durable.
const label = "in memory, not durable"

type peer struct {
	name, module string
	run          func(ctx context.Context, w *wave) error
	// workers is the peer's worker count, 0 when it has none.
	workers int
	// label says what the figure is (label, riverLabel).
	label string
	// margin is how long before the due instant setup starts: setup must
	// end first.
	margin func(n int) time.Duration
	// durable peers end a job with w.completed, once its completion is
	// recorded, not when its function returns.
	durable bool
}

// memMargin: registration costs a few µs per job; the margin is generous
// so the due instant never passes before the scheduler is ready.
func memMargin(n int) time.Duration { return 2*time.Second + time.Duration(n)*20*time.Microsecond }

var memPeers = []peer{
	{name: "robfig/cron", module: "github.com/robfig/cron/v3", run: runRobfig, label: label, margin: memMargin},
	{name: "gocron", module: "github.com/go-co-op/gocron/v2", run: runGocron, label: label, margin: memMargin},
}

// riverPeer is River on the database of o.
func riverPeer(o riverOptions) peer {
	return peer{name: "river", module: "github.com/riverqueue/river", run: runRiver(o), label: riverLabel, workers: o.workers,
		margin: riverMargin, durable: true}
}

// allPeers are the peers measured: the in-memory ones, and River when
// o names a database; with alsoWorkers > 0 River a second time with that
// many workers, as "river-N-workers".
func allPeers(o riverOptions, alsoWorkers int) []peer {
	ps := slices.Clone(memPeers)
	if o.url != "" {
		ps = append(ps, riverPeer(o))
		if alsoWorkers > 0 {
			o2 := o
			o2.workers = alsoWorkers
			p := riverPeer(o2)
			p.name = fmt.Sprintf("river-%d-workers", alsoWorkers)
			ps = append(ps, p)
		}
	}
	return ps
}

func main() {
	jobs := flag.Int("jobs", 100000, "jobs, all due at one instant: 1 to 10000000")
	only := flag.String("peer", "", "measure only this peer (robfig/cron, gocron or river)")
	var ro riverOptions
	flag.StringVar(&ro.url, "postgres", "", "PostgreSQL `URL`: measure River there too, in a schema of its own dropped afterwards")
	flag.IntVar(&ro.workers, "workers", 64, "River's workers (MaxWorkers of its queue): 1 to 10000")
	flag.DurationVar(&ro.poll, "poll", 100*time.Millisecond, "River's FetchPollInterval: 1ms to 1m (cronactor's tick)")
	flag.DurationVar(&ro.cooldown, "cooldown", time.Millisecond, "River's FetchCooldown: 1ms to 1m (River's default is 100ms, which caps it at workers/100ms)")
	also := flag.Int("also-workers", 0, "measure River a second time with this many workers (river-N-workers): 0 (not) to 10000")
	flag.Parse()
	if *jobs < 1 || *jobs > 10_000_000 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "cronactor-benchpeers: --jobs must be 1..10000000, no arguments")
		os.Exit(2)
	}
	if ro.workers < 1 || ro.workers > 10000 || *also < 0 || *also > 10000 || ro.poll < time.Millisecond || ro.poll > time.Minute ||
		ro.cooldown < time.Millisecond || ro.cooldown > time.Minute {
		fmt.Fprintln(os.Stderr, "cronactor-benchpeers: --workers must be 1..10000, --also-workers 0..10000, --poll and --cooldown 1ms..1m")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	enc := json.NewEncoder(os.Stdout)
	found := false
	for _, p := range allPeers(ro, *also) {
		if *only != "" && *only != p.name && !(*only == "river" && strings.HasPrefix(p.name, "river-")) {
			continue
		}
		found = true
		r, err := measure(ctx, p, *jobs)
		if err != nil {
			fmt.Fprintf(os.Stderr, "cronactor-benchpeers: %s: %v\n", p.name, err)
			os.Exit(1)
		}
		if err := enc.Encode(r); err != nil {
			os.Exit(1)
		}
	}
	if !found {
		fmt.Fprintf(os.Stderr, "cronactor-benchpeers: unknown peer %q\n", *only)
		os.Exit(2)
	}
}

// wave is one measurement: n jobs all due at due; each job calls ran(i)
// once when its function is entered.
type wave struct {
	n    int
	due  time.Time
	lags []time.Duration
	left atomic.Int64
	done chan struct{}
	last atomic.Int64 // unix ns of the last job's run
	// ready is closed by the peer once every job is registered and the
	// scheduler started; setup ends there.
	ready func()
	// durable: the wave ends at completed, not at the last ran.
	durable bool
	ranOnce []atomic.Bool
	twice   atomic.Int64 // jobs that ran more than once
}

func (w *wave) ran(i int) {
	now := time.Now()
	if w.ranOnce[i].Swap(true) {
		w.twice.Add(1)
		return
	}
	w.lags[i] = now.Sub(w.due)
	if w.left.Add(-1) == 0 && !w.durable {
		w.completed(now)
	}
}

// completed ends the wave at t: every job ran (a durable peer calls it
// once every completion is recorded).
func (w *wave) completed(t time.Time) {
	w.last.Store(t.UnixNano())
	close(w.done)
}

// measure gives the peer n jobs due far enough ahead that registering
// them all ends first, and times the wave.
func measure(ctx context.Context, p peer, n int) (Result, error) {
	runtime.GC()
	start := time.Now()
	w := &wave{n: n, due: start.Add(p.margin(n)), durable: p.durable,
		lags: make([]time.Duration, n), ranOnce: make([]atomic.Bool, n), done: make(chan struct{})}
	w.left.Store(int64(n))
	var setup time.Duration
	readyErr := make(chan error, 1)
	w.ready = func() {
		setup = time.Since(start)
		if time.Now().After(w.due) {
			readyErr <- fmt.Errorf("registering %d jobs took %s, past the due instant", n, setup)
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- p.run(ctx, w) }()
	select {
	case <-w.done:
	case err := <-errc:
		if err == nil {
			err = fmt.Errorf("stopped before every job ran")
		}
		return Result{}, err
	case err := <-readyErr:
		return Result{}, err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	select {
	case err := <-readyErr:
		return Result{}, err
	default:
	}
	if err := <-errc; err != nil {
		return Result{}, err
	}
	if left, twice := w.left.Load(), w.twice.Load(); left != 0 || twice != 0 {
		return Result{}, fmt.Errorf("%d jobs never ran and %d ran twice", left, twice)
	}
	runs := time.Unix(0, w.last.Load()).Sub(w.due)
	slices.Sort(w.lags)
	return Result{Peer: p.name, Version: moduleVersion(p.module), Label: p.label, Jobs: n,
		SetupS: setup.Seconds(), RunsS: runs.Seconds(), RunsPerS: float64(n) / runs.Seconds(),
		LagP50ms: ms(pct(w.lags, 50)), LagP99ms: ms(pct(w.lags, 99)), Workers: p.workers}, nil
}

// once is a robfig/cron schedule that is due at one instant, then never
// (robfig/cron skips an entry whose next time is zero).
type once time.Time

func (o once) Next(t time.Time) time.Time {
	if t.Before(time.Time(o)) {
		return time.Time(o)
	}
	return time.Time{}
}

func runRobfig(ctx context.Context, w *wave) error {
	c := cron.New()
	for i := range w.n {
		c.Schedule(once(w.due), cron.FuncJob(func() { w.ran(i) }))
	}
	c.Start()
	w.ready()
	select {
	case <-w.done:
	case <-ctx.Done():
	}
	<-c.Stop().Done()
	return ctx.Err()
}

func runGocron(ctx context.Context, w *wave) error {
	s, err := gocron.NewScheduler()
	if err != nil {
		return err
	}
	for i := range w.n {
		if _, err := s.NewJob(gocron.OneTimeJob(gocron.OneTimeJobStartDateTime(w.due)),
			gocron.NewTask(func() { w.ran(i) })); err != nil {
			return err
		}
	}
	s.Start()
	w.ready()
	select {
	case <-w.done:
	case <-ctx.Done():
	}
	if err := s.Shutdown(); err != nil {
		return err
	}
	return ctx.Err()
}

func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(float64(len(sorted)-1)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// moduleVersion is the version of a module linked into this binary.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "unknown"
}
