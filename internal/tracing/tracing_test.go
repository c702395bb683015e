package tracing_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/cronactor/cronactor/internal/tracing"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// clearOTEL unsets every OTEL_* variable of the process for the test: the
// SDK and the exporter read some of them themselves.
func clearOTEL(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OTEL_") {
			t.Setenv(k, "") // restored after the test
			os.Unsetenv(k)
		}
	}
}

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestRead(t *testing.T) {
	for _, c := range []struct {
		env      map[string]string
		on       bool
		protocol string
		endpoint string
		err      string
	}{
		{env: nil},
		{env: map[string]string{"OTEL_SERVICE_NAME": "x", "OTEL_TRACES_SAMPLER": "always_on"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, on: true, protocol: "http/protobuf", endpoint: "http://collector:4318"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://other"},
			on: true, protocol: "http/protobuf", endpoint: "http://c:4318/v1/traces"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true, protocol: "http/protobuf"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": " OTLP "}, on: true, protocol: "http/protobuf"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, on: true, protocol: "grpc"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"},
			on: true, protocol: "http/protobuf"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp,none"}},
		{env: map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}},
		{env: map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, on: true, protocol: "http/protobuf", endpoint: "http://c:4318"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: "OTEL_TRACES_EXPORTER"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp,console"}, err: "console"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "udp"}, err: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"},
	} {
		s, err := tracing.Read(envOf(c.env))
		if c.err != "" {
			if !errors.Is(err, tracing.ErrConfig) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: err %v, want ErrConfig naming %s", c.env, err, c.err)
			}
			continue
		}
		if err != nil || s.Enabled != c.on || s.Protocol != c.protocol || s.Endpoint != c.endpoint || s.Why == "" {
			t.Errorf("%v: %+v %v; want on=%v protocol=%q endpoint=%q and a reason", c.env, s, err, c.on, c.protocol, c.endpoint)
		}
	}
}

// kept is an in-memory exporter whose spans outlive the provider's
// Shutdown (which flushes the batch, then shuts the exporter down, and the
// in-memory exporter forgets its spans then).
type kept struct{ *tracetest.InMemoryExporter }

func (kept) Shutdown(context.Context) error { return nil }

// countingExporter counts the exporters made and hands out one in-memory
// exporter.
type countingExporter struct {
	mu    sync.Mutex
	made  int
	mem   *tracetest.InMemoryExporter
	asked []tracing.Settings
}

func (c *countingExporter) New(_ context.Context, s tracing.Settings) (sdktrace.SpanExporter, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.made++
	c.asked = append(c.asked, s)
	return kept{c.mem}, nil
}

// With no OTEL_* variable, nothing is exported and no exporter is created:
// the provider is the no-op one and its spans record nothing.
func TestOffByDefaultCreatesNoExporter(t *testing.T) {
	clearOTEL(t)
	for _, env := range []map[string]string{nil, {"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, {"OTEL_TRACES_EXPORTER": "none"}} {
		ce := &countingExporter{mem: tracetest.NewInMemoryExporter()}
		p, err := tracing.New(context.Background(), envOf(env), tracing.Options{NewExporter: ce.New})
		if err != nil {
			t.Fatal(err)
		}
		_, span := p.Tracer("test").Start(context.Background(), "x")
		recording, valid := span.IsRecording(), span.SpanContext().IsValid()
		span.End()
		if err := p.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if p.Enabled() || ce.made != 0 || len(ce.mem.GetSpans()) != 0 || recording || valid {
			t.Errorf("%v: enabled=%v exporters made=%d exported=%d recording=%v valid=%v; want nothing at all",
				env, p.Enabled(), ce.made, len(ce.mem.GetSpans()), recording, valid)
		}
	}
}

func TestOnExportsWithResource(t *testing.T) {
	clearOTEL(t)
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
	ce := &countingExporter{mem: tracetest.NewInMemoryExporter()}
	p, err := tracing.New(context.Background(), envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}),
		tracing.Options{ServiceVersion: "v1.2.3", NewExporter: ce.New})
	if err != nil {
		t.Fatal(err)
	}
	_, span := p.Tracer("test").Start(context.Background(), "x")
	span.End()
	if err := p.Shutdown(context.Background()); err != nil { // flushes the batch
		t.Fatal(err)
	}
	spans := ce.mem.GetSpans()
	if !p.Enabled() || ce.made != 1 || ce.asked[0].Protocol != tracing.ProtocolHTTP || len(spans) != 1 {
		t.Fatalf("enabled=%v made=%d asked=%+v spans=%d", p.Enabled(), ce.made, ce.asked, len(spans))
	}
	res := map[string]string{}
	for _, kv := range spans[0].Resource.Attributes() {
		res[string(kv.Key)] = kv.Value.Emit()
	}
	if res["service.name"] != "cronactor" || res["service.version"] != "v1.2.3" || res["deployment.environment"] != "test" || res["telemetry.sdk.language"] != "go" {
		t.Fatalf("resource %v", res)
	}
}

