package tracing_test

import (
	"fmt"

	"github.com/cronactor/cronactor/internal/tracing"
)

// Tracing is on when an OTLP endpoint is configured, off with nothing set,
// and off again with OTEL_SDK_DISABLED=true.
func ExampleRead() {
	for _, env := range []map[string]string{
		nil,
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
		{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"},
	} {
		s, err := tracing.Read(func(k string) string { return env[k] })
		fmt.Printf("on=%v protocol=%q because %s (err %v)\n", s.Enabled, s.Protocol, s.Why, err)
	}
	// Output:
	// on=false protocol="" because no OTEL_TRACES_EXPORTER or OTLP endpoint set (err <nil>)
	// on=true protocol="http/protobuf" because OTEL_EXPORTER_OTLP_ENDPOINT is set (err <nil>)
	// on=true protocol="grpc" because OTEL_TRACES_EXPORTER=otlp (err <nil>)
	// on=false protocol="" because OTEL_SDK_DISABLED=true (err <nil>)
}
