package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/events/esdb"
	"github.com/cronactor/cronactor/events/postgres"
	"github.com/cronactor/cronactor/internal/httpapi"
	"github.com/cronactor/cronactor/projections/crontasks"
)

func init() {
	commands["serve"] = command{summary: "run the scheduler daemon with its HTTP API", run: runServe}
}

func runServe(ctx context.Context, env *cliEnv, args []string) error {
	cfg, printConfig, err := parseServe(env, args)
	if err != nil {
		return err
	}
	if err := checkTracingEnv(env); err != nil {
		return err
	}
	if printConfig {
		return cfg.print(env.stdout)
	}
	logOut := env.stderr
	if cfg.logFile != "" {
		f, err := os.OpenFile(cfg.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
		if err != nil {
			return fmt.Errorf("%w: --log-file: %v", errUsage, err)
		}
		defer f.Close()
		logOut = f
	}
	logger := newLogger(logOut, cfg.logFormat)
	if err := serve(ctx, env, cfg, logger); err != nil {
		logger.Error("cronactor stopped on an error", "error", err)
		return &loggedError{err}
	}
	return nil
}

// loggedError is an error the daemon has logged already: main exits 1
// without printing it again, so the run keeps one log format.
type loggedError struct{ err error }

func (e *loggedError) Error() string { return e.err.Error() }
func (e *loggedError) Unwrap() error { return e.err }

// phases logs each start-up phase with how long it took.
type phases struct {
	logger *slog.Logger
	start  time.Time
	last   time.Time
}

func (p *phases) done(phase string, attrs ...any) {
	now := time.Now()
	p.logger.Info("start-up phase done", append([]any{"phase", phase, "duration", now.Sub(p.last)}, attrs...)...)
	p.last = now
}

// startup is what the listener serves until the API is ready: the phase
// under way and the store once open (httpapi.Starting), then the API.
type startup struct {
	phase atomic.Pointer[string]
	store atomic.Pointer[events.Store]
	api   atomic.Pointer[http.Handler]
	wait  http.Handler // httpapi.Starting on the above
}

func newStartup() *startup {
	u := &startup{}
	u.enter("open_store")
	u.wait = httpapi.Starting(httpapi.StartingConfig{
		Phase: func() string { return *u.phase.Load() },
		Store: func() events.Store {
			if st := u.store.Load(); st != nil {
				return *st
			}
			return nil
		}})
	return u
}

// enter says which phase is under way.
func (u *startup) enter(phase string) { u.phase.Store(&phase) }

func (u *startup) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h := u.api.Load(); h != nil {
		(*h).ServeHTTP(w, r)
		return
	}
	u.wait.ServeHTTP(w, r)
}

