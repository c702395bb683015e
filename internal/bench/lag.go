package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/google/uuid"
)

// LagConfig says what `bench lag` measures.
type LagConfig struct {
	// Tasks is the number of noop tasks of each phase: 1 to 10,000,000.
	Tasks int
	// Workers is the scheduler's workers (and the raw-append writers of the
	// baseline): 1 to 10000.
	Workers int
	// Load is the fraction of the measured peak the paced phase drives:
	// more than 0, at most 1.
	Load float64
	// Rate, if more than 0, is the paced phase's rate of due times in runs/s
	// (up to 1,000,000), and the peak phase is skipped: builds compared on a
	// busy machine then see the same rate, which Load × a measured peak is
	// not. 0: Load × the peak.
	Rate float64
	// Tick is the scheduler's tick: 0 (DefaultLagTick) or 1ms to 1h.
	Tick time.Duration
	// Dir is where the measured files go; empty: a new temporary directory,
	// removed afterwards.
	Dir string
	// Peers says where the peer schedulers' program is.
	Peers Peers
	// Trace, if set, is the file an execution trace of the paced phase
	// goes to (runtime/trace, for `go tool trace`), from just before its
	// first due time until its last run completed: which goroutines held
	// the ticks whose lag stands out.
	Trace    string
	Progress Progress
}

// Validate reports a field out of its limits.
func (c LagConfig) Validate() error {
	switch {
	case c.Tasks < 1 || c.Tasks > 10_000_000:
		return fmt.Errorf("bench: LagConfig.Tasks %d: want 1 to 10000000", c.Tasks)
	case c.Workers < 1 || c.Workers > 10000:
		return fmt.Errorf("bench: LagConfig.Workers %d: want 1 to 10000", c.Workers)
	case !(c.Rate == 0 || c.Rate >= 1 && c.Rate <= 1e6):
		return fmt.Errorf("bench: LagConfig.Rate %g: want 0, or 1 to 1000000", c.Rate)
	case !(c.Load > 0 && c.Load <= 1):
		return fmt.Errorf("bench: LagConfig.Load %g: want more than 0, at most 1", c.Load)
	case c.Tick != 0 && (c.Tick < time.Millisecond || c.Tick > time.Hour):
		return fmt.Errorf("bench: LagConfig.Tick %s: want 1ms to 1h", c.Tick)
	}
	return nil
}

func (c LagConfig) tick() time.Duration {
	if c.Tick == 0 {
		return DefaultLagTick
	}
	return c.Tick
}

// LagResult is the `bench lag` measurement. lag_p99_ms is the figure of
// DESIGN.md §6: other programs parse it.
type LagResult struct {
	Tasks   int     `json:"tasks"`
	Workers int     `json:"workers"`
	TickMs  float64 `json:"tick_ms"`
	Load    float64 `json:"load"`
	// PeakRunsPerS is the first phase: Tasks tasks all due at once, runs/s
	// until every run completed (as `bench scheduler`). With a Rate, there
	// is no peak phase: PeakRunsPerS and Load are 0.
	PeakRunsPerS float64 `json:"peak_runs_per_s"`
	// RatePerS is Load × PeakRunsPerS: the rate the paced phase's due
	// times arrive at; RunsPerS is what completed (Tasks / (last run
	// completed − first due)); DurationS is the paced phase's span of due
	// times.
	RatePerS  float64 `json:"rate_per_s"`
	RunsPerS  float64 `json:"runs_per_s"`
	DurationS float64 `json:"duration_s"`
	// LagP50ms, LagP99ms and LagMaxms are each run's started minus the
	// instant of the tick that enqueued it: due → started without the
	// tick's quantization (the wait from due to the next tick, which is
	// TickWaitP99ms at most a tick).
	LagP50ms      float64 `json:"lag_p50_ms"`
	LagP99ms      float64 `json:"lag_p99_ms"`
	LagMaxms      float64 `json:"lag_max_ms"`
	TickWaitP99ms float64 `json:"tick_wait_p99_ms"`
	// DueLagP50ms and DueLagP99ms are due → started, the tick included.
	DueLagP50ms float64 `json:"due_lag_p50_ms"`
	DueLagP99ms float64 `json:"due_lag_p99_ms"`
	// Ticks is how many ticks enqueued the paced phase's runs;
	// TickP99MedianMs is the median over them of each tick's own p99 lag
	// (what a tick's burst costs when nothing else gets in the way), and
	// TicksOver50ms counts the ticks whose p99 was above 50 ms. A LagP99ms
	// far above TickP99MedianMs comes from a few slow ticks: stalls (the
	// store's compactions, a snapshot sweep, other programs on the
	// machine), not the bursts themselves (docs/performance.md).
	Ticks           int     `json:"ticks"`
	TickP99MedianMs float64 `json:"tick_p99_median_ms"`
	TicksOver50ms   int     `json:"ticks_over_50ms"`
	// SlowTicks are the first 20 of those ticks in time order: each tick's
	// instant after the paced phase's first due time, and its p99 — where
	// to look in an execution trace of the run (--trace).
	SlowTicks []SlowTick `json:"slow_ticks,omitempty"`
	// RawEventsPerS is the store's raw append limit measured in the same
	// run (as in `bench scheduler`).
	RawEventsPerS float64     `json:"raw_events_per_s"`
	Peers         PeerResults `json:"peers"`
	PeersNote     string      `json:"peers_note,omitempty"`
	// LoadAvg1m is as in SchedulerResult.
	LoadAvg1m float64 `json:"load_avg_1m"`
}

