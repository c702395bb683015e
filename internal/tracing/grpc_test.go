package tracing_test

import (
	"context"
	"net"
	"os"
	"sync"
	"testing"

	"github.com/cronactor/cronactor/internal/tracing"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// grpcCollector keeps the names of the spans exported to it.
type grpcCollector struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (c *grpcCollector) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				c.names = append(c.names, s.Name)
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports over gRPC to the endpoint.
func TestOTLPGRPCExporter(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	col := &grpcCollector{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, col)
	go srv.Serve(ln)
	defer srv.Stop()

	clearOTEL(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	p, err := tracing.New(context.Background(), os.Getenv, tracing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Settings.Protocol != tracing.ProtocolGRPC {
		t.Fatalf("settings %+v", p.Settings)
	}
	_, span := p.Tracer("test").Start(context.Background(), "run exec")
	span.End()
	if err := p.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.names) != 1 || col.names[0] != "run exec" {
		t.Fatalf("collector got %v", col.names)
	}
}
