package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/events/postgres"
)

// DefaultTick is the scheduler's tick in the scheduler measurement (and the
// restart's) when its Config names none.
const DefaultTick = 100 * time.Millisecond

// DefaultLagTick is the scheduler's tick in the lag measurement when its
// Config names none. A tick hands the workers every run that fell due
// since the last one at once, and at a load L of the peak that burst takes
// about L × the tick to start (each tick's own p99, measured at half load:
// 50.2 ms at a 100 ms tick, 24.6 ms at 50 ms, 10.2 ms at 25 ms): at half
// load the lag beyond the tick cannot be below half a tick. At 25 ms the
// burst leaves room under the bar of 50 ms for a tick that loses some CPU
// (docs/performance.md, "Lag at half load").
const DefaultLagTick = 25 * time.Millisecond

// SchedulerConfig says what `bench scheduler` measures.
type SchedulerConfig struct {
	// Tasks is the number of noop tasks, all due at once: 1 to 10,000,000.
	Tasks int
	// Workers is the scheduler's workers (and the raw-append writers of the
	// baseline): 1 to 10000.
	Workers int
	// Tick is the scheduler's tick: 0 (DefaultTick) or 1ms to 1h.
	Tick time.Duration
	// Dir is where the measured files go; empty: a new temporary directory,
	// removed afterwards.
	Dir string
	// Child starts the fresh process that reopens the data directory
	// (restart_s). Nil: the restart is not measured and reads 0.
	Child ChildCommand
	// Postgres, when set, is the connection URL of a PostgreSQL database:
	// the tasks, and the raw appends of the baseline, go to the Postgres
	// store (events/postgres) in a schema of this run's own there, dropped
	// afterwards, and the peers add River on the same database. The restart
	// is not measured on Postgres (restart_s reads 0).
	Postgres string
	// RiverWorkers, with Postgres, has River measured a second time with
	// this many workers (peers.river-N-workers), beside River with Workers
	// (peers.river): 0, not; 1 to 10000.
	RiverWorkers int
	// Peers says where the peer schedulers' program is.
	Peers Peers
	// Profiles, when set, are where the creation and the wave write Go CPU
	// and allocation profiles.
	Profiles Profiles
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
	if c.RiverWorkers < 0 || c.RiverWorkers > 10000 {
		return fmt.Errorf("bench: SchedulerConfig.RiverWorkers %d: want 0 to 10000", c.RiverWorkers)
	}
	if c.Tick != 0 && (c.Tick < time.Millisecond || c.Tick > time.Hour) {
		return fmt.Errorf("bench: SchedulerConfig.Tick %s: want 1ms to 1h", c.Tick)
	}
	return nil
}

func (c SchedulerConfig) tick() time.Duration {
	if c.Tick == 0 {
		return DefaultTick
	}
	return c.Tick
}