// Lag measures the scheduling lag at a fraction of the peak: first the
// peak (cfg.Tasks tasks all due at once, as Scheduler does, on its own
// data directory), then, on a fresh data directory and scheduler,
// cfg.Tasks interval tasks whose first due times are spaced evenly at
// cfg.Load × peak per second, each run once. For every run it takes the
// instant of the tick that enqueued it from the RunEnqueued event (an
// interval task's next_run is that tick + the interval) and the time
// RunStarted was decided, and reports started − tick: the lag beyond the
// tick. The store's raw append limit and the peers are measured in the same
// run.
func Lag(ctx context.Context, cfg LagConfig) (LagResult, error) {
	if err := cfg.Validate(); err != nil {
		return LagResult{}, err
	}
	res := LagResult{Tasks: cfg.Tasks, Workers: cfg.Workers, TickMs: ms(cfg.tick()), Load: cfg.Load, LoadAvg1m: loadAverage()}
	base, cleanup, err := workDir(cfg.Dir)
	if err != nil {
		return res, err
	}
	defer cleanup()
	// A trace file that cannot be written fails the run before anything is
	// measured.
	traceFile, err := Profiles{Trace: cfg.Trace}.openTrace()
	if err != nil {
		return res, err
	}
	if traceFile != nil {
		defer traceFile.Close() // a second Close after stopTrace's is harmless
	}
	cfg.Progress.note("bench lag: raw appends with %d writers for 3s...", cfg.Workers)
	raw, err := benchEmbedded(ctx, filepath.Join(base, "raw"), cfg.Workers, 3*time.Second)
	if err != nil {
		return res, err
	}
	res.RawEventsPerS = raw.rate()

	var createS float64 // creating the tasks took this long in the peak phase
	if cfg.Rate > 0 {
		res.RatePerS, res.Load = cfg.Rate, 0
	} else {
		peak, err := lagPeak(ctx, cfg, filepath.Join(base, "peak"))
		if err != nil {
			return res, err
		}
		res.PeakRunsPerS = float64(cfg.Tasks) / peak.runsS
		res.RatePerS = cfg.Load * res.PeakRunsPerS
		createS = peak.createS
	}
	if err := paced(ctx, cfg, filepath.Join(base, "paced"), createS, traceFile, &res); err != nil {
		return res, err
	}
	res.Peers, res.PeersNote, err = cfg.Peers.measure(ctx, cfg.Tasks, cfg.Progress)
	return res, err
}

// lagPeak is the peak phase on its own directory, removed afterwards.
func lagPeak(ctx context.Context, cfg LagConfig, dir string) (wave, error) {
	store, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		return wave{}, err
	}
	defer os.RemoveAll(dir)
	defer store.Close()
	s, err := scheduler.New(scheduler.Config{Store: store, Tick: cfg.tick(), Workers: cfg.Workers})
	if err != nil {
		return wave{}, err
	}
	s.Register("noop", kinds.Noop())
	if err := s.Start(ctx); err != nil {
		return wave{}, err
	}
	defer s.Stop(context.Background())
	return allDue(ctx, s, store, cfg.Tasks, 2000, "bench lag (peak)", Profiles{}, cfg.Progress)
}

// enqueued is what a RunEnqueued said about a run.
type enqueued struct{ due, tick time.Time }

