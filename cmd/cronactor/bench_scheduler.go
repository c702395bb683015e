package main

import (
	"context"
	"encoding/json"
	"flag"
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

func init() {
	benchCommands["scheduler"] = command{
		summary: "N tasks all due at once: runs/s end to end next to the store's raw append rate",
		run:     runBenchScheduler,
	}
}

type schedulerBench struct {
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
}

// runBenchScheduler creates --tasks noop tasks on the embedded store on
// disk, all due at the same instant, and measures how fast every run is
// enqueued, started and completed (three durable decisions each), with the
// scheduling lag (due → started). In the same run it measures the store's
// raw append rate with as many writers as the scheduler has workers; each
// run costs three appends, so the ratio compares events/s.
func runBenchScheduler(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("bench scheduler", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	tasks := fs.Int("tasks", 100000, "tasks, all due at once")
	workers := fs.Int("workers", 64, "scheduler workers (and raw-append writers)")
	dir := fs.String("dir", "", "directory for the measured files (default: a new temporary directory)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *tasks < 1 || *tasks > 10_000_000 || *workers < 1 || *workers > 10000 {
		return fmt.Errorf("%w: --tasks must be 1..10000000 and --workers 1..10000", errUsage)
	}
	base, cleanup, err := benchDir(*dir)
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Fprintf(env.stderr, "bench scheduler: raw appends with %d writers for 3s...\n", *workers)
	raw, err := benchEmbedded(ctx, filepath.Join(base, "raw"), *workers, 3*time.Second)
	if err != nil {
		return err
	}
	store, err := embedded.Open(filepath.Join(base, "store"), embedded.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	s, err := scheduler.New(scheduler.Config{Store: store, Tick: 100 * time.Millisecond, Workers: *workers})
	if err != nil {
		return err
	}
	s.Register("noop", kinds.Noop())
	if err := s.Start(ctx); err != nil {
		return err
	}
	defer s.Stop(context.Background())

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	fmt.Fprintf(env.stderr, "bench scheduler: creating %d tasks...\n", *tasks)
	createStart := time.Now()
	// All due at one instant, far enough ahead that creation finishes first.
	due := createStart.Add(time.Duration(*tasks/5000+5) * time.Second).UTC().Truncate(time.Second)
	var next atomic.Int64
	var wg sync.WaitGroup
	var createErr atomic.Value
	for w := 0; w < 64; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= *tasks {
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
		return err
	}
	createS := time.Since(createStart).Seconds()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if time.Now().After(due) {
		return fmt.Errorf("creating %d tasks took %.1fs, past the due time; use fewer --tasks", *tasks, createS)
	}
	fmt.Fprintf(env.stderr, "bench scheduler: created in %.1fs; waiting for %s, then every run...\n", createS, due.Format(time.RFC3339))

	head := store.Head()
	var completed atomic.Int64
	var lagMu sync.Mutex
	lags := make([]time.Duration, 0, *tasks)
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
			if completed.Add(1) == int64(*tasks) {
				last.Store(time.Now().UnixNano())
				cancel()
			}
		}
		return nil
	})
	<-subCtx.Done()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	runsS := time.Unix(0, last.Load()).Sub(due).Seconds()
	lagMu.Lock()
	slices.Sort(lags)
	res := schedulerBench{Tasks: *tasks, Workers: *workers, CreateS: createS,
		HeapBytesPerTask: float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(*tasks),
		RunsS:            runsS, RunsPerS: float64(*tasks) / runsS, EventsPerS: 3 * float64(*tasks) / runsS,
		RawEventsPerS: raw.rate(),
		LagP50ms:      float64(percentile(lags, 50)) / 1e6, LagP99ms: float64(percentile(lags, 99)) / 1e6}
	lagMu.Unlock()
	res.Ratio = res.EventsPerS / res.RawEventsPerS
	if *asJSON {
		b, _ := json.Marshal(res)
		fmt.Fprintln(env.stdout, string(b))
		return nil
	}
	fmt.Fprintf(env.stdout, "tasks=%d workers=%d: all runs enqueued, started and completed in %.2fs = %.0f runs/s (%.0f durable decisions/s) | raw appends %.0f events/s | ratio %.2f | lag due→started p50 %.0fms p99 %.0fms | heap %.0f B/task\n",
		res.Tasks, res.Workers, res.RunsS, res.RunsPerS, res.EventsPerS, res.RawEventsPerS, res.Ratio, res.LagP50ms, res.LagP99ms, res.HeapBytesPerTask)
	return nil
}
