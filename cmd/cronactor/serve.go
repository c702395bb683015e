package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/events/esdb"
	"github.com/cronactor/cronactor/internal/httpapi"
	"github.com/cronactor/cronactor/projections/crontasks"
)

func init() {
	commands["serve"] = command{summary: "run the scheduler daemon with its HTTP API", run: runServe}
}

// serveConfig is the daemon's configuration, from flags or CRONACTOR_*
// environment variables (flags win).
type serveConfig struct {
	data         string
	listen       string
	tick         time.Duration
	store        string
	esdbURL      string
	token        string
	insecure     bool
	allowExec    bool
	logFormat    string
	workers      int
	drainTimeout time.Duration
	// acceptDataLoss lets the embedded store cut a damaged write-ahead log
	// (embedded.Options.AcceptDataLoss). A flag only, never from the
	// environment, so it cannot stay on by accident.
	acceptDataLoss bool
}

func (c serveConfig) validate() error {
	switch {
	case c.store != "embedded" && c.store != "esdb":
		return fmt.Errorf("%w: --store must be embedded or esdb, got %q", errUsage, c.store)
	case c.store == "esdb" && c.esdbURL == "":
		return fmt.Errorf("%w: --store esdb needs --esdb URL (or CRONACTOR_ESDB)", errUsage)
	case c.store == "embedded" && c.data == "":
		return fmt.Errorf("%w: --data must not be empty", errUsage)
	case c.tick < time.Millisecond:
		return fmt.Errorf("%w: --tick must be at least 1ms, got %s", errUsage, c.tick)
	case c.workers < 1 || c.workers > 100000:
		return fmt.Errorf("%w: --workers must be between 1 and 100000, got %d", errUsage, c.workers)
	case c.drainTimeout < 0:
		return fmt.Errorf("%w: --drain-timeout must not be negative", errUsage)
	case c.logFormat != "text" && c.logFormat != "json":
		return fmt.Errorf("%w: --log-format must be text or json, got %q", errUsage, c.logFormat)
	}
	host, _, err := net.SplitHostPort(c.listen)
	if err != nil {
		return fmt.Errorf("%w: --listen %q: %v", errUsage, c.listen, err)
	}
	if c.token == "" && !c.insecure && !isLoopback(host) {
		return fmt.Errorf("%w: refusing to listen on %s without --token; give a token, or --insecure to accept the risk", errUsage, c.listen)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func parseServeFlags(env *cliEnv, args []string) (serveConfig, error) {
	getenv := func(k, def string) string {
		if v := env.getenv("CRONACTOR_" + k); v != "" {
			return v
		}
		return def
	}
	durEnv := func(k string, def time.Duration) (time.Duration, error) {
		v := getenv(k, "")
		if v == "" {
			return def, nil
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return 0, fmt.Errorf("%w: CRONACTOR_%s: %v", errUsage, k, err)
		}
		return d, nil
	}
	boolEnv := func(k string) bool { b, _ := strconv.ParseBool(getenv(k, "false")); return b }
	var c serveConfig
	tick, err := durEnv("TICK", time.Second)
	if err != nil {
		return c, err
	}
	drain, err := durEnv("DRAIN_TIMEOUT", 30*time.Second)
	if err != nil {
		return c, err
	}
	workers, err := strconv.Atoi(getenv("WORKERS", "8"))
	if err != nil {
		return c, fmt.Errorf("%w: CRONACTOR_WORKERS: %v", errUsage, err)
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.StringVar(&c.data, "data", getenv("DATA", "./cronactor-data"), "data directory of the embedded store and the view (CRONACTOR_DATA)")
	fs.StringVar(&c.listen, "listen", getenv("LISTEN", "127.0.0.1:7070"), "HTTP listen address (CRONACTOR_LISTEN)")
	fs.DurationVar(&c.tick, "tick", tick, "clock tick (CRONACTOR_TICK)")
	fs.StringVar(&c.store, "store", getenv("STORE", "embedded"), "event store: embedded or esdb (CRONACTOR_STORE)")
	fs.StringVar(&c.esdbURL, "esdb", getenv("ESDB", ""), "EventStoreDB connection string, e.g. esdb://host:2113?tls=false (CRONACTOR_ESDB)")
	fs.StringVar(&c.token, "token", getenv("TOKEN", ""), "bearer token required on /v1 (CRONACTOR_TOKEN)")
	fs.BoolVar(&c.insecure, "insecure", boolEnv("INSECURE"), "allow a non-loopback listen address without a token (CRONACTOR_INSECURE)")
	fs.BoolVar(&c.allowExec, "allow-exec", boolEnv("ALLOW_EXEC"), "enable the exec handler kind (CRONACTOR_ALLOW_EXEC)")
	fs.BoolVar(&c.acceptDataLoss, "accept-data-loss", false, "embedded store: open even if the newest write-ahead log is damaged before its end, giving up the events after the damage; a copy of the log and a DATA_LOSS report are kept in the data directory (use once, on purpose)")
	fs.StringVar(&c.logFormat, "log-format", getenv("LOG_FORMAT", "text"), "log format: text or json (CRONACTOR_LOG_FORMAT)")
	fs.IntVar(&c.workers, "workers", workers, "runs executing at once (CRONACTOR_WORKERS)")
	fs.DurationVar(&c.drainTimeout, "drain-timeout", drain, "on SIGINT/SIGTERM, how long running runs may finish (CRONACTOR_DRAIN_TIMEOUT)")
	if err := fs.Parse(args); err != nil {
		return c, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: serve takes no arguments, got %q", errUsage, fs.Args())
	}
	return c, c.validate()
}

func runServe(ctx context.Context, env *cliEnv, args []string) error {
	cfg, err := parseServeFlags(env, args)
	if err != nil {
		return err
	}
	var handler slog.Handler = slog.NewTextHandler(env.stderr, nil)
	if cfg.logFormat == "json" {
		handler = slog.NewJSONHandler(env.stderr, nil)
	}
	logger := slog.New(handler)
	// One clock and logger for every component.
	arch := archetype.Archetype{Clock: clock.Real{}, Logger: logger}

	store, err := openStore(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer store.Close()
	m := newMetrics()
	timed := &timedStore{Store: store, observe: m.appendSeconds.Observe, failed: m.appendFailed}

	sched, err := scheduler.New(scheduler.Config{Store: timed, Tick: cfg.tick, Workers: cfg.workers, Clock: arch.Clock, Logger: arch.Logger})
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
	if cfg.allowExec {
		if err := sched.Register("exec", kinds.Exec()); err != nil {
			return err
		}
	}

	viewCfg := crontasks.Config{Store: store, Archetype: arch}
	if cfg.store == "embedded" {
		viewCfg.Dir = crontasks.DirIn(cfg.data)
	}
	view, err := crontasks.Open(viewCfg)
	if err != nil {
		return fmt.Errorf("open the cron_tasks view: %w", err)
	}
	defer view.Close()
	logger.Info("catching up the cron_tasks view", "checkpoint", view.Checkpoint().String())
	if err := view.CatchUp(ctx, nil); err != nil {
		return fmt.Errorf("catch up the cron_tasks view: %w", err)
	}
	runCtx, cancelRun := context.WithCancel(context.Background())
	defer cancelRun()
	viewDone := make(chan error, 1)
	go func() { viewDone <- view.Run(runCtx) }()

	if err := sched.Start(ctx); err != nil {
		return fmt.Errorf("start the scheduler: %w", err)
	}
	m.register(sched, view)
	go m.follow(runCtx, store, logger)

	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		stopCtx, cancel := context.WithTimeout(context.Background(), cfg.drainTimeout)
		defer cancel()
		sched.Stop(stopCtx)
		return fmt.Errorf("listen on %s: %w", cfg.listen, err)
	}
	// Shutdown waits for handlers; closing this ends the event streams.
	streamsDone := make(chan struct{})
	api := httpapi.New(httpapi.Config{Scheduler: sched, View: view, ViewConfig: crontasks.Config{Store: store}, Store: store,
		Token: cfg.token, Logger: logger, Metrics: m.handler(), Stream: httpapi.StreamConfig{Shutdown: streamsDone}})
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	srv.RegisterOnShutdown(func() { close(streamsDone) })
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	logger.Info("cronactor serving", "listen", ln.Addr().String(), "store", cfg.store, "data", cfg.data,
		"tick", cfg.tick.String(), "workers", cfg.workers, "exec", cfg.allowExec)
	fmt.Fprintf(env.stderr, "cronactor: listening on http://%s\n", ln.Addr())

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		return fmt.Errorf("http server: %w", err)
	case err := <-viewDone:
		if err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("cron_tasks view: %w", err)
		}
	}
	// A second signal exits at once; acknowledged events are durable already.
	again := make(chan os.Signal, 1)
	signal.Notify(again, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-again
		fmt.Fprintln(env.stderr, "cronactor: second signal, exiting now")
		os.Exit(1)
	}()
	logger.Info("shutting down: ticking stops, running runs may finish", "drain_timeout", cfg.drainTimeout.String())
	shutCtx, cancel := context.WithTimeout(context.Background(), cfg.drainTimeout)
	defer cancel()
	_ = srv.Shutdown(shutCtx)
	if err := sched.Stop(shutCtx); err != nil {
		logger.Error("scheduler stop", "err", err)
	}
	cancelRun()
	<-viewDone
	logger.Info("stopped")
	return nil
}

func openStore(ctx context.Context, cfg serveConfig, logger *slog.Logger) (events.Store, error) {
	if cfg.store == "esdb" {
		s, err := esdb.Open(ctx, cfg.esdbURL, esdb.Options{Logger: logger})
		if err != nil {
			return nil, fmt.Errorf("open EventStoreDB store: %w", err)
		}
		return s, nil
	}
	s, err := embedded.Open(cfg.data, embedded.Options{Logger: logger, AcceptDataLoss: cfg.acceptDataLoss})
	if err != nil {
		return nil, fmt.Errorf("open embedded store in %s: %w", cfg.data, err)
	}
	return s, nil
}

// timedStore measures append latency for the metrics.
type timedStore struct {
	events.Store
	observe func(float64)
	failed  func(error)
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

// Head passes the embedded store's head through, for read-your-writes.
func (t *timedStore) Head() events.Position {
	if h, ok := t.Store.(events.HeadReader); ok {
		return h.Head()
	}
	return events.Start
}