// paced is the paced phase: it fills the lag figures of res.
func paced(ctx context.Context, cfg LagConfig, dir string, createS float64, traceFile *os.File, res *LagResult) error {
	store, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	s, err := scheduler.New(scheduler.Config{Store: store, Tick: cfg.tick(), Workers: cfg.Workers})
	if err != nil {
		return err
	}
	s.Register("noop", kinds.Noop())
	if err := s.Start(ctx); err != nil {
		return err
	}
	defer s.Stop(context.Background())

	n := cfg.Tasks
	spacing := time.Duration(float64(time.Second) / res.RatePerS)
	res.DurationS = (time.Duration(n-1) * spacing).Seconds()
	// The first due time is far enough ahead that creating the tasks ends
	// first: twice as long as in the peak phase (when there was one), and
	// at least as long as at 2,000 tasks/s (see allDue).
	margin := max(time.Duration(2*createS*float64(time.Second)), time.Duration(n)*time.Second/2000) + 3*time.Second
	first := time.Now().Add(margin)
	cfg.Progress.note("bench lag: %d tasks due from %s, one every %s (%.0f/s = %.2f × peak %.0f/s)...",
		n, first.Format(time.RFC3339), spacing, res.RatePerS, cfg.Load, res.PeakRunsPerS)
	if err := createTasks(ctx, s, n, func(i int) scheduler.TaskSpec {
		return scheduler.TaskSpec{Name: fmt.Sprintf("p%07d", i), Owner: "bench", Kind: "noop", Interval: time.Hour,
			FirstRun: first.Add(time.Duration(i) * spacing)}
	}); err != nil {
		return err
	}
	if time.Now().After(first) {
		return fmt.Errorf("creating %d tasks took past the first due time; use fewer --tasks", n)
	}

	if traceFile != nil {
		// The trace covers the paced phase only: from a little before the
		// first due time (the wait before it is idle ticks).
		if err := clock.Sleep(ctx, clock.Real{}, time.Until(first.Add(-100*time.Millisecond))); err != nil {
			return err
		}
		stopTrace, err := startTrace(traceFile)
		if err != nil {
			return err
		}
		defer stopTrace()
	}

	var (
		mu        sync.Mutex
		runs      = make(map[uuid.UUID]enqueued, n)
		byTick    = map[time.Time][]time.Duration{}
		beyond    = make([]time.Duration, 0, n)
		dueLag    = make([]time.Duration, 0, n)
		tickWait  = make([]time.Duration, 0, n)
		completed int
		last      time.Time
		bad       error
	)
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go store.Subscribe(subCtx, store.Head(), func(r events.Recorded) error {
		mu.Lock()
		defer mu.Unlock()
		switch r.Type {
		case lagEnqueued, lagStarted:
			e, err := events.Decode(r)
			if err != nil {
				bad = err
				cancel()
				return err
			}
			switch e := e.(type) {
			case events.RunEnqueued:
				// An interval task's next_run is the tick's instant + the
				// interval (events.RunEnqueued).
				tick := e.NextRun.Add(-time.Hour)
				if tick.Before(e.Due) || tick.Sub(e.Due) > cfg.tick() {
					bad = fmt.Errorf("bench lag: run %s due %s enqueued at tick %s: not the first tick at or after due",
						e.RunID, e.Due.Format(time.RFC3339Nano), tick.Format(time.RFC3339Nano))
					cancel()
					return bad
				}
				runs[e.RunID] = enqueued{due: e.Due, tick: tick}
			case events.RunStarted:
				q, ok := runs[e.RunID]
				if !ok {
					return nil
				}
				delete(runs, e.RunID)
				beyond = append(beyond, r.At.Sub(q.tick))
				byTick[q.tick] = append(byTick[q.tick], r.At.Sub(q.tick))
				dueLag = append(dueLag, r.At.Sub(q.due))
				tickWait = append(tickWait, q.tick.Sub(q.due))
			}
		case lagCompleted:
			completed++
			if completed == n {
				last = time.Now()
				cancel()
			}
		}
		return nil
	})
	<-subCtx.Done()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	if bad != nil {
		return bad
	}
	for _, l := range [][]time.Duration{beyond, dueLag, tickWait} {
		slices.Sort(l)
	}
	res.RunsPerS = float64(n) / math.Max(last.Sub(first).Seconds(), 1e-9)
	res.LagP50ms, res.LagP99ms, res.LagMaxms = ms(percentile(beyond, 50)), ms(percentile(beyond, 99)), ms(percentile(beyond, 100))
	res.TickWaitP99ms = ms(percentile(tickWait, 99))
	res.DueLagP50ms, res.DueLagP99ms = ms(percentile(dueLag, 50)), ms(percentile(dueLag, 99))
	res.Ticks, res.TickP99MedianMs, res.TicksOver50ms = tickFigures(byTick)
	res.SlowTicks = slowTicks(byTick, first, maxSlowTicks)
	return nil
}