// SchedulerResult is the `bench scheduler` measurement. The fields named
// in DESIGN.md §6 (tasks, runs_per_s, events_per_s, raw_events_per_s,
// ratio, lag_p50_ms, lag_p99_ms, rss_bytes_per_task, restart_s) are a
// contract other programs parse: they keep their names and meaning.
type SchedulerResult struct {
	Tasks            int     `json:"tasks"`
	Workers          int     `json:"workers"`
	TickMs           float64 `json:"tick_ms"`
	CreateS          float64 `json:"create_s"`
	HeapBytesPerTask float64 `json:"heap_bytes_per_task"`
	RunsS            float64 `json:"runs_s"`
	RunsPerS         float64 `json:"runs_per_s"`
	EventsPerS       float64 `json:"events_per_s"`
	RawEventsPerS    float64 `json:"raw_events_per_s"`
	Ratio            float64 `json:"ratio"`
	LagP50ms         float64 `json:"lag_p50_ms"`
	LagP99ms         float64 `json:"lag_p99_ms"`
	// LagFirstMs is due → started of the wave's first run to start: how long
	// the first start waits behind the wave's enqueues.
	LagFirstMs float64 `json:"lag_first_ms"`

	// CreateCPUusPerTask and CPUusPerRun are the process's CPU time (user +
	// system) per task created and per run (due → every run completed):
	// other load on the machine barely moves them, unlike the rates. 0 where
	// the platform does not say.
	CreateCPUusPerTask float64 `json:"create_cpu_us_per_task"`
	CPUusPerRun        float64 `json:"cpu_us_per_run"`

	// CreateAllocsPerTask, AllocsPerRun and AllocBytesPerRun are the Go
	// heap allocations (runtime.MemStats Mallocs and TotalAlloc) of the
	// whole process per task created and per run, over the same spans as
	// the CPU figures: exact counts, whatever the machine's load.
	CreateAllocsPerTask float64 `json:"create_allocs_per_task"`
	AllocsPerRun        float64 `json:"allocs_per_run"`
	AllocBytesPerRun    float64 `json:"alloc_bytes_per_run"`

	// RSSBytesPerTask is the process's resident memory with every task
	// created and idle (before the wave), minus the same process before the
	// first was created, per task; both read after a GC that hands the
	// freed heap back to the OS. Linux only (/proc/self/statm):
	// RSSMeasured is false and the figure 0 elsewhere.
	RSSBytesPerTask float64 `json:"rss_bytes_per_task"`
	RSSMeasured     bool    `json:"rss_measured"`

	// RestartS is a fresh process (this program run again on the same data
	// directory) from just before its exec until the first tick after its
	// start has decided a run and that decision is durable: runtime start,
	// store open, recovery of every task, then one tick interval (R1: the
	// first tick is one tick after the start). RestartStartS is the part
	// inside the child from entering the measurement to the scheduler
	// started (open + recovery). RestartRSSBytesPerTask is the child's
	// resident memory once recovered and idle, minus its own before opening
	// the directory, per task (Linux only, as RSSBytesPerTask). All 0 when
	// the restart was not measured.
	RestartS               float64 `json:"restart_s"`
	RestartStartS          float64 `json:"restart_start_s"`
	RestartRSSBytesPerTask float64 `json:"restart_rss_bytes_per_task"`

	// Store is the store measured: "embedded" or "postgres".
	Store string `json:"store"`

	// Peers are the peer schedulers measured in the same run (empty when
	// not measured; PeersNote says why), by name: peers.river.runs_per_s.
	Peers     PeerResults `json:"peers"`
	PeersNote string      `json:"peers_note,omitempty"`

	// LoadAvg1m is the machine's 1-minute load average when the measurement
	// started (Linux, /proc/loadavg; 0 elsewhere): rates measured on a
	// machine busy with other work are not comparable.
	LoadAvg1m float64 `json:"load_avg_1m"`
}

// Scheduler creates cfg.Tasks noop tasks on the embedded store on
// disk, all due at the same instant, and measures how fast every run is
// enqueued, started and completed (three durable decisions each), with the
// scheduling lag (due → started) and the resident memory of the idle
// tasks. In the same run it measures the store's raw append rate with as
// many writers as the scheduler has workers (each run costs three appends,
// so the ratio compares events/s), then the restart of the data directory
// in a fresh process (cfg.Child), then the peers (cfg.Peers).
func Scheduler(ctx context.Context, cfg SchedulerConfig) (SchedulerResult, error) {
	if err := cfg.Validate(); err != nil {
		return SchedulerResult{}, err
	}
	res := SchedulerResult{Tasks: cfg.Tasks, Workers: cfg.Workers, TickMs: ms(cfg.tick()), LoadAvg1m: loadAverage(), Store: "embedded"}
	if cfg.Postgres != "" {
		return schedulerPostgres(ctx, cfg, res)
	}
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
	res.RawEventsPerS = raw.rate()
	dir := filepath.Join(base, "store")
	store, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		return res, err
	}
	defer store.Close()
	res, s, err := schedulerWave(ctx, cfg, res, store)
	if err != nil {
		return res, err
	}
	defer s.Stop(context.Background())

	if cfg.Child != nil {
		cfg.Progress.note("bench scheduler: stopping, then reopening %d tasks in a fresh process...", cfg.Tasks+1)
		probe, err := leaveProbe(ctx, s, store)
		if err != nil {
			return res, err
		}
		if err := store.Close(); err != nil {
			return res, err
		}
		r, err := measureRestart(ctx, cfg.Child, RestartChildConfig{Dir: dir, Probe: probe, Tick: cfg.tick(), Workers: cfg.Workers})
		if err != nil {
			return res, err
		}
		res.RestartS, res.RestartStartS = r.seconds, r.decided.StartS
		res.RestartRSSBytesPerTask = perTask(r.memory.RSSBeforeBytes, r.memory.RSSBytes, r.memory.RSSMeasured, cfg.Tasks+1)
	}
	res.Peers, res.PeersNote, err = cfg.Peers.measure(ctx, cfg.Tasks, cfg.Progress)
	return res, err
}

