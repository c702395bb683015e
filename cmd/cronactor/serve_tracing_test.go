package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With no OTEL_* variable the daemon hands no TracerProvider to the
// scheduler or the API, and says so once in its log.
func TestServeTracingOffByDefault(t *testing.T) {
	var logs bytes.Buffer
	env := envOf(nil)
	tr, err := newTracing(context.Background(), env, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.stop()
	if tr.provider() != nil || tr.p.Enabled() {
		t.Fatalf("tracing on without any OTEL_* variable: %+v", tr.p.Settings)
	}
	if !strings.Contains(logs.String(), "tracing off") {
		t.Fatalf("log: %s", logs.String())
	}
}

// An OTEL_* variable asking for what this build cannot do is a usage error
// before anything is opened.
func TestServeRefusesUnsupportedTracingConfig(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	for _, bad := range []map[string]string{
		{"OTEL_TRACES_EXPORTER": "zipkin"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
	} {
		var stderr bytes.Buffer
		env := envOf(bad)
		env.stderr = &stderr
		code := runMain(context.Background(), env, []string{"serve", "--data", data, "--listen", "127.0.0.1:0"})
		if code != 2 || !strings.Contains(stderr.String(), "cronactor: tracing: unsupported configuration: OTEL_") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a line naming the variable", bad, code, stderr.String())
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Fatalf("%v: the data directory was created (%v)", bad, err)
		}
	}
}