// serve runs the daemon: bind the listener first, so that a busy port
// fails before anything is opened or recorded; open the store and the view;
// recover the tasks and start ticking; then serve the API until ctx ends.
func serve(ctx context.Context, env *cliEnv, cfg serveConfig, logger *slog.Logger) error {
	ph := &phases{logger: logger, start: time.Now(), last: time.Now()}
	// One clock and logger for every component.
	arch := archetype.Archetype{Clock: clock.Real{}, Logger: logger}
	tracer, err := newTracing(ctx, env, logger)
	if err != nil {
		return err
	}
	defer tracer.stop()
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.listen, err)
	}
	defer ln.Close()
	ph.done("listen", "listen", ln.Addr().String())
	// The listener answers from now on: 503 with the phase under way (and
	// /healthz with the store's state) until the API is ready, so a probe
	// during a long start — a store that cannot be reached — gets an
	// answer rather than a connection that hangs.
	boot := newStartup()
	streamsDone := make(chan struct{}) // Shutdown waits for handlers; closing this ends the event streams
	srv := &http.Server{Handler: boot, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	srv.RegisterOnShutdown(func() { close(streamsDone) })
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	store, err := openStore(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer store.Close()
	defer srv.Close() // before the store, in a start that fails; after a graceful Shutdown, nothing
	boot.store.Store(&store)
	ph.done("open_store", "store", cfg.store)
	boot.enter("open_view")
	m := newMetrics()
	timed := &timedStore{Store: store, observe: m.appendSeconds.Observe, failed: m.appendFailed}

	sched, err := scheduler.New(scheduler.Config{Store: timed.withSnapshots(), Tick: cfg.tick, Workers: cfg.workers, Queues: cfg.queues, Clock: arch.Clock, Logger: arch.Logger,
		TracerProvider: tracer.provider(), HistoryRetention: cfg.historyRetention, RecoveryGC: raiseGCForRecovery})
	if err != nil {
		return err
	}
	must := func(kind string, h func() error) error {
		if err := h(); err != nil {
			return fmt.Errorf("register %s: %w", kind, err)
		}
		return nil
	}
	if err := errors.Join(
		must("noop", func() error { return sched.Register("noop", kinds.Noop()) }),
		must("http", func() error { return sched.Register("http", kinds.HTTP(nil)) }),
	); err != nil {
		return err
	}
	execKind := kinds.Disabled("exec tasks need a daemon started with --allow-exec")
	if cfg.allowExec {
		execKind = kinds.Exec()
	}
	if err := sched.Register("exec", execKind); err != nil {
		return err
	}

	viewCfg := crontasks.Config{Store: store, Archetype: arch, RebuildRate: cfg.viewRebuildRate}
	if cfg.store == "embedded" {
		viewCfg.Dir = crontasks.DirIn(cfg.data)
		// A `projections rebuild` killed before its swap left its partial
		// view behind; the store's lock, held now, says none runs.
		removed, err := crontasks.RemovePartialRebuild(viewCfg.Dir)
		if err != nil {
			return err
		}
		if removed {
			logger.Info("removed a partial view left by an interrupted projections rebuild", "dir", viewCfg.Dir+".rebuild")
		}
	}
	// The view is derived data: a damaged one is moved aside and rebuilt
	// in the background (Keeper); the scheduler never waits for it.
	view, err := crontasks.OpenKeeper(viewCfg)
	if err != nil {
		return fmt.Errorf("open the cron_tasks view: %w", err)
	}
	defer view.Close()
	ph.done("open_view", "position", view.Status().Position.String(), "view", view.Status().State)
	boot.enter("catch_up_view")
	if err := view.CatchUp(ctx); err != nil {
		return fmt.Errorf("catch up the cron_tasks view: %w", err)
	}
	ph.done("catch_up_view", "position", view.Status().Position.String(), "view", view.Status().State)
	runCtx, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	viewDone := make(chan error, 1)
	go func() { viewDone <- view.Run(runCtx) }()

	// Recovery reads the whole log: a progress line on a terminal.
	head := timed.Head()
	onRead := func(last events.Position) {
		env.progress.update(false, "recovering tasks: %d/%d events read", last.Commit, head.Commit)
	}
	timed.onRead.Store(&onRead)
	boot.enter("recover_tasks")
	err = sched.Start(ctx)
	timed.onRead.Store(nil)
	env.progress.done()
	if err != nil {
		return fmt.Errorf("start the scheduler: %w", err)
	}
	ph.done("recover_tasks", "tasks_in_memory", sched.Stats().Tasks)
	m.register(sched, view, store)
	go m.follow(runCtx, store, logger)

	api := httpapi.New(httpapi.Config{Scheduler: sched, Keeper: view, ViewConfig: crontasks.Config{Store: store}, Store: store,
		Token: cfg.token, Logger: logger, Metrics: m.handler(),
		Stream:         httpapi.StreamConfig{Shutdown: streamsDone, MaxSubscribers: capOf(cfg.maxStreamClients)},
		MaxAsOf:        capOf(cfg.maxAsOf),
		TracerProvider: tracer.provider()})
	boot.api.Store(&api)
	logger.Info("cronactor serving", "url", "http://"+ln.Addr().String(), "store", cfg.store, "data", cfg.data,
		"tick", cfg.tick, "workers", cfg.workers, "exec", cfg.allowExec, "startup", time.Since(ph.start))
	if env.ready != nil {
		env.ready(ln.Addr())
	}

	// Whatever the view does, the daemon goes on: Keeper.Run returns only
	// when runCtx ends.
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		stopSched(sched, cfg.drainTimeout, logger)
		return fmt.Errorf("http server: %w", err)
	}
	// A second signal exits at once; acknowledged events are durable already.
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(again)
	go func() {
		if _, ok := <-again; ok {
			logger.Warn("second signal: exiting now")
			os.Exit(1)
		}
	}()
	shutCtx, cancel := context.WithTimeout(context.Background(), cfg.drainTimeout)
	defer cancel()
	// First no run starts any more (a start already asked for is decided
	// first), then the line, then the HTTP server and the running runs.
	if err := sched.StopStarting(shutCtx); err != nil {
		logger.Error("scheduler stop", "error", err)
	}
	logger.Info("shutting down: ticking stopped, no run starts any more, running runs may finish", "drain_timeout", cfg.drainTimeout)
	_ = srv.Shutdown(shutCtx)
	if err := sched.Stop(shutCtx); err != nil {
		logger.Error("scheduler stop", "error", err)
	}
	cancelRun()
	<-viewDone
	logger.Info("stopped")
	return nil
}

