package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// traced is a scheduler on a virtual clock and the in-memory store, whose
// run spans go to exp (nil: no TracerProvider at all).
func traced(t *testing.T, exp *tracetest.InMemoryExporter, delay func(worker.QueuedRun) time.Duration, handlers func(*clock.Virtual) map[string]worker.Handler) (*scheduler.Scheduler, *clock.Virtual, *embedded.Store) {
	t.Helper()
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := clock.NewVirtual(t0)
	cfg := scheduler.Config{Store: st, Clock: clk, Tick: 30 * time.Second, Workers: 4, PickupDelay: delay}
	if exp != nil {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		t.Cleanup(func() { tp.Shutdown(context.Background()) })
		cfg.TracerProvider = tp
	}
	s, err := scheduler.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for k, h := range handlers(clk) {
		if err := s.Register(k, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s.Stop(ctx) // no drain: nobody moves the virtual clock any more
	})
	return s, clk, st
}

// works takes d on the clock, then returns err.
func works(c clock.Clock, d time.Duration, err error) worker.Handler {
	return worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		if e := clock.Sleep(ctx, c, d); e != nil {
			return nil, e
		}
		return nil, err
	})
}

func attrs(s tracetest.SpanStub) map[attribute.Key]string {
	m := map[attribute.Key]string{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value.Emit()
	}
	return m
}

// spanOf returns the one span of run number n of the task named task.
func spanOf(t *testing.T, exp *tracetest.InMemoryExporter, task string, n int) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		a := attrs(s)
		if a[worker.AttrTaskName] == task && a[worker.AttrRunNumber] == fmt.Sprint(n) {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans for run %s%d, want 1; all spans: %v", len(found), task, n, names(exp))
	}
	return found[0]
}

// handlerSpanOf returns the one handler span ("handle <kind>") whose
// parent is the run span run.
func handlerSpanOf(t *testing.T, exp *tracetest.InMemoryExporter, run tracetest.SpanStub) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if strings.HasPrefix(s.Name, "handle ") && s.Parent.SpanID() == run.SpanContext.SpanID() {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d handler spans under %s, want 1; all spans: %v", len(found), run.Name, names(exp))
	}
	if found[0].Parent.TraceID() != run.SpanContext.TraceID() {
		t.Fatalf("handler span in trace %s, want the run's %s", found[0].Parent.TraceID(), run.SpanContext.TraceID())
	}
	return found[0]
}

func names(exp *tracetest.InMemoryExporter) []string {
	var out []string
	for _, s := range exp.GetSpans() {
		a := attrs(s)
		out = append(out, fmt.Sprintf("%s %s%s %s", s.Name, a[worker.AttrTaskName], a[worker.AttrRunNumber], a[worker.AttrOutcome]))
	}
	return out
}

