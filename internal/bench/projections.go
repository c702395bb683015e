package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// ProjectionsConfig says what `bench projections` measures.
type ProjectionsConfig struct {
	// Writers is the number of concurrent writers, one task each: 1 to 10000.
	Writers int
	// Duration is how long each phase appends: 100ms to 1h.
	Duration time.Duration
	// Rounds is the number of alternating rounds of the baseline and the
	// measured phase: 1 to 100.
	Rounds int
	// MemoryView keeps the view in memory instead of on disk next to the log.
	MemoryView bool
	// Dir is where the measured files go; empty: a new temporary directory,
	// removed afterwards.
	Dir      string
	Progress Progress
}

// Validate reports a field out of its limits.
func (c ProjectionsConfig) Validate() error {
	switch {
	case c.Writers < 1 || c.Writers > 10000:
		return fmt.Errorf("bench: ProjectionsConfig.Writers %d: want 1 to 10000", c.Writers)
	case c.Rounds < 1 || c.Rounds > 100:
		return fmt.Errorf("bench: ProjectionsConfig.Rounds %d: want 1 to 100", c.Rounds)
	case c.Duration < 100*time.Millisecond || c.Duration > time.Hour:
		return fmt.Errorf("bench: ProjectionsConfig.Duration %s: want 100ms to 1h", c.Duration)
	}
	return nil
}

// ProjectionsResult is the `bench projections` measurement.
type ProjectionsResult struct {
	Writers            int     `json:"writers"`
	Rounds             int     `json:"rounds"`
	DurationS          float64 `json:"duration_s"`
	BaselineEventsPerS float64 `json:"baseline_events_per_s"`
	EventsPerS         float64 `json:"events_per_s"`
	Ratio              float64 `json:"ratio"`
	FoldedEventsPerS   float64 `json:"folded_events_per_s"`
	VisibleP50ms       float64 `json:"visible_p50_ms"`
	VisibleP99ms       float64 `json:"visible_p99_ms"`
	VisibleMaxms       float64 `json:"visible_max_ms"`
	Samples            int     `json:"samples"`
	LagMaxEvents       uint64  `json:"lag_max_events"`
	LagMaxms           float64 `json:"lag_max_ms"`
	CatchUpEventsPerS  float64 `json:"catch_up_events_per_s"`

	// The process's CPU time (user + system) per event, medians over the
	// rounds: appending with no view, appending with the live view following
	// until it has folded everything, and the rebuild from zero. Other load
	// on the machine barely moves them, unlike the rates; 0 where the
	// platform does not say.
	BaselineCPUusPerEvent float64 `json:"baseline_cpu_us_per_event"`
	CPUusPerEvent         float64 `json:"cpu_us_per_event"`
	CatchUpCPUusPerEvent  float64 `json:"catch_up_cpu_us_per_event"`
}

