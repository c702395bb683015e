package worker

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// The outcome on a run's span is what the task actor recorded, also when it
// recorded it before the worker's report came.
func TestRunSpanOutcomes(t *testing.T) {
	t0 := time.Unix(1000, 0)
	deadline := t0.Add(time.Minute)
	id := uuid.New()
	unknown := fmt.Errorf("worker: task x: %w", rules.ErrUnknownRun)
	storeDown := errors.New("worker: task x: store: unavailable")
	for _, c := range []struct {
		name      string
		cmd       rules.Command
		recorded  events.Event // nil: nothing recorded
		handler   error
		report    error
		at        time.Time
		outcome   string
		reason    string
		status    codes.Code
		statusMsg string
		end       time.Time
	}{
		{"completed", rules.Complete{RunID: id}, events.RunCompleted{RunID: id}, nil, nil, t0, "completed", "", codes.Unset, "", t0},
		{"failed", rules.Fail{RunID: id, Error: "boom"}, events.RunFailed{RunID: id, Error: "boom"}, errors.New("boom"), nil, t0,
			"failed", "", codes.Error, "boom", t0},
		{"forced by the worker", rules.ForceEnd{RunID: id, Reason: events.ForcedTimebox}, events.RunForcedEnd{RunID: id, Reason: events.ForcedTimebox},
			nil, nil, deadline.Add(3 * time.Second), "forced_end", events.ForcedTimebox, codes.Error, "forced to end: timebox_exceeded", deadline},
		{"forced by the task actor at the deadline", rules.ForceEnd{RunID: id, Reason: events.ForcedTimebox}, nil, nil, unknown,
			deadline.Add(time.Second), "forced_end", events.ForcedTimebox, codes.Error, "forced to end: timebox_exceeded", deadline},
		{"forced by the task actor before the deadline", rules.Complete{RunID: id}, nil, nil, unknown,
			t0, "forced_end", "", codes.Error, "forced to end by the task", t0},
		{"completed, not recorded", rules.Complete{RunID: id}, nil, nil, storeDown,
			t0, "completed", "", codes.Error, "recording the outcome failed: " + storeDown.Error(), t0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			rt := newRunTracer(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
			span := rt.start(QueuedRun{TaskID: uuid.New(), RunID: id, Run: 1, EnqueuedAt: t0.Add(-time.Second)}, &Run{Kind: "k"})
			var d Decision
			if c.recorded != nil {
				d.Events = []events.Event{c.recorded}
			}
			rt.ended(span, c.cmd, d.Events, c.handler, c.report, deadline, c.at)
			ended := rec.Ended()
			if len(ended) != 1 {
				t.Fatalf("%d spans ended", len(ended))
			}
			s := ended[0]
			got := map[string]string{}
			for _, kv := range s.Attributes() {
				got[string(kv.Key)] = kv.Value.Emit()
			}
			if got[string(AttrOutcome)] != c.outcome || got[string(AttrReason)] != c.reason {
				t.Errorf("outcome %q reason %q, want %q %q", got[string(AttrOutcome)], got[string(AttrReason)], c.outcome, c.reason)
			}
			if s.Status().Code != c.status || s.Status().Description != c.statusMsg {
				t.Errorf("status %+v, want %v %q", s.Status(), c.status, c.statusMsg)
			}
			if !s.EndTime().Equal(c.end) {
				t.Errorf("ended at %s, want %s", s.EndTime(), c.end)
			}
		})
	}
}