// schedulerPostgres is Scheduler on the Postgres store at cfg.Postgres, in
// a schema of its own, with River among the peers.
func schedulerPostgres(ctx context.Context, cfg SchedulerConfig, res SchedulerResult) (SchedulerResult, error) {
	res.Store = "postgres"
	url, drop, err := benchSchema(ctx, cfg.Postgres)
	if err != nil {
		return res, err
	}
	defer drop()
	cfg.Progress.note("bench scheduler: raw appends to Postgres with %d writers for 3s...", cfg.Workers)
	raw, err := benchPostgres(ctx, url, cfg.Workers, 3*time.Second)
	if err != nil {
		return res, err
	}
	res.RawEventsPerS = raw.rate()
	store, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		return res, err
	}
	defer store.Close()
	res, s, err := schedulerWave(ctx, cfg, res, store)
	if err != nil {
		return res, err
	}
	s.Stop(context.Background())
	res.Peers, res.PeersNote, err = cfg.Peers.measureOn(ctx, cfg.Tasks, peerArgs{postgres: cfg.Postgres, workers: cfg.Workers, tick: cfg.tick(), alsoWorkers: cfg.RiverWorkers}, cfg.Progress)
	return res, err
}

// waveStore is what a wave needs of its store: where the log ends, to
// follow it from there.
type waveStore interface {
	events.Store
	Head() events.Position
}

// schedulerWave starts a scheduler on store and measures the wave of
// cfg.Tasks due tasks on it; the caller stops the scheduler.
func schedulerWave(ctx context.Context, cfg SchedulerConfig, res SchedulerResult, store waveStore) (SchedulerResult, *scheduler.Scheduler, error) {
	s, err := scheduler.New(scheduler.Config{Store: store, Tick: cfg.tick(), Workers: cfg.Workers})
	if err != nil {
		return res, nil, err
	}
	s.Register("noop", kinds.Noop())
	if err := s.Start(ctx); err != nil {
		return res, nil, err
	}
	// Postgres creates fewer tasks a second than the embedded store: the
	// wave is due later there.
	rate := 2000
	if cfg.Postgres != "" {
		rate = 500
	}
	w, err := allDue(ctx, s, store, cfg.Tasks, rate, "bench scheduler", cfg.Profiles, cfg.Progress)
	if err != nil {
		s.Stop(context.Background())
		return res, nil, err
	}
	res.CreateS, res.HeapBytesPerTask, res.RSSBytesPerTask, res.RSSMeasured = w.createS, w.heapPerTask, w.rssPerTask, w.rssMeasured
	res.RunsS, res.RunsPerS, res.EventsPerS = w.runsS, float64(cfg.Tasks)/w.runsS, 3*float64(cfg.Tasks)/w.runsS
	res.LagP50ms, res.LagP99ms = ms(percentile(w.lags, 50)), ms(percentile(w.lags, 99))
	if len(w.lags) > 0 {
		res.LagFirstMs = ms(w.lags[0])
	}
	res.CreateCPUusPerTask, res.CPUusPerRun = w.createCPUusPerTask, w.cpuUsPerRun
	res.CreateAllocsPerTask, res.AllocsPerRun, res.AllocBytesPerRun = w.createAllocsPerTask, w.allocsPerRun, w.allocBytesPerRun
	res.Ratio = res.EventsPerS / res.RawEventsPerS
	return res, s, nil
}