// maxSlowTicks is how many slow ticks LagResult.SlowTicks names, and
// slowTick the p99 above which a tick is slow: the lag bar.
const (
	maxSlowTicks = 20
	slowTick     = 50 * time.Millisecond
)

// SlowTick is a tick of the paced phase whose p99 lag was over 50 ms.
type SlowTick struct {
	// AtS is the tick's instant in seconds after the first due time.
	AtS   float64 `json:"at_s"`
	P99ms float64 `json:"p99_ms"`
}

// slowTicks are the first limit ticks of byTick (their lags sorted) whose
// p99 was over 50ms, in time order, from first.
func slowTicks(byTick map[time.Time][]time.Duration, first time.Time, limit int) []SlowTick {
	var at []time.Time
	for t, l := range byTick {
		if percentile(l, 99) > slowTick {
			at = append(at, t)
		}
	}
	slices.SortFunc(at, time.Time.Compare)
	var slow []SlowTick
	for _, t := range at[:min(limit, len(at))] {
		slow = append(slow, SlowTick{AtS: t.Sub(first).Seconds(), P99ms: ms(percentile(byTick[t], 99))})
	}
	return slow
}

// tickFigures are LagResult's Ticks, TickP99MedianMs and TicksOver50ms of
// the lags by the tick that enqueued their run.
func tickFigures(byTick map[time.Time][]time.Duration) (ticks int, medianP99ms float64, over50 int) {
	p99s := make([]time.Duration, 0, len(byTick))
	for _, l := range byTick {
		slices.Sort(l)
		p := percentile(l, 99)
		p99s = append(p99s, p)
		if p > slowTick {
			over50++
		}
	}
	slices.Sort(p99s)
	return len(p99s), ms(percentile(p99s, 50)), over50
}

// Text is the result as lines for people: ours first, then the peers.
func (res LagResult) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tasks=%d workers=%d tick=%.0fms load=%.2f: peak %.0f runs/s; due times at %.0f/s for %.1fs, completed %.0f runs/s | lag beyond the tick p50 %.1fms p99 %.1fms max %.1fms | due→started p50 %.0fms p99 %.0fms (tick wait p99 %.0fms) | %d ticks: median of their p99 %.1fms, %d over 50ms",
		res.Tasks, res.Workers, res.TickMs, res.Load, res.PeakRunsPerS, res.RatePerS, res.DurationS, res.RunsPerS,
		res.LagP50ms, res.LagP99ms, res.LagMaxms, res.DueLagP50ms, res.DueLagP99ms, res.TickWaitP99ms,
		res.Ticks, res.TickP99MedianMs, res.TicksOver50ms)
	for i, t := range res.SlowTicks {
		if i == 0 {
			b.WriteString(" (at")
		}
		fmt.Fprintf(&b, " +%.3fs %.0fms", t.AtS, t.P99ms)
		if i == len(res.SlowTicks)-1 {
			if res.TicksOver50ms > len(res.SlowTicks) {
				b.WriteString(" ...")
			}
			b.WriteString(")")
		}
	}
	b.WriteString(peersText(res.Peers, res.PeersNote, res.RawEventsPerS))
	return b.String()
}

// The event types bench lag folds (the switch in its subscriber), and
// those it reads past on purpose: they say nothing of when a run started
// after its tick.
const (
	lagEnqueued  = "RunEnqueued"
	lagStarted   = "RunStarted"
	lagCompleted = "RunCompleted"
)

var lagReadsPast = []string{"TaskCreated", "TaskUpdated", "TaskPaused", "TaskResumed", "TaskDeleted", "TaskFinished",
	"TaskCompacted", "SlotsMissed", "CheckpointSaved", "RunFailed", "RunDropped", "RunForcedEnd"}

// LagHandles reports whether bench lag has a rule for an event type: it
// folds it or reads past it on purpose. The table test over every
// registered event type (cmd/cronactor) asks it of each.
func LagHandles(eventType string) bool {
	switch eventType {
	case lagEnqueued, lagStarted, lagCompleted:
		return true
	}
	return slices.Contains(lagReadsPast, eventType)
}
