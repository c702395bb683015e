// Package tracing turns the standard OpenTelemetry environment variables
// into the daemon's trace.TracerProvider. Tracing is off unless those
// variables ask for it: then the provider is OpenTelemetry's no-op one, no
// exporter is created and nothing leaves the process. When on, spans are
// batched and sent over OTLP (HTTP/protobuf by default, or gRPC) to a
// collector.
//
// This package is the only one that imports the OpenTelemetry SDK and its
// exporters. The rest of cronactor sees the small trace API only: the
// worker pool and the HTTP API take a trace.TracerProvider and treat nil as
// "no tracing" (see docs/decisions/0011-tracing.md).
//
// The variables this package reads itself (through the getenv it is given)
// decide whether tracing is on and over which protocol; the rest (endpoint,
// headers, TLS, timeout, compression, sampler, batching, resource) are read
// from the process environment by the SDK and the exporter, as every
// OpenTelemetry SDK does. docs/operations.md ("Tracing") lists them all.
//
// Concurrency: a Provider is safe for concurrent use.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.24.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ErrConfig: the OTEL_* variables ask for something this build cannot do
// (another exporter than OTLP, the http/json protocol). The error names the
// variable.
var ErrConfig = errors.New("tracing: unsupported configuration")

// The protocols of OTEL_EXPORTER_OTLP_PROTOCOL this package supports.
const (
	ProtocolHTTP = "http/protobuf" // the default, port 4318
	ProtocolGRPC = "grpc"          // port 4317
)

// Settings is what the environment asked for.
type Settings struct {
	// Enabled: spans are recorded and exported.
	Enabled bool
	// Protocol is ProtocolHTTP or ProtocolGRPC; empty when not Enabled.
	Protocol string
	// Endpoint is the collector address as configured (the traces-specific
	// variable first), or "" for the exporter's default
	// (localhost:4318 over HTTP, localhost:4317 over gRPC). For the log.
	Endpoint string
	// Why says in words which variable decided, for the start-up log.
	Why string
}

// Read decides from the OTEL_* variables whether tracing is on:
//   - OTEL_SDK_DISABLED=true turns it off, whatever else is set;
//   - OTEL_TRACES_EXPORTER=none turns it off; =otlp turns it on; any other
//     exporter name is an ErrConfig;
//   - unset OTEL_TRACES_EXPORTER: on when OTEL_EXPORTER_OTLP_ENDPOINT or
//     OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, off otherwise (the SDK's
//     own default would be on, sending to localhost; a scheduler that
//     nobody asked to trace should not).
//
// The protocol is OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else
// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf; grpc is the other one
// accepted.
func Read(getenv func(string) string) (Settings, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return Settings{Why: "OTEL_SDK_DISABLED=true"}, nil
	}
	endpoint, endpointVar := get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	if endpoint == "" {
		endpoint, endpointVar = get("OTEL_EXPORTER_OTLP_ENDPOINT"), "OTEL_EXPORTER_OTLP_ENDPOINT"
	}
	var s Settings
	switch exp := get("OTEL_TRACES_EXPORTER"); {
	case exp == "":
		if endpoint == "" {
			return Settings{Why: "no OTEL_TRACES_EXPORTER or OTLP endpoint set"}, nil
		}
		s.Why = endpointVar + " is set"
	default:
		otlp := false
		for _, name := range strings.Split(exp, ",") {
			switch name = strings.ToLower(strings.TrimSpace(name)); name {
			case "none":
				return Settings{Why: "OTEL_TRACES_EXPORTER=none"}, nil
			case "otlp":
				otlp = true
			case "":
			default:
				return Settings{}, fmt.Errorf("%w: OTEL_TRACES_EXPORTER: exporter %q is not supported (use otlp or none)", ErrConfig, name)
			}
		}
		if !otlp {
			return Settings{Why: "OTEL_TRACES_EXPORTER names no exporter"}, nil
		}
		s.Why = "OTEL_TRACES_EXPORTER=otlp"
	}
	protoVar := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	proto := get(protoVar)
	if proto == "" {
		protoVar = "OTEL_EXPORTER_OTLP_PROTOCOL"
		proto = get(protoVar)
	}
	switch proto {
	case "", ProtocolHTTP:
		s.Protocol = ProtocolHTTP
	case ProtocolGRPC:
		s.Protocol = ProtocolGRPC
	default:
		return Settings{}, fmt.Errorf("%w: %s: protocol %q is not supported (use http/protobuf or grpc)", ErrConfig, protoVar, proto)
	}
	s.Enabled, s.Endpoint = true, endpoint
	return s, nil
}