// wave is what allDue measured.
type wave struct {
	createS             float64
	createCPUusPerTask  float64
	createAllocsPerTask float64
	heapPerTask         float64
	rssPerTask          float64
	rssMeasured         bool
	runsS               float64         // due → the last run completed
	lags                []time.Duration // due → started, sorted
	cpuUsPerRun         float64
	allocsPerRun        float64
	allocBytesPerRun    float64
}

// allDue creates n noop tasks on the started scheduler s, all due at one
// instant far enough ahead that creation ends first, measures the memory
// they hold while idle, and times the wave until every run completed. It
// writes the profiles prof names.
func allDue(ctx context.Context, s *scheduler.Scheduler, store waveStore, n, createRate int, name string, prof Profiles, progress Progress) (wave, error) {
	var w wave
	if err := prof.writeAllocs(".start"); err != nil {
		return w, err
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	rssBefore, rssOK := settledRSS()
	traceFile, err := prof.openTrace()
	if err != nil {
		return w, err
	}
	defer func() {
		if traceFile != nil { // the trace never started: no file
			traceFile.Close()
			os.Remove(traceFile.Name())
		}
	}()
	progress.note("%s: creating %d tasks...", name, n)
	stopCPU, err := prof.startCPU(".create")
	if err != nil {
		return w, err
	}
	createStart, createCPU := time.Now(), cpuTime()
	// All due at one instant, far enough ahead that creation finishes first
	// even at createRate tasks/s (on the embedded store 2,000: a 2-core
	// machine busy with other work creates about 2,700/s; an idle one about
	// 8,000/s; on Postgres 500: about 2,100/s at load average 15).
	due := createStart.Add(time.Duration(n/createRate+5) * time.Second).UTC().Truncate(time.Second)
	if err := createTasks(ctx, s, n, func(i int) scheduler.TaskSpec {
		return scheduler.TaskSpec{Name: fmt.Sprintf("t%07d", i), Owner: "bench", Kind: "noop", Interval: time.Hour, FirstRun: due}
	}); err != nil {
		stopCPU()
		return w, err
	}
	createS, createCPU := time.Since(createStart).Seconds(), cpuTime()-createCPU
	if err := stopCPU(); err != nil {
		return w, err
	}
	if err := prof.writeAllocs(".created"); err != nil {
		return w, err
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	rssAfter, ok := settledRSS()
	w.createS, w.createCPUusPerTask = createS, float64(createCPU)/float64(time.Microsecond)/float64(n)
	w.heapPerTask = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
	w.createAllocsPerTask = float64(after.Mallocs-before.Mallocs) / float64(n)
	w.rssMeasured = rssOK && ok
	w.rssPerTask = perTask(rssBefore, rssAfter, w.rssMeasured, n)
	if time.Now().After(due) {
		return w, fmt.Errorf("creating %d tasks took %.1fs, past the due time; use fewer --tasks", n, createS)
	}
	progress.note("%s: created in %.1fs; waiting for %s, then every run...", name, createS, due.Format(time.RFC3339))

	// The wave's CPU profile and trace start at the due instant: the wait
	// until then holds the store's compactions of what creating the tasks
	// wrote, which are not the wave's. (The subscription below starts at
	// the head taken now, so it misses nothing while this waits.)
	head := store.Head()
	if prof.wave() {
		select {
		case <-time.After(time.Until(due)):
		case <-ctx.Done():
			return w, ctx.Err()
		}
	}
	stopCPU, err = prof.startCPU("")
	if err != nil {
		return w, err
	}
	defer func() {
		if stopCPU != nil {
			stopCPU()
		}
	}()
	stopTrace, err := startTrace(traceFile)
	if err != nil {
		return w, err
	}
	traceFile = nil // stopTrace closes it
	defer func() {
		if stopTrace != nil {
			stopTrace()
		}
	}()
	var dueCPU, lastCPU atomic.Int64
	var dueMem, lastMem runtime.MemStats // written before dueCPU and lastCPU are stored
	atDue := time.AfterFunc(time.Until(due), func() {
		runtime.ReadMemStats(&dueMem)
		dueCPU.Store(int64(cpuTime()))
	})
	defer atDue.Stop()
	var completed atomic.Int64
	var lagMu sync.Mutex
	lags := make([]time.Duration, 0, n)
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
			if completed.Add(1) == int64(n) {
				last.Store(time.Now().UnixNano())
				lastCPU.Store(int64(cpuTime()))
				runtime.ReadMemStats(&lastMem)
				cancel()
			}
		}
		return nil
	})
	<-subCtx.Done()
	if ctx.Err() != nil {
		return w, ctx.Err()
	}
	err, stopCPU = stopCPU(), nil
	if err != nil {
		return w, err
	}
	err, stopTrace = stopTrace(), nil
	if err != nil {
		return w, err
	}
	if err := prof.writeAllocs(""); err != nil {
		return w, err
	}
	w.runsS = time.Unix(0, last.Load()).Sub(due).Seconds()
	lagMu.Lock()
	slices.Sort(lags)
	w.lags = lags
	lagMu.Unlock()
	w.cpuUsPerRun = float64(lastCPU.Load()-dueCPU.Load()) / float64(time.Microsecond) / float64(n)
	if dueCPU.Load() != 0 { // the due instant's reading happened before the last run completed
		w.allocsPerRun = float64(lastMem.Mallocs-dueMem.Mallocs) / float64(n)
		w.allocBytesPerRun = float64(lastMem.TotalAlloc-dueMem.TotalAlloc) / float64(n)
	}
	return w, nil
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Text is the result as lines for people: ours first, then the peers.
func (res SchedulerResult) Text() string {
	var b strings.Builder
	if res.Store == "postgres" {
		b.WriteString("store=postgres ")
	}
	fmt.Fprintf(&b, "tasks=%d workers=%d tick=%.0fms: all runs enqueued, started and completed in %.2fs = %.0f runs/s (%.0f durable decisions/s) | raw appends %.0f events/s | ratio %.2f | lag due→started p50 %.0fms p99 %.0fms | heap %.0f B/task, RSS %s/task | CPU %.1fµs/run, %.1fµs/task created | %.0f allocs (%.0f B)/run, %.0f allocs/task created",
		res.Tasks, res.Workers, res.TickMs, res.RunsS, res.RunsPerS, res.EventsPerS, res.RawEventsPerS, res.Ratio, res.LagP50ms, res.LagP99ms, res.HeapBytesPerTask,
		rssText(res.RSSBytesPerTask, res.RSSMeasured), res.CPUusPerRun, res.CreateCPUusPerTask, res.AllocsPerRun, res.AllocBytesPerRun, res.CreateAllocsPerTask)
	if res.RestartS > 0 {
		fmt.Fprintf(&b, "\nrestart in a fresh process: %.2fs to the first tick decided (open + recovery %.2fs, tick %.0fms) | RSS after recovery %.0f B/task",
			res.RestartS, res.RestartStartS, res.TickMs, res.RestartRSSBytesPerTask)
	}
	b.WriteString(peersText(res.Peers, res.PeersNote, res.RawEventsPerS))
	for _, p := range res.Peers {
		if p.Peer == "river" || strings.HasPrefix(p.Peer, "river-") {
			fmt.Fprintf(&b, "\ncronactor / %s: %.2f× (bar ≥ 1.5× on the same Postgres)", p.Peer, res.RunsPerS/p.RunsPerS)
		}
	}
	return b.String()
}

func rssText(perTask float64, measured bool) string {
	if !measured {
		return "n/a"
	}
	return fmt.Sprintf("%.0f B", perTask)
}

// peersText lists the peers under our line, with the raw store's limit as
// runs/s (three appends per run) for scale.
func peersText(peers []PeerResult, note string, raw float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nraw store limit: %.0f events/s = %.0f runs/s at 3 appends per run (durable, nothing scheduled)", raw, raw/3)
	for _, p := range peers {
		b.WriteString("\npeer " + p.Text())
	}
	if note != "" {
		b.WriteString("\npeers not measured: " + note)
	}
	return b.String()
}
