package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cronactor/cronactor/actors/worker"
	"github.com/google/uuid"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Tracing is the handler's part of a run's trace, a middleware like any
// other. Used alone (here around a handler called directly; in a service,
// in scheduler.Config.Middleware with no TracerProvider) each call is the
// root span of its own trace and names the run; under the scheduler's run
// span (Config.TracerProvider set) it is that span's child and names
// nothing the run span already does.
func ExampleTracing() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	h := worker.Chain(worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		return nil, errors.New("mailbox locked")
	}), worker.Tracing(tp))

	run := worker.NewRun(worker.Run{TaskID: uuid.New(), TaskName: "inbox", Owner: "channel/pop3/42", Kind: "sync",
		RunID: uuid.New(), Number: 3, Attempt: 1}, nil)
	_, err := h.Handle(context.Background(), run)
	fmt.Println("handler:", err)

	sp := spans.GetSpans()[0]
	fmt.Printf("%s: root %v, status %s %q\n", sp.Name, !sp.Parent.IsValid(), sp.Status.Code, sp.Status.Description)
	for _, kv := range sp.Attributes {
		if kv.Key != worker.AttrTaskID && kv.Key != worker.AttrRunID {
			fmt.Printf("  %s=%s\n", kv.Key, kv.Value.Emit())
		}
	}
	// Output:
	// handler: mailbox locked
	// handle sync: root true, status Error "mailbox locked"
	//   cronactor.task.name=inbox
	//   cronactor.task.owner=channel/pop3/42
	//   cronactor.task.kind=sync
	//   cronactor.run.number=3
	//   cronactor.run.attempt=1
}
