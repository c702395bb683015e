package worker

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/google/uuid"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkRunSpan is what a run's span costs a worker: nothing with
// tracing off (no TracerProvider), and the SDK's cost with it on (spans
// batched as in the daemon, to an exporter that drops them).
//
//	go test ./actors/worker -run '^$' -bench RunSpan -benchmem
func BenchmarkRunSpan(b *testing.B) {
	q := QueuedRun{TaskID: uuid.New(), RunID: uuid.New(), Run: 7, EnqueuedAt: time.Unix(0, 0)}
	run0 := &Run{TaskName: "poll", Owner: "channel/pop3/42", Kind: "http"}
	at := time.Unix(1, 0)
	cmd := rules.Complete{RunID: q.RunID}
	run := func(b *testing.B, rt runTracer) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			span := rt.start(q, run0)
			rt.started(span, at, at.Add(time.Minute))
			rt.ended(span, cmd, nil, nil, nil, at.Add(time.Minute), at)
		}
	}
	b.Run("off", func(b *testing.B) { run(b, newRunTracer(nil)) })
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
		defer tp.Shutdown(context.Background())
		run(b, newRunTracer(tp))
	})
}

// BenchmarkRunTrace is what tracing costs a run in all: the run span as in
// BenchmarkRunSpan, and the handler's call through the Tracing middleware
// (the handler span) under it, as the scheduler wires them. Off: no
// TracerProvider, so no middleware is added and the handler is called as it
// is.
//
//	go test ./actors/worker -run '^$' -bench 'RunSpan|RunTrace' -benchmem
func BenchmarkRunTrace(b *testing.B) {
	q := QueuedRun{TaskID: uuid.New(), RunID: uuid.New(), Run: 7, EnqueuedAt: time.Unix(0, 0)}
	run0 := &Run{TaskName: "poll", Owner: "channel/pop3/42", Kind: "http"}
	at := time.Unix(1, 0)
	cmd := rules.Complete{RunID: q.RunID}
	h := HandlerFunc(func(ctx context.Context, r *Run) (json.RawMessage, error) { return nil, nil })
	run := func(b *testing.B, tp trace.TracerProvider) {
		rt := newRunTracer(tp)
		hh := Chain(h, WithTracing(tp, nil)...)
		ctx := context.Background()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			span := rt.start(q, run0)
			rt.started(span, at, at.Add(time.Minute))
			if _, err := hh.Handle(rt.inContext(ctx, span), run0); err != nil {
				b.Fatal(err)
			}
			rt.ended(span, cmd, nil, nil, nil, at.Add(time.Minute), at)
		}
	}
	b.Run("off", func(b *testing.B) { run(b, nil) })
	b.Run("on", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}))
		defer tp.Shutdown(context.Background())
		run(b, tp)
	})
}