// Projections appends task events (one writer per task: created,
// then enqueued/started/completed in turn) at full speed, first with no
// view (the baseline), then with the live view following. While the view
// follows, a probe appends one event every 10 ms and measures how long
// after the append was acknowledged the view shows it; Lag() is sampled
// too. Finally a fresh view folds the whole log from zero (catch-up rate).
func Projections(ctx context.Context, cfg ProjectionsConfig) (ProjectionsResult, error) {
	if err := cfg.Validate(); err != nil {
		return ProjectionsResult{}, err
	}
	base, cleanup, err := workDir(cfg.Dir)
	if err != nil {
		return ProjectionsResult{}, err
	}
	defer cleanup()
	r := ProjectionsResult{Writers: cfg.Writers, DurationS: cfg.Duration.Seconds()}

	cfg.Progress.note("bench projections: %d writers, %d rounds of %s without then with the view, files under %s", cfg.Writers, cfg.Rounds, cfg.Duration, base)
	// Rounds alternate the baseline and the measured phase so that load
	// from elsewhere on the machine hits both; the medians are reported.
	var probe viewProbe
	var baseRates, viewRates, ratios, baseCPU, viewCPU []float64
	for i := range cfg.Rounds {
		cfg.Progress.note("  round %d: appends, no view...", i+1)
		baseline, err := benchTaskAppends(ctx, filepath.Join(base, fmt.Sprint("baseline", i)), cfg.Writers, cfg.Duration, nil, false)
		if err != nil {
			return r, err
		}
		cfg.Progress.note("  round %d: appends with the live view following...", i+1)
		withView, err := benchTaskAppends(ctx, filepath.Join(base, fmt.Sprint("view", i)), cfg.Writers, cfg.Duration, &probe, cfg.MemoryView)
		if err != nil {
			return r, err
		}
		baseRates, viewRates = append(baseRates, baseline.rate()), append(viewRates, withView.rate())
		baseCPU, viewCPU = append(baseCPU, baseline.cpuPerEvent()), append(viewCPU, withView.cpuPerEvent())
		ratios = append(ratios, withView.rate()/baseline.rate())
		cfg.Progress.note("    %0.f events/s without, %0.f with (ratio %.2f)", baseline.rate(), withView.rate(), ratios[i])
	}
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	r.BaselineEventsPerS, r.EventsPerS, r.Ratio = median(baseRates), median(viewRates), median(ratios)
	r.Rounds = cfg.Rounds
	r.FoldedEventsPerS = probe.folded
	r.CatchUpEventsPerS = probe.catchUp
	r.BaselineCPUusPerEvent, r.CPUusPerEvent, r.CatchUpCPUusPerEvent = median(baseCPU), median(viewCPU), median(probe.catchUpCPU)
	slices.Sort(probe.visible)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	r.Samples = len(probe.visible)
	r.VisibleP50ms, r.VisibleP99ms = ms(percentile(probe.visible, 50)), ms(percentile(probe.visible, 99))
	if n := len(probe.visible); n > 0 {
		r.VisibleMaxms = ms(probe.visible[n-1])
	}
	r.LagMaxEvents, r.LagMaxms = probe.maxEvents, ms(probe.maxTime)
	return r, nil
}

// Text is the result as lines for people.
func (r ProjectionsResult) Text() string {
	return fmt.Sprintf("writers=%d, median of %d rounds: appends %0.f events/s with the view following, %0.f without (ratio %.2f); view folded up to %0.f events/s\n", r.Writers, r.Rounds, r.EventsPerS, r.BaselineEventsPerS, r.Ratio, r.FoldedEventsPerS) +
		fmt.Sprintf("ack → visible in the view: p50 %.2f ms  p99 %.2f ms  max %.2f ms (%d samples); Lag() max %d events, %.2f ms\n", r.VisibleP50ms, r.VisibleP99ms, r.VisibleMaxms, r.Samples, r.LagMaxEvents, r.LagMaxms) +
		fmt.Sprintf("rebuild from zero: up to %0.f events/s\n", r.CatchUpEventsPerS) +
		fmt.Sprintf("CPU per event: %.1fµs appending without the view, %.1fµs with it, %.1fµs rebuilding", r.BaselineCPUusPerEvent, r.CPUusPerEvent, r.CatchUpCPUusPerEvent)
}

// viewProbe collects what the view phase measures.
type viewProbe struct {
	visible    []time.Duration
	maxEvents  uint64
	maxTime    time.Duration
	folded     float64
	catchUp    float64
	catchUpCPU []float64 // µs per event, one per rebuild
}

func benchTask(id uuid.UUID, at time.Time) events.TaskCreated {
	return events.TaskCreated{TaskID: id, Name: "bench", Owner: "bench/" + id.String()[:2], Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(30 * time.Second), NextRun: at.Add(time.Minute)}
}