// capOf is a serve flag's cap as httpapi takes it: the flag's 0 (no cap)
// is httpapi's negative.
func capOf(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

func stopSched(s *scheduler.Scheduler, d time.Duration, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		logger.Error("scheduler stop", "error", err)
	}
}

func openStore(ctx context.Context, cfg serveConfig, logger *slog.Logger) (events.Store, error) {
	if cfg.store == "esdb" {
		s, err := esdb.Open(ctx, cfg.esdbURL, esdb.Options{Logger: logger})
		if err != nil {
			return nil, fmt.Errorf("open EventStoreDB store: %w", err)
		}
		return s, nil
	}
	if cfg.store == "postgres" {
		s, err := postgres.Open(ctx, cfg.pgURL, postgres.Options{Logger: logger})
		if err != nil {
			return nil, fmt.Errorf("open Postgres store: %w", err)
		}
		return s, nil
	}
	s, err := embedded.Open(cfg.data, embedded.Options{Logger: logger, AcceptDataLoss: cfg.acceptDataLoss})
	if err != nil {
		return nil, fmt.Errorf("open embedded store in %s: %w", cfg.data, err)
	}
	return s, nil
}

// timedStore measures append latency for the metrics, and tells onRead
// (when set) how far a read of the global log got.
type timedStore struct {
	events.Store
	observe func(float64)
	failed  func(error)
	onRead  atomic.Pointer[func(events.Position)]
}

func (t *timedStore) ReadAll(ctx context.Context, after events.Position, limit int) ([]events.Recorded, error) {
	recs, err := t.Store.ReadAll(ctx, after, limit)
	if f := t.onRead.Load(); f != nil && len(recs) > 0 {
		(*f)(recs[len(recs)-1].Position)
	}
	return recs, err
}

func (t *timedStore) Append(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	start := time.Now()
	res, err := t.Store.Append(ctx, stream, exp, evs...)
	t.observe(time.Since(start).Seconds())
	if err != nil && t.failed != nil {
		t.failed(err)
	}
	return res, err
}

// AppendAsync passes the store's asynchronous appends through
// (events.AsyncAppender), measured as Append is.
func (t *timedStore) AppendAsync(ctx context.Context, stream string, exp events.ExpectedVersion, evs []events.Proposed, done func(events.AppendResult, error)) {
	start := time.Now()
	events.AppendAsync(ctx, t.Store, stream, exp, evs, func(res events.AppendResult, err error) {
		t.observe(time.Since(start).Seconds())
		if err != nil && t.failed != nil {
			t.failed(err)
		}
		done(res, err)
	})
}

// withSnapshots is t, and the snapshot table of t's store when it keeps
// one (events.SnapshotStore: the embedded store does), so that the
// scheduler reads its tasks from their snapshots at start. An interface
// field hides what its store has besides events.Store; the table passes
// through unmeasured.
func (t *timedStore) withSnapshots() events.Store {
	if ss, ok := t.Store.(events.SnapshotStore); ok {
		return &timedSnapshotStore{timedStore: t, SnapshotStore: ss}
	}
	return t
}

// timedSnapshotStore is a timedStore whose store keeps snapshots.
type timedSnapshotStore struct {
	*timedStore
	events.SnapshotStore
}

// ReadSnapshotKey passes the snapshot table's point read through
// (events.SnapshotReader), so that a task's load reads its record and the
// events after it; a table without one has no entry to give, and the load
// reads the whole stream.
func (t *timedSnapshotStore) ReadSnapshotKey(ctx context.Context, key []byte) ([]byte, bool, error) {
	if r, ok := t.SnapshotStore.(events.SnapshotReader); ok {
		return r.ReadSnapshotKey(ctx, key)
	}
	return nil, false, nil
}

// TruncateBefore passes history retention's removal through
// (events.Truncater; every store serve has implements it).
func (t *timedStore) TruncateBefore(ctx context.Context, stream string, before uint64) error {
	tr, ok := t.Store.(events.Truncater)
	if !ok {
		return fmt.Errorf("%w: the %T store cannot remove events", errors.ErrUnsupported, t.Store)
	}
	return tr.TruncateBefore(ctx, stream, before)
}

// SharedLog passes through whether others append to the store's log
// (events.SharedLog: the Postgres store, where embedders write tasks in
// their own transactions), so that the scheduler follows it.
func (t *timedStore) SharedLog() bool {
	sl, ok := t.Store.(events.SharedLog)
	return ok && sl.SharedLog()
}

// Head passes the embedded store's head through, for read-your-writes.
func (t *timedStore) Head() events.Position {
	if h, ok := t.Store.(events.HeadReader); ok {
		return h.Head()
	}
	return events.Start
}
