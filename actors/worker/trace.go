package worker

import (
	"context"
	"errors"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// TracerName is the instrumentation scope of the run spans.
const TracerName = "github.com/cronactor/cronactor/actors/worker"

// Attribute keys of a run's span (docs/operations.md, "Tracing").
const (
	AttrTaskID    = attribute.Key("cronactor.task.id")
	AttrTaskName  = attribute.Key("cronactor.task.name")
	AttrOwner     = attribute.Key("cronactor.task.owner")
	AttrKind      = attribute.Key("cronactor.task.kind")
	AttrRunID     = attribute.Key("cronactor.run.id")
	AttrRunNumber = attribute.Key("cronactor.run.number")
	AttrAttempt   = attribute.Key("cronactor.run.attempt")
	AttrOutcome   = attribute.Key("cronactor.run.outcome")
	AttrReason    = attribute.Key("cronactor.run.reason")
)

// Outcomes of a run, as its span's AttrOutcome.
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
	OutcomeForcedEnd = "forced_end"
	OutcomeDropped   = "dropped"
)

// runTracer makes one span per run a worker takes: it begins when the run
// was queued, carries an event when the run started and ends with the
// outcome. Spans only observe: their times are read from the pool's clock
// and nothing they do feeds back into a decision, so the virtual clock's
// runs stay deterministic with tracing on or off.
// Without a TracerProvider it does nothing at all: no attribute is built
// and the handler's context is left as it is.
type runTracer struct{ t trace.Tracer }

func newRunTracer(tp trace.TracerProvider) runTracer {
	if tp == nil {
		return runTracer{}
	}
	return runTracer{t: tp.Tracer(TracerName)}
}

// off is the span of every run when tracing is off.
var off trace.Span = noop.Span{}

// Span start options every span of a run has, made once: an option made
// per span is an allocation per span.
var (
	internalKind = trace.WithSpanKind(trace.SpanKindInternal)
	newRoot      = trace.WithNewRoot()
)

// start opens the span of run q, whose task's name, owner and kind run
// has, back-dated to when the run was queued.
func (rt runTracer) start(q QueuedRun, run *Run) trace.Span {
	if rt.t == nil {
		return off
	}
	if run == nil {
		run = &Run{} // a decision without its run: the span names what q does
	}
	name := "run " + run.Kind
	_, span := rt.t.Start(context.Background(), name, newRoot, internalKind, trace.WithTimestamp(q.EnqueuedAt),
		trace.WithAttributes(
			AttrTaskID.String(q.TaskID.String()), AttrTaskName.String(run.TaskName), AttrOwner.String(run.Owner),
			AttrKind.String(run.Kind), AttrRunID.String(q.RunID.String()), AttrRunNumber.Int(q.Run),
			AttrAttempt.Int(max(q.Attempt, 1))))
	return span
}

// inContext is the handler's context: parent carrying the run's span.
func (rt runTracer) inContext(parent context.Context, span trace.Span) context.Context {
	if rt.t == nil {
		return parent
	}
	return trace.ContextWithSpan(parent, span)
}

// dropped records a run refused at its start (R3, R7).
func (rt runTracer) dropped(q QueuedRun, d *Decision, at time.Time) {
	if rt.t == nil {
		return
	}
	span := rt.start(q, d.Run)
	attrs := []attribute.KeyValue{AttrOutcome.String(OutcomeDropped)}
	if e, ok := d.Events[0].(events.RunDropped); ok {
		attrs = append(attrs, AttrReason.String(e.Reason))
		span.AddEvent("dropped", trace.WithTimestamp(at), trace.WithAttributes(attribute.String("detail", e.Detail)))
	}
	span.SetAttributes(attrs...)
	span.End(trace.WithTimestamp(at))
}

// started marks the permission to start (R3) on the run's span.
func (rt runTracer) started(span trace.Span, at, deadline time.Time) {
	if !span.IsRecording() {
		return
	}
	span.AddEvent("started", trace.WithTimestamp(at),
		trace.WithAttributes(attribute.String("deadline", deadline.UTC().Format(time.RFC3339Nano))))
}

// ended closes the span with the run's outcome: the event the task actor
// recorded for the worker's report cmd (the first of evs), or, when it had already recorded
// one itself (its deadline timer forced the end first), a forced end.
// handlerErr is the handler's error; reportErr the failure to record the
// outcome, if any. A run forced to end at its timebox ends its span at the
// deadline, when that outcome was decided, however late the handler
// returned.
func (rt runTracer) ended(span trace.Span, cmd rules.Command, evs []events.Event, handlerErr, reportErr error, deadline, at time.Time) {
	if !span.IsRecording() {
		span.End()
		return
	}
	outcome, reason := OutcomeCompleted, ""
	switch c := cmd.(type) {
	case rules.Fail:
		outcome = OutcomeFailed
	case rules.ForceEnd:
		outcome, reason = OutcomeForcedEnd, c.Reason
	}
	if len(evs) > 0 {
		switch e := evs[0].(type) {
		case events.RunCompleted:
			outcome, reason = OutcomeCompleted, ""
		case events.RunFailed:
			outcome, reason = OutcomeFailed, ""
		case events.RunForcedEnd:
			outcome, reason = OutcomeForcedEnd, e.Reason
		}
	} else if errors.Is(reportErr, rules.ErrUnknownRun) {
		// The task actor had already forced the end: at the deadline if it
		// has passed, else for a reason of its own this span cannot see.
		outcome, reason, reportErr = OutcomeForcedEnd, "", nil
		if !at.Before(deadline) {
			reason = events.ForcedTimebox
		}
	}
	if outcome == OutcomeForcedEnd && reason == events.ForcedTimebox && deadline.Before(at) {
		at = deadline
	}
	span.SetAttributes(AttrOutcome.String(outcome))
	if reason != "" {
		span.SetAttributes(AttrReason.String(reason))
	}
	switch {
	case outcome == OutcomeFailed && handlerErr != nil:
		span.RecordError(handlerErr, trace.WithTimestamp(at))
		span.SetStatus(codes.Error, handlerErr.Error())
	case outcome == OutcomeForcedEnd && reason == "":
		span.SetStatus(codes.Error, "forced to end by the task")
	case outcome == OutcomeForcedEnd:
		span.SetStatus(codes.Error, "forced to end: "+reason)
	}
	if reportErr != nil {
		span.RecordError(reportErr, trace.WithTimestamp(at))
		span.SetStatus(codes.Error, "recording the outcome failed: "+reportErr.Error())
	}
	span.End(trace.WithTimestamp(at))
}

// abandoned closes the span of a run left running at shutdown: its outcome
// is recorded after the restart (R9), outside this span.
func (rt runTracer) abandoned(span trace.Span, at time.Time) {
	span.AddEvent("abandoned at shutdown", trace.WithTimestamp(at))
	span.End(trace.WithTimestamp(at))
}