// trail is the task's stream as "offset type" lines: what was decided.
func trail(t *testing.T, st events.Store, id fmt.Stringer) string {
	t.Helper()
	recs, err := st.ReadStream(context.Background(), "task-"+id.String(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%s %s\n", r.At.Sub(t0), r.Type)
	}
	return b.String()
}

// The worked example of the brief (A1 queued 00:30, started 00:35, ended
// 00:45): one span from queued to outcome, the start as an event, every
// attribute; and the same decisions as without tracing.
func TestRunSpanFromQueuedToOutcome(t *testing.T) {
	var trails []string
	var exp *tracetest.InMemoryExporter
	for _, on := range []bool{false, true} {
		if on {
			exp = tracetest.NewInMemoryExporter()
		} else {
			exp = nil
		}
		s, clk, st := traced(t, exp, func(r worker.QueuedRun) time.Duration { return 5 * time.Second },
			func(c *clock.Virtual) map[string]worker.Handler {
				return map[string]worker.Handler{"work10": works(c, 10*time.Second, nil)}
			})
		task, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: "A", Owner: "channel/pop3/42", Kind: "work10",
			Interval: time.Minute, FirstRun: t0.Add(30 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		clk.RunUntil(t0.Add(50 * time.Second))
		trails = append(trails, trail(t, st, task.ID))
		if !on {
			continue
		}
		sp := spanOf(t, exp, "A", 1)
		if sp.Name != "run work10" || sp.SpanKind != trace.SpanKindInternal || sp.Parent.IsValid() {
			t.Errorf("span %q kind %v parent %v: want a root internal span named \"run work10\"", sp.Name, sp.SpanKind, sp.Parent)
		}
		if !sp.StartTime.Equal(t0.Add(30*time.Second)) || !sp.EndTime.Equal(t0.Add(45*time.Second)) {
			t.Errorf("span from %s to %s, want 30s (queued) to 45s (completed)", sp.StartTime.Sub(t0), sp.EndTime.Sub(t0))
		}
		if len(sp.Events) != 1 || sp.Events[0].Name != "started" || !sp.Events[0].Time.Equal(t0.Add(35*time.Second)) {
			t.Errorf("events %+v, want one \"started\" at 35s", sp.Events)
		}
		a := attrs(sp)
		want := map[attribute.Key]string{
			worker.AttrTaskID: task.ID.String(), worker.AttrTaskName: "A", worker.AttrOwner: "channel/pop3/42",
			worker.AttrKind: "work10", worker.AttrRunNumber: "1", worker.AttrAttempt: "1", worker.AttrOutcome: "completed",
		}
		for k, v := range want {
			if a[k] != v {
				t.Errorf("%s = %q, want %q", k, a[k], v)
			}
		}
		if _, err := uuidOf(a[worker.AttrRunID]); err != nil {
			t.Errorf("run id %q: %v", a[worker.AttrRunID], err)
		}
		if _, ok := a[worker.AttrReason]; ok {
			t.Errorf("a completed run has reason %q", a[worker.AttrReason])
		}
		if sp.Status.Code != codes.Unset {
			t.Errorf("status %v, want unset", sp.Status)
		}
	}
	if trails[0] != trails[1] {
		t.Fatalf("tracing changed the decisions:\noff:\n%s\non:\n%s", trails[0], trails[1])
	}
}

func uuidOf(s string) (string, error) {
	if len(s) != 36 || strings.Count(s, "-") != 4 {
		return "", errors.New("not a UUID")
	}
	return s, nil
}

// A failed run's span has the error status and the error recorded; a run
// forced to end at its timebox and a dropped one carry their reasons.
func TestFailedForcedAndDroppedRunSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	s, clk, _ := traced(t, exp, func(r worker.QueuedRun) time.Duration { return 0 }, func(c *clock.Virtual) map[string]worker.Handler {
		return map[string]worker.Handler{
			"fail": works(c, 0, errors.New("upstream said no")),
			"slow": works(c, 5*time.Minute, nil),
		}
	})
	ctx := context.Background()
	for _, spec := range []scheduler.TaskSpec{
		{Name: "fail", Owner: "o", Kind: "fail", Interval: time.Minute, FirstRun: t0.Add(30 * time.Second)},
		{Name: "slow", Owner: "o", Kind: "slow", Interval: time.Minute, Timebox: 20 * time.Second, FirstRun: t0.Add(30 * time.Second)},
	} {
		if _, _, err := s.CreateTask(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	clk.RunUntil(t0.Add(60 * time.Second))

	f := spanOf(t, exp, "fail", 1)
	if a := attrs(f); a[worker.AttrOutcome] != "failed" {
		t.Errorf("fail: outcome %q", a[worker.AttrOutcome])
	}
	if f.Status.Code != codes.Error || f.Status.Description != "upstream said no" {
		t.Errorf("fail: status %+v, want error \"upstream said no\"", f.Status)
	}
	recorded := false
	for _, e := range f.Events {
		for _, kv := range e.Attributes {
			recorded = recorded || (e.Name == "exception" && kv.Key == "exception.message" && kv.Value.AsString() == "upstream said no")
		}
	}
	if !recorded {
		t.Errorf("fail: the error is not recorded as an exception event: %+v", f.Events)
	}

	sl := spanOf(t, exp, "slow", 1)
	if a := attrs(sl); a[worker.AttrOutcome] != "forced_end" || a[worker.AttrReason] != events.ForcedTimebox {
		t.Errorf("slow: outcome %q reason %q", a[worker.AttrOutcome], a[worker.AttrReason])
	}
	if sl.Status.Code != codes.Error || !sl.EndTime.Equal(t0.Add(50*time.Second)) {
		t.Errorf("slow: status %+v, end %s; want an error status at 50s (the timebox)", sl.Status, sl.EndTime.Sub(t0))
	}
}

func TestDroppedRunSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	s, clk, _ := traced(t, exp, func(r worker.QueuedRun) time.Duration { return 20 * time.Second },
		func(c *clock.Virtual) map[string]worker.Handler {
			return map[string]worker.Handler{"noop": works(c, 0, nil)}
		})
	ctx := context.Background()
	a, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: "a", Owner: "o", Kind: "noop", Interval: time.Minute, FirstRun: t0.Add(30 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(40 * time.Second)) // A1 queued at 00:30, asks at 00:50
	if _, err := s.PauseTask(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(55 * time.Second))
	d := spanOf(t, exp, "a", 1)
	if at := attrs(d); at[worker.AttrOutcome] != "dropped" || at[worker.AttrReason] != events.DropPaused {
		t.Errorf("outcome %q reason %q, want dropped/paused", at[worker.AttrOutcome], at[worker.AttrReason])
	}
	if !d.StartTime.Equal(t0.Add(30*time.Second)) || !d.EndTime.Equal(t0.Add(50*time.Second)) || d.Status.Code != codes.Unset {
		t.Errorf("span %s–%s status %+v, want 30s–50s, unset", d.StartTime.Sub(t0), d.EndTime.Sub(t0), d.Status)
	}
}

// The http kind sends the W3C traceparent of the span it runs in, the
// handler span under the run's span, to its endpoint; with no
// TracerProvider it sends none.
func TestHTTPKindSendsTheRunsTraceparent(t *testing.T) {
	for _, on := range []bool{true, false} {
		var mu sync.Mutex
		var got []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			got = append(got, r.Header.Get("traceparent"))
			mu.Unlock()
		}))
		var exp *tracetest.InMemoryExporter
		if on {
			exp = tracetest.NewInMemoryExporter()
		}
		s, clk, _ := traced(t, exp, nil, func(*clock.Virtual) map[string]worker.Handler {
			return map[string]worker.Handler{"http": kinds.HTTP(srv.Client())}
		})
		_, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: "hook", Owner: "o", Kind: "http",
			Payload: json.RawMessage(`{"url":"` + srv.URL + `"}`), Interval: time.Minute, FirstRun: t0.Add(30 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		clk.RunUntil(t0.Add(31 * time.Second))
		srv.Close()
		mu.Lock()
		if len(got) != 1 {
			t.Fatalf("on=%v: endpoint called %d times", on, len(got))
		}
		if !on {
			if got[0] != "" {
				t.Errorf("tracing off: traceparent %q sent", got[0])
			}
			mu.Unlock()
			continue
		}
		sp := spanOf(t, exp, "hook", 1)
		h := handlerSpanOf(t, exp, sp)
		want := fmt.Sprintf("00-%s-%s-01", h.SpanContext.TraceID(), h.SpanContext.SpanID())
		if got[0] != want {
			t.Errorf("traceparent %q, want the handler span's %q (in the run's trace %s)", got[0], want, sp.SpanContext.TraceID())
		}
		if a := attrs(sp); a[worker.AttrOutcome] != "completed" {
			t.Errorf("outcome %q", a[worker.AttrOutcome])
		}
		mu.Unlock()
	}
}