// Options are the parts of a Provider that do not come from the
// environment.
type Options struct {
	// ServiceVersion is the resource's service.version (the build's
	// version); empty: not set. The service name is "cronactor" unless
	// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise.
	ServiceVersion string
	// NewExporter makes the exporter when tracing is on. Nil: the OTLP
	// exporter for s.Protocol, configured by the OTEL_EXPORTER_OTLP_*
	// variables. Tests pass an in-memory one.
	NewExporter func(ctx context.Context, s Settings) (sdktrace.SpanExporter, error)
	// Logger, if set, receives OpenTelemetry's own errors (a failed export,
	// a bad OTEL_TRACES_SAMPLER) at WARN and its warnings at DEBUG, instead
	// of the standard library's log on stderr. This is process-wide: it sets
	// OpenTelemetry's global error handler and logger.
	Logger *slog.Logger
}

// Provider is the daemon's TracerProvider and what it takes to stop it.
type Provider struct {
	trace.TracerProvider
	// Settings is what the environment asked for.
	Settings Settings

	sdk *sdktrace.TracerProvider // nil when off
}

// New returns the Provider the environment asks for: with tracing off, the
// no-op provider and no exporter at all.
func New(ctx context.Context, getenv func(string) string, opts Options) (*Provider, error) {
	s, err := Read(getenv)
	if err != nil {
		return nil, err
	}
	if l := opts.Logger; l != nil {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { l.Warn("opentelemetry error", "err", err) }))
		otel.SetLogger(logr.FromSlogHandler(l.With("component", "opentelemetry").Handler()))
	}
	if !s.Enabled {
		return &Provider{TracerProvider: noop.NewTracerProvider(), Settings: s}, nil
	}
	newExp := opts.NewExporter
	if newExp == nil {
		newExp = otlpExporter
	}
	exp, err := newExp(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("tracing: create the OTLP %s exporter: %w", s.Protocol, err)
	}
	attrs := []resource.Option{resource.WithAttributes(semconv.ServiceName("cronactor"))}
	if opts.ServiceVersion != "" {
		attrs = append(attrs, resource.WithAttributes(semconv.ServiceVersion(opts.ServiceVersion)))
	}
	// Later options win: the environment's service name and attributes
	// override the defaults above.
	res, err := resource.New(ctx, append(attrs, resource.WithTelemetrySDK(), resource.WithFromEnv())...)
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("tracing: resource from OTEL_RESOURCE_ATTRIBUTES / OTEL_SERVICE_NAME: %w", err)
	}
	// The sampler (OTEL_TRACES_SAMPLER), the batching (OTEL_BSP_*) and the
	// span limits (OTEL_SPAN_*) are read by the SDK itself.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Provider{TracerProvider: tp, Settings: s, sdk: tp}, nil
}

// Enabled reports whether spans are recorded and exported.
func (p *Provider) Enabled() bool { return p.sdk != nil }

// Shutdown exports the spans still batched and stops the exporter, no
// longer than ctx lasts. Nothing to do when tracing is off.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p.sdk == nil {
		return nil
	}
	if err := p.sdk.Shutdown(ctx); err != nil {
		return fmt.Errorf("tracing: shutdown: %w", err)
	}
	return nil
}

// otlpExporter creates the OTLP exporter of s.Protocol. It reads its
// endpoint, headers, TLS files, timeout and compression from the
// OTEL_EXPORTER_OTLP_* variables itself, and does not connect yet.
func otlpExporter(ctx context.Context, s Settings) (sdktrace.SpanExporter, error) {
	if s.Protocol == ProtocolGRPC {
		return otlptracegrpc.New(ctx)
	}
	return otlptracehttp.New(ctx)
}
