package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is the handler's part of a run's trace, as a Middleware: every
// call of the handler it wraps is a span named "handle <kind>", from the
// call to its return on the scheduler's clock, with status Error and the
// error recorded when the handler fails (a panic is recorded, then passed
// on to the worker, which records it as a failure). The handler's context
// carries the span, so the handler's own spans, and the traceparent the
// http kind sends, are its children.
//
// The run's other part stays with the pool (PoolConfig.TracerProvider): the
// run span from queued to the outcome the task actor recorded, which also
// covers runs dropped before any handler is called. When the handler's
// context carries that span the handler span is its child and carries no
// attribute of its own beyond its status; without it (Tracing used with no
// TracerProvider on the pool, or a Run built with NewRun) the handler span
// is the root of a trace of its own and carries the run's attributes
// (AttrTaskID … AttrAttempt).
//
// Placed in scheduler.Config.Middleware like any other, it sees exactly
// what its place in the chain sees (the first outermost). When
// scheduler.Config.TracerProvider is set and the chain holds no Tracing
// middleware, the scheduler puts Tracing(TracerProvider) first
// (WithTracing). Tracing(nil) wraps nothing.
func Tracing(tp trace.TracerProvider) Middleware {
	if tp == nil {
		return func(next Handler) Handler { return next }
	}
	t := tp.Tracer(TracerName)
	return func(next Handler) Handler { return &tracedHandler{t: t, next: next} }
}

// WithTracing is mws with Tracing(tp) put first, unless tp is nil or mws
// already holds a Tracing middleware (one that wraps a handler into
// Tracing's handler), which then stays where it is. The scheduler applies it
// to Config.Middleware. Finding one asks every middleware of mws to wrap a
// handler that is never called.
func WithTracing(tp trace.TracerProvider, mws []Middleware) []Middleware {
	if tp == nil {
		return mws
	}
	for _, mw := range mws {
		if mw == nil {
			continue
		}
		if _, ok := mw(probe{}).(*tracedHandler); ok {
			return mws
		}
	}
	return append([]Middleware{Tracing(tp)}, mws...)
}

// probe is the handler WithTracing has middlewares wrap to find Tracing's.
type probe struct{}

func (probe) Handle(context.Context, *Run) (json.RawMessage, error) {
	return nil, fmt.Errorf("%w: the tracing probe is never called", ErrNoHandler)
}

// tracedHandler is a handler wrapped by Tracing.
type tracedHandler struct {
	t    trace.Tracer
	next Handler
}

func (h *tracedHandler) Handle(ctx context.Context, run *Run) (cp json.RawMessage, err error) {
	opts := []trace.SpanStartOption{internalKind, trace.WithTimestamp(run.now())}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		opts = append(opts, trace.WithAttributes(
			AttrTaskID.String(run.TaskID.String()), AttrTaskName.String(run.TaskName), AttrOwner.String(run.Owner),
			AttrKind.String(run.Kind), AttrRunID.String(run.RunID.String()), AttrRunNumber.Int(run.Number),
			AttrAttempt.Int(max(run.Attempt, 1))))
	}
	ctx, span := h.t.Start(ctx, "handle "+run.Kind, opts...)
	defer func() {
		if p := recover(); p != nil {
			at := run.now()
			span.RecordError(fmt.Errorf("panic: %v", p), trace.WithTimestamp(at))
			span.SetStatus(codes.Error, fmt.Sprintf("panic: %v", p))
			span.End(trace.WithTimestamp(at))
			panic(p)
		}
	}()
	cp, err = h.next.Handle(ctx, run)
	at := run.now()
	if err != nil {
		span.RecordError(err, trace.WithTimestamp(at))
		span.SetStatus(codes.Error, err.Error())
	}
	span.End(trace.WithTimestamp(at))
	return cp, err
}

// now is the time on the clock the run's worker runs on (real time for a
// Run built with NewRun).
func (r *Run) now() time.Time {
	if r.beats != nil && r.beats.c != nil {
		return r.beats.c.Now()
	}
	return time.Now()
}
