package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events/embedded"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Tracing runs: give the scheduler a TracerProvider (a service builds one
// with the OpenTelemetry SDK and an OTLP exporter; nil means no tracing).
// Each run a worker takes is one span from when it was queued to its
// outcome ("run <kind>"); under it, the handler's call is a span of its own
// ("handle <kind>", the worker.Tracing middleware, which the scheduler puts
// first in Config.Middleware). The handler's context carries the handler
// span, so the handler's own spans are its children.
func Example_tracing() {
	store, _ := embedded.OpenMemory()
	defer store.Close()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(start)
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))

	s, _ := scheduler.New(scheduler.Config{Store: store, Clock: clk, Tick: 30 * time.Second, TracerProvider: tp,
		// The queue is slow: a run is picked up 5 s after it was queued.
		PickupDelay: func(worker.QueuedRun) time.Duration { return 5 * time.Second }})
	s.Register("sync", worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		_, child := tp.Tracer("example").Start(ctx, "fetch")
		defer child.End()
		return nil, clock.Sleep(ctx, clk, 10*time.Second)
	}))
	s.Start(context.Background())
	s.CreateTask(context.Background(), scheduler.TaskSpec{Name: "inbox", Owner: "channel/pop3/42", Kind: "sync",
		Interval: time.Minute, FirstRun: start.Add(30 * time.Second)})
	clk.RunUntil(start.Add(time.Minute))
	s.Stop(context.Background())

	byName := map[string]tracetest.SpanStub{}
	for _, sp := range spans.GetSpans() {
		byName[sp.Name] = sp
	}
	run, handle, fetch := byName["run sync"], byName["handle sync"], byName["fetch"]
	fmt.Printf("%s: queued %s, %s %s, ended %s\n", run.Name, run.StartTime.Sub(start),
		run.Events[0].Name, run.Events[0].Time.Sub(start), run.EndTime.Sub(start))
	for _, kv := range run.Attributes {
		if kv.Key != worker.AttrTaskID && kv.Key != worker.AttrRunID {
			fmt.Printf("  %s=%s\n", kv.Key, kv.Value.Emit())
		}
	}
	fmt.Printf("%s: called %s, returned %s\n", handle.Name, handle.StartTime.Sub(start), handle.EndTime.Sub(start))
	fmt.Println("handle sync is a child of the run:", handle.Parent.SpanID() == run.SpanContext.SpanID())
	fmt.Println("fetch is a child of handle sync:", fetch.Parent.SpanID() == handle.SpanContext.SpanID())
	// Output:
	// run sync: queued 30s, started 35s, ended 45s
	//   cronactor.task.name=inbox
	//   cronactor.task.owner=channel/pop3/42
	//   cronactor.task.kind=sync
	//   cronactor.run.number=1
	//   cronactor.run.attempt=1
	//   cronactor.run.outcome=completed
	// handle sync: called 35s, returned 45s
	// handle sync is a child of the run: true
	// fetch is a child of handle sync: true
}
