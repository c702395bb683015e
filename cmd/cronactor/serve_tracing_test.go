package main

import (
	"bytes"
	"context"
	"errors"
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
		err := runServe(context.Background(), envOf(bad), []string{"--data", data, "--listen", "127.0.0.1:0"})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "OTEL_") {
			t.Errorf("%v: err %v, want a usage error naming the variable", bad, err)
		}
		if _, err := os.Stat(data); !os.IsNotExist(err) {
			t.Fatalf("%v: the data directory was created (%v)", bad, err)
		}
	}
}
