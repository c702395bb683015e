package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
)

// SchedulerConfig says what `bench scheduler` measures.
type SchedulerConfig struct {
	// Tasks is the number of noop tasks, all due at once: 1 to 10,000,000.
	Tasks int
	// Workers is the scheduler's workers (and the raw-append writers of the
	// baseline): 1 to 10000.
	Workers int
	// Dir is where the measured files go; empty: a new temporary directory,
	// removed afterwards.
	Dir      string
	Progress Progress
}

// Validate reports a field out of its limits.
func (c SchedulerConfig) Validate() error {
	if c.Tasks < 1 || c.Tasks > 10_000_000 {
		return fmt.Errorf("bench: SchedulerConfig.Tasks %d: want 1 to 10000000", c.Tasks)
	}
	if c.Workers < 1 || c.Workers > 10000 {
		return fmt.Errorf("bench: SchedulerConfig.Workers %d: want 1 to 10000", c.Workers)
	}
	return nil
}

// SchedulerResult is the `bench scheduler` measurement.
type SchedulerResult struct {
	Tasks            int     `json:"tasks"`
	Workers          int     `json:"workers"`
	CreateS          float64 `json:"create_s"`
	HeapBytesPerTask float64 `json:"heap_bytes_per_task"`
	RunsS            float64 `json:"runs_s"`
	RunsPerS         float64 `json:"runs_per_s"`
	EventsPerS       float64 `json:"events_per_s"`
	RawEventsPerS    float64 `json:"raw_events_per_s"`
	Ratio            float64 `json:"ratio"`
	LagP50ms         float64 `json:"lag_p50_ms"`
	LagP99ms         float64 `json:"lag_p99_ms"`

	// CreateCPUusPerTask and CPUusPerRun are the process's CPU time (user +
	// system) per task created and per run (due → every run completed):
	// other load on the machine barely moves them, unlike the rates. 0 where
	// the platform does not say.
	CreateCPUusPerTask float64 `json:"create_cpu_us_per_task"`
	CPUusPerRun        float64 `json:"cpu_us_per_run"`
}

// Scheduler creates cfg.Tasks noop tasks on the embedded store on
// disk, all due at the same instant, and measures how fast every run is
// enqueued, started and completed (three durable decisions each), with the
// scheduling lag (due → started). In the same run it measures the store's
// raw append rate with as many writers as the scheduler has workers; each
// run costs three appends, so the ratio compares events/s.
func Scheduler(ctx context.Context, cfg SchedulerConfig) (SchedulerResult, error) {
	if err := cfg.Validate(); err != nil {
		return SchedulerResult{}, err
	}
	var res SchedulerResult
	base, cleanup, err := workDir(cfg.Dir)
	if err != nil {
		return res, err
	}
	defer cleanup()
	cfg.Progress.note("bench scheduler: raw appends with %d writers for 3s...", cfg.Workers)
	raw, err := benchEmbedded(ctx, filepath.Join(base, "raw"), cfg.Workers, 3*time.Second)
	if err != nil {
		return res, err
	}
	store, err := embedded.Open(filepath.Join(base, "store"), embedded.Options{})
	if err != nil {
		return res, err
	}
	defer store.Close()
	s, err := scheduler.New(scheduler.Config{Store: store, Tick: 100 * time.Millisecond, Workers: cfg.Workers})
	if err != nil {
		return res, err
	}
	s.Register("noop", kinds.Noop())
	if err := s.Start(ctx); err != nil {
		return res, err
	}
	defer s.Stop(context.Background())

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	cfg.Progress.note("bench scheduler: creating %d tasks...", cfg.Tasks)
	createStart, createCPU := time.Now(), cpuTime()
	// All due at one instant, far enough ahead that creation finishes first.
	due := createStart.Add(time.Duration(cfg.Tasks/5000+5) * time.Second).UTC().Truncate(time.Second)
	var next atomic.Int64
	var wg sync.WaitGroup
	var createErr atomic.Value
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= cfg.Tasks {
					return
				}
				_, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: fmt.Sprintf("t%07d", i), Owner: "bench", Kind: "noop",
					Interval: time.Hour, FirstRun: due})
				if err != nil {
					createErr.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := createErr.Load().(error); ok {
		return res, err
	}
	createS, createCPU := time.Since(createStart).Seconds(), cpuTime()-createCPU
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if time.Now().After(due) {
		return res, fmt.Errorf("creating %d tasks took %.1fs, past the due time; use fewer --tasks", cfg.Tasks, createS)
	}
	cfg.Progress.note("bench scheduler: created in %.1fs; waiting for %s, then every run...", createS, due.Format(time.RFC3339))

	var dueCPU, lastCPU atomic.Int64
	atDue := time.AfterFunc(time.Until(due), func() { dueCPU.Store(int64(cpuTime())) })
	defer atDue.Stop()
	head := store.Head()
	var completed atomic.Int64
	var lagMu sync.Mutex
	lags := make([]time.Duration, 0, cfg.Tasks)
	var last atomic.Int64
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go store.Subscribe(subCtx, head, func(r events.Recorded) error {
		switch r.Type {
		case "RunStarted":
			lagMu.Lock()
			lags = append(lags, r.At.Sub(due))
			lagMu.Unlock()
		case "RunCompleted":
			if completed.Add(1) == int64(cfg.Tasks) {
				last.Store(time.Now().UnixNano())
				lastCPU.Store(int64(cpuTime()))
				cancel()
			}
		}
		return nil
	})
	<-subCtx.Done()
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	runsS := time.Unix(0, last.Load()).Sub(due).Seconds()
	lagMu.Lock()
	slices.Sort(lags)
	res = SchedulerResult{Tasks: cfg.Tasks, Workers: cfg.Workers, CreateS: createS,
		HeapBytesPerTask: float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(cfg.Tasks),
		RunsS:            runsS, RunsPerS: float64(cfg.Tasks) / runsS, EventsPerS: 3 * float64(cfg.Tasks) / runsS,
		RawEventsPerS: raw.rate(),
		LagP50ms:      float64(percentile(lags, 50)) / 1e6, LagP99ms: float64(percentile(lags, 99)) / 1e6,
		CreateCPUusPerTask: float64(createCPU) / float64(time.Microsecond) / float64(cfg.Tasks),
		CPUusPerRun:        float64(lastCPU.Load()-dueCPU.Load()) / float64(time.Microsecond) / float64(cfg.Tasks)}
	lagMu.Unlock()
	res.Ratio = res.EventsPerS / res.RawEventsPerS
	return res, nil
}

// Text is the result as one line for people.
func (res SchedulerResult) Text() string {
	return fmt.Sprintf("tasks=%d workers=%d: all runs enqueued, started and completed in %.2fs = %.0f runs/s (%.0f durable decisions/s) | raw appends %.0f events/s | ratio %.2f | lag due→started p50 %.0fms p99 %.0fms | heap %.0f B/task | CPU %.1fµs/run, %.1fµs/task created",
		res.Tasks, res.Workers, res.RunsS, res.RunsPerS, res.EventsPerS, res.RawEventsPerS, res.Ratio, res.LagP50ms, res.LagP99ms, res.HeapBytesPerTask, res.CPUusPerRun, res.CreateCPUusPerTask)
}
