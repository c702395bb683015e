package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cronactor/cronactor/internal/tracing"
	"go.opentelemetry.io/otel/trace"
)

// tracingFlushTimeout bounds exporting the last spans at exit.
const tracingFlushTimeout = 5 * time.Second

// daemonTracing is the daemon's tracing, set up from the OTEL_* variables
// (docs/operations.md, "Tracing"); off unless they ask for it.
type daemonTracing struct {
	p      *tracing.Provider
	logger *slog.Logger
}

// checkTracingEnv refuses OTEL_* variables that ask for what this build
// cannot do, as a usage error (exit 2) before anything starts.
func checkTracingEnv(env *cliEnv) error {
	if _, err := tracing.Read(env.getenv); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

// newTracing reads the OTEL_* variables through env and, when they ask for
// tracing, creates the OTLP exporter. A variable asking for what this build
// cannot do is a usage error, before anything started.
func newTracing(ctx context.Context, env *cliEnv, logger *slog.Logger) (*daemonTracing, error) {
	p, err := tracing.New(ctx, env.getenv, tracing.Options{ServiceVersion: serviceVersion(), Logger: logger})
	if errors.Is(err, tracing.ErrConfig) {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	if err != nil {
		return nil, err
	}
	s := p.Settings
	if p.Enabled() {
		endpoint := s.Endpoint
		if endpoint == "" {
			endpoint = "the exporter's default (localhost)"
		}
		logger.Info("tracing on", "protocol", s.Protocol, "endpoint", endpoint, "because", s.Why)
	} else {
		logger.Info("tracing off", "because", s.Why)
	}
	return &daemonTracing{p: p, logger: logger}, nil
}

// provider is what the scheduler and the API are given: nil when tracing is
// off, so that they skip it altogether.
func (d *daemonTracing) provider() trace.TracerProvider {
	if !d.p.Enabled() {
		return nil
	}
	return d.p
}

// stop exports the spans still batched.
func (d *daemonTracing) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
	defer cancel()
	if err := d.p.Shutdown(ctx); err != nil {
		d.logger.Warn("tracing: spans not exported at exit", "err", err)
	}
}

// serviceVersion is the resource's service.version: the version
// `cronactor version` prints, unless it is a development build.
func serviceVersion() string {
	if v := readVersion().Version; v != "(devel)" {
		return v
	}
	return ""
}