// benchTaskAppends drives the append load on a new store in dir; with a
// probe it runs the live view and measures it.
func benchTaskAppends(ctx context.Context, dir string, writers int, d time.Duration, probe *viewProbe, memView bool) (measurement, error) {
	store, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		return measurement{}, err
	}
	defer store.Close()
	ids := make([]uuid.UUID, writers)
	for w := range ids {
		ids[w] = uuid.New()
	}
	var (
		view   *crontasks.View
		stop   = func() {}
		wg     sync.WaitGroup
		runErr error
	)
	if probe != nil {
		cfg := crontasks.Config{Store: store, Dir: crontasks.DirIn(dir)}
		if memView {
			cfg.Dir = ""
		}
		view, err = crontasks.Open(cfg)
		if err != nil {
			return measurement{}, err
		}
		defer view.Close()
		vctx, cancel := context.WithCancel(ctx)
		stop = cancel
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := view.Run(vctx); err != nil && vctx.Err() == nil {
				runErr = err
			}
		}()
		go func() {
			defer wg.Done()
			probeView(vctx, store, view, probe)
		}()
	}
	cpu0 := cpuTime()
	m, err := drive(ctx, writers, d, func(w int, seq uint64) error {
		now := time.Now().UTC()
		id := ids[w]
		var ev events.Event
		n := int(seq/3) + 1
		switch {
		case seq == 0:
			ev = benchTask(id, now)
		case seq%3 == 1:
			ev = events.RunEnqueued{RunID: events.RunID(id, n), Run: n, Due: now, NextRun: now.Add(time.Minute)}
		case seq%3 == 2:
			ev = events.RunStarted{RunID: events.RunID(id, n), Run: n, Deadline: now.Add(30 * time.Second)}
		default:
			ev = events.RunCompleted{RunID: events.RunID(id, n-1), Run: n - 1}
		}
		p, err := events.Propose(ev, uuid.Nil, now)
		if err != nil {
			return err
		}
		exp := events.NoStream
		if seq > 0 {
			exp = events.Exactly(seq - 1)
		}
		_, err = store.Append(ctx, events.TaskStream(id), exp, p)
		return err
	})
	if err != nil {
		stop()
		wg.Wait()
		return m, err
	}
	if probe == nil {
		return m, nil
	}
	// Let the view finish what was appended, then measure its rate.
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	err = view.WaitFor(waitCtx, store.Head())
	cancel()
	m.cpu = cpuTime() - cpu0
	elapsed := m.elapsed
	stop()
	wg.Wait()
	if err != nil {
		return m, fmt.Errorf("view did not catch up: %w", err)
	}
	if runErr != nil {
		return m, runErr
	}
	probe.folded = max(probe.folded, float64(view.Checkpoint().Commit)/elapsed.Seconds())

	// Rebuild from zero into a fresh directory: the catch-up rate.
	t0, c0 := time.Now(), cpuTime()
	cp, err := crontasks.Rebuild(ctx, crontasks.Config{Store: store, Dir: filepath.Join(dir, "rebuilt")}, nil)
	if err != nil {
		return m, err
	}
	probe.catchUp = max(probe.catchUp, float64(cp.Commit)/time.Since(t0).Seconds())
	probe.catchUpCPU = append(probe.catchUpCPU, float64(cpuTime()-c0)/float64(time.Microsecond)/float64(cp.Commit))
	return m, nil
}

// probeView appends one event every 10 ms on its own task and times how
// long after the acknowledgement the view has folded it; it samples Lag()
// at the same pace.
func probeView(ctx context.Context, store *embedded.Store, view *crontasks.View, probe *viewProbe) {
	id := uuid.New()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for seq := uint64(0); ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		l := view.Lag()
		probe.maxEvents = max(probe.maxEvents, l.Events)
		probe.maxTime = max(probe.maxTime, l.Time)
		now := time.Now().UTC()
		var ev events.Event = events.TaskPaused{}
		if seq == 0 {
			ev = benchTask(id, now)
		}
		p, err := events.Propose(ev, uuid.Nil, now)
		if err != nil {
			return
		}
		exp := events.NoStream
		if seq > 0 {
			exp = events.Exactly(seq - 1)
		}
		res, err := store.Append(ctx, events.TaskStream(id), exp, p)
		if err != nil {
			return
		}
		acked := time.Now()
		if err := view.WaitFor(ctx, res.Position); err != nil {
			return
		}
		probe.visible = append(probe.visible, time.Since(acked))
	}
}
