package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
)

// BacklogConfig says what `bench backlog` measures: a scheduler that cannot
// keep up (Tasks tasks due every Interval, Workers workers, each run taking
// Work) for Duration, then the restart and the drain of what it left.
type BacklogConfig struct {
	// Tasks is the number of tasks, all first due at once: 1 to 1,000,000.
	Tasks int
	// Workers is the scheduler's workers: 1 to 10000.
	Workers int
	// Tick and Interval are the clock's period and every task's interval
	// (at least 1 s).
	Tick, Interval time.Duration
	// Work is how long each run's handler works.
	Work time.Duration
	// Duration is how long the overload lasts.
	Duration time.Duration
	// Dir is where the measured files go; empty: a new temporary directory,
	// removed afterwards.
	Dir      string
	Progress Progress
}

// Validate reports a field out of its limits.
func (c BacklogConfig) Validate() error {
	switch {
	case c.Tasks < 1 || c.Tasks > 1_000_000:
		return fmt.Errorf("bench: BacklogConfig.Tasks %d: want 1 to 1000000", c.Tasks)
	case c.Workers < 1 || c.Workers > 10000:
		return fmt.Errorf("bench: BacklogConfig.Workers %d: want 1 to 10000", c.Workers)
	case c.Tick < time.Millisecond:
		return fmt.Errorf("bench: BacklogConfig.Tick %s: want at least 1ms", c.Tick)
	case c.Interval < time.Second:
		return fmt.Errorf("bench: BacklogConfig.Interval %s: want at least 1s", c.Interval)
	case c.Work < 0:
		return fmt.Errorf("bench: BacklogConfig.Work %s: want 0 or more", c.Work)
	case c.Duration < time.Second:
		return fmt.Errorf("bench: BacklogConfig.Duration %s: want at least 1s", c.Duration)
	}
	return nil
}

// BacklogResult is the `bench backlog` measurement.
type BacklogResult struct {
	Tasks    int     `json:"tasks"`
	Workers  int     `json:"workers"`
	Seconds  float64 `json:"seconds"`
	Enqueued int64   `json:"enqueued"`
	// Backlog counts enqueues with the reason backlog (R18).
	Backlog   int64 `json:"backlog_enqueued"`
	Started   int64 `json:"started"`
	Completed int64 `json:"completed"`
	TooSoon   int64 `json:"dropped_too_soon"`
	// QueuePeak and QueueAtStop are the runs waiting in the queue: the most
	// at any sample (every 100 ms), and when the overload ended.
	QueuePeak   int64 `json:"queue_peak"`
	QueueAtStop int64 `json:"queue_at_stop"`
	// LogEvents counts the events recorded; StoreBytes is the size of the
	// store's directory after the overload.
	LogEvents  int64 `json:"log_events"`
	StoreBytes int64 `json:"store_bytes"`
	// RestartS is reopening the store and starting a scheduler on it (every
	// task recovered, waiting runs back in the queue); DrainS is then the
	// time until no run waits or runs, with no tick falling due.
	RestartS float64 `json:"restart_s"`
	DrainS   float64 `json:"drain_s"`
}