func TestServiceNameFromEnvironment(t *testing.T) {
	clearOTEL(t)
	t.Setenv("OTEL_SERVICE_NAME", "jobs-eu")
	ce := &countingExporter{mem: tracetest.NewInMemoryExporter()}
	p, err := tracing.New(context.Background(), envOf(map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}), tracing.Options{NewExporter: ce.New})
	if err != nil {
		t.Fatal(err)
	}
	_, span := p.Tracer("test").Start(context.Background(), "x")
	span.End()
	p.Shutdown(context.Background())
	if got, _ := spans0Resource(ce.mem, "service.name"); got != "jobs-eu" {
		t.Fatalf("service.name %q, want the environment's", got)
	}
}

func spans0Resource(m *tracetest.InMemoryExporter, key string) (string, bool) {
	s := m.GetSpans()
	if len(s) == 0 {
		return "", false
	}
	for _, kv := range s[0].Resource.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit(), true
		}
	}
	return "", false
}

// The real OTLP/HTTP exporter, configured by OTEL_EXPORTER_OTLP_ENDPOINT as
// the SDK reads it, posts the spans to the collector's /v1/traces.
func TestOTLPHTTPExporterPostsToTheEndpoint(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	var bodies int
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		bodies += len(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	// The exporter reads the process environment itself.
	clearOTEL(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	p, err := tracing.New(context.Background(), os.Getenv, tracing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Enabled() || p.Settings.Endpoint != collector.URL {
		t.Fatalf("settings %+v", p.Settings)
	}
	_, span := p.Tracer("test").Start(context.Background(), "run noop")
	span.End()
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) != 1 || paths[0] != "POST /v1/traces application/x-protobuf" || bodies == 0 {
		t.Fatalf("collector got %v (%d bytes)", paths, bodies)
	}
}

type failing struct{}

func (failing) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error {
	return errors.New("collector unreachable")
}
func (failing) Shutdown(context.Context) error { return nil }

// OpenTelemetry's own errors (here: a failed export) reach the daemon's
// logger, not a plain line on stderr.
func TestExportErrorsGoToTheLogger(t *testing.T) {
	clearOTEL(t)
	var logs syncBuffer
	p, err := tracing.New(context.Background(), envOf(map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}), tracing.Options{
		Logger:      slog.New(slog.NewJSONHandler(&logs, nil)),
		NewExporter: func(context.Context, tracing.Settings) (sdktrace.SpanExporter, error) { return failing{}, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	_, span := p.Tracer("test").Start(context.Background(), "x")
	span.End()
	p.Shutdown(context.Background())
	if got := logs.String(); !strings.Contains(got, `"level":"WARN","msg":"opentelemetry error","err":"collector unreachable"`) {
		t.Fatalf("log: %q", got)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// Read never panics; what it enables is always a supported protocol, and
// what it refuses is an ErrConfig.
func FuzzRead(f *testing.F) {
	f.Add("", "", "", "", "")
	f.Add("otlp", "http://c:4318", "grpc", "", "false")
	f.Add("otlp,none", "", "http/json", "http/protobuf", "TRUE")
	f.Add(" OTLP , ", "x", "", "grpc", "")
	f.Fuzz(func(t *testing.T, exporter, endpoint, proto, tracesProto, disabled string) {
		env := map[string]string{"OTEL_TRACES_EXPORTER": exporter, "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
			"OTEL_EXPORTER_OTLP_PROTOCOL": proto, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": tracesProto, "OTEL_SDK_DISABLED": disabled}
		s, err := tracing.Read(envOf(env))
		switch {
		case err != nil:
			if !errors.Is(err, tracing.ErrConfig) || s.Enabled {
				t.Fatalf("%v: %+v %v", env, s, err)
			}
		case s.Enabled:
			if s.Protocol != tracing.ProtocolHTTP && s.Protocol != tracing.ProtocolGRPC {
				t.Fatalf("%v: protocol %q", env, s.Protocol)
			}
		case s.Protocol != "" || s.Why == "":
			t.Fatalf("%v: off with %+v", env, s)
		}
	})
}