// Backlog runs cfg.Tasks tasks on the embedded store on disk with too few
// workers for cfg.Duration on the real clock and counts what the queue and
// the log did; then it stops the scheduler without draining (as a crash
// would leave it), reopens the directory, and times the restart and the
// drain of the runs left waiting.
func Backlog(ctx context.Context, cfg BacklogConfig) (BacklogResult, error) {
	res := BacklogResult{Tasks: cfg.Tasks, Workers: cfg.Workers}
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	base, cleanup, err := workDir(cfg.Dir)
	if err != nil {
		return res, err
	}
	defer cleanup()
	dir := filepath.Join(base, "store")
	store, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		return res, err
	}
	defer func() { store.Close() }()
	s, err := scheduler.New(scheduler.Config{Store: store, Tick: cfg.Tick, Workers: cfg.Workers})
	if err != nil {
		return res, err
	}
	c := clock.Real{}
	work := cfg.Work
	s.Register("slow", worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		return nil, clock.Sleep(ctx, c, work)
	}))
	if err := s.Start(ctx); err != nil {
		return res, err
	}
	stopped := false
	stopNow := func(s *scheduler.Scheduler) {
		cctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = s.Stop(cctx)
	}
	defer func() {
		if !stopped {
			stopNow(s)
		}
	}()

	cfg.Progress.note("bench backlog: creating %d tasks...", cfg.Tasks)
	due := time.Now().Add(time.Duration(cfg.Tasks/2000+2) * time.Second).UTC().Truncate(time.Second)
	if err := createTasks(ctx, s, cfg.Tasks, func(i int) scheduler.TaskSpec {
		return scheduler.TaskSpec{Name: fmt.Sprintf("b%07d", i), Owner: "bench", Kind: "slow", Interval: cfg.Interval, FirstRun: due}
	}); err != nil {
		return res, err
	}

	var enq, backlog, started, completed, tooSoon, total atomic.Int64
	subCtx, cancelSub := context.WithCancel(ctx)
	defer cancelSub()
	subDone := make(chan struct{})
	go func() {
		defer close(subDone)
		_ = store.Subscribe(subCtx, store.Head(), func(r events.Recorded) error {
			total.Add(1)
			switch r.Type {
			case "RunEnqueued":
				enq.Add(1)
				var body struct {
					Reason string `json:"reason"`
				}
				if json.Unmarshal(r.Data, &body) == nil && body.Reason == "backlog" {
					backlog.Add(1)
				}
			case "RunStarted":
				started.Add(1)
			case "RunCompleted":
				completed.Add(1)
			case "RunDropped":
				var body struct {
					Reason string `json:"reason"`
				}
				if json.Unmarshal(r.Data, &body) == nil && body.Reason == "too_soon" {
					tooSoon.Add(1)
				}
			}
			return nil
		})
	}()
	time.Sleep(time.Until(due))
	cfg.Progress.note("bench backlog: overload for %s...", cfg.Duration)
	end := time.Now().Add(cfg.Duration)
	for time.Now().Before(end) {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		res.QueuePeak = max(res.QueuePeak, s.Stats().Queued)
		time.Sleep(100 * time.Millisecond)
	}
	res.QueueAtStop = s.Stats().Queued
	res.QueuePeak = max(res.QueuePeak, res.QueueAtStop)
	res.Seconds = cfg.Duration.Seconds()
	stopNow(s)
	stopped = true
	// Let the subscription read what was recorded up to the stop.
	for last := int64(-1); last != total.Load(); {
		last = total.Load()
		time.Sleep(200 * time.Millisecond)
	}
	cancelSub()
	<-subDone
	res.Enqueued, res.Backlog, res.Started, res.Completed, res.TooSoon, res.LogEvents =
		enq.Load(), backlog.Load(), started.Load(), completed.Load(), tooSoon.Load(), total.Load()
	if err := store.Close(); err != nil {
		return res, err
	}
	res.StoreBytes = dirSize(dir)

	cfg.Progress.note("bench backlog: restarting on %d events...", res.LogEvents)
	t0 := time.Now()
	store, err = embedded.Open(dir, embedded.Options{})
	if err != nil {
		return res, err
	}
	// No tick falls due while the queue drains: only what the overload left.
	s2, err := scheduler.New(scheduler.Config{Store: store, Tick: time.Hour, Workers: cfg.Workers})
	if err != nil {
		return res, err
	}
	s2.Register("slow", kinds.Noop())
	if err := s2.Start(ctx); err != nil {
		return res, err
	}
	defer stopNow(s2)
	res.RestartS = time.Since(t0).Seconds()
	cfg.Progress.note("bench backlog: restarted in %.1fs; draining...", res.RestartS)
	t1 := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		st := s2.Stats()
		if st.Queued == 0 && st.Busy == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	res.DrainS = time.Since(t1).Seconds()
	return res, nil
}

// createTasks creates n tasks with 64 callers at once.
func createTasks(ctx context.Context, s *scheduler.Scheduler, n int, spec func(int) scheduler.TaskSpec) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var createErr atomic.Value
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if _, _, err := s.CreateTask(ctx, spec(i)); err != nil {
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
	return nil
}

// dirSize sums the sizes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// Text is the result as one line for people.
func (res BacklogResult) Text() string {
	return fmt.Sprintf("tasks=%d workers=%d for %.0fs: queue peak %d (at stop %d) | enqueued %d (backlog %d), started %d, completed %d, dropped too_soon %d | log %d events, %.1f MiB | restart %.2fs, drain %.2fs",
		res.Tasks, res.Workers, res.Seconds, res.QueuePeak, res.QueueAtStop, res.Enqueued, res.Backlog, res.Started, res.Completed,
		res.TooSoon, res.LogEvents, float64(res.StoreBytes)/(1<<20), res.RestartS, res.DrainS)
}
