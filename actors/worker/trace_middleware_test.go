package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// withConfig is a started scheduler on a virtual clock and the in-memory
// store, configured by cfg, with runs picked up 5 s after they are queued.
func withConfig(t *testing.T, cfg func(*scheduler.Config), handlers func(*clock.Virtual) map[string]worker.Handler) (*scheduler.Scheduler, *clock.Virtual) {
	t.Helper()
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := clock.NewVirtual(t0)
	c := scheduler.Config{Store: st, Clock: clk, Tick: 30 * time.Second, Workers: 4,
		PickupDelay: func(worker.QueuedRun) time.Duration { return 5 * time.Second }}
	cfg(&c)
	s, err := scheduler.New(c)
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
		s.Stop(ctx)
	})
	return s, clk
}

func provider(t *testing.T, exp *tracetest.InMemoryExporter) trace.TracerProvider {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	return tp
}

func create(t *testing.T, s *scheduler.Scheduler, name, kind string) {
	t.Helper()
	if _, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: name, Owner: "o", Kind: kind,
		Interval: time.Minute, FirstRun: t0.Add(30 * time.Second)}); err != nil {
		t.Fatal(err)
	}
}

// The tracing middleware with no TracerProvider: no run span, and each
// handler call is a root span of its own, on the scheduler's clock, with
// the run's attributes and the handler's error.
func TestTracingMiddlewareAlone(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := provider(t, exp)
	s, clk := withConfig(t, func(c *scheduler.Config) { c.Middleware = []worker.Middleware{worker.Tracing(tp)} },
		func(c *clock.Virtual) map[string]worker.Handler {
			return map[string]worker.Handler{
				"work10": works(c, 10*time.Second, nil),
				"fail":   works(c, 0, errors.New("upstream said no")),
			}
		})
	create(t, s, "A", "work10")
	create(t, s, "F", "fail")
	clk.RunUntil(t0.Add(50 * time.Second))

	got := map[string]tracetest.SpanStub{}
	for _, sp := range exp.GetSpans() {
		got[sp.Name+" "+attrs(sp)[worker.AttrTaskName]] = sp
	}
	if len(got) != 2 || len(exp.GetSpans()) != 2 {
		t.Fatalf("spans %v, want one handler span per run and no run span", names(exp))
	}
	a, ok := got["handle work10 A"]
	if !ok {
		t.Fatalf("no span \"handle work10\" for A: %v", names(exp))
	}
	if a.Parent.IsValid() || a.SpanKind != trace.SpanKindInternal {
		t.Errorf("parent %v kind %v, want a root internal span", a.Parent, a.SpanKind)
	}
	if !a.StartTime.Equal(t0.Add(35*time.Second)) || !a.EndTime.Equal(t0.Add(45*time.Second)) {
		t.Errorf("span from %s to %s, want 35s (called) to 45s (returned)", a.StartTime.Sub(t0), a.EndTime.Sub(t0))
	}
	want := map[attribute.Key]string{worker.AttrTaskName: "A", worker.AttrOwner: "o", worker.AttrKind: "work10",
		worker.AttrRunNumber: "1", worker.AttrAttempt: "1"}
	at := attrs(a)
	for k, v := range want {
		if at[k] != v {
			t.Errorf("%s = %q, want %q", k, at[k], v)
		}
	}
	if _, err := uuidOf(at[worker.AttrRunID]); err != nil {
		t.Errorf("run id %q: %v", at[worker.AttrRunID], err)
	}
	if _, ok := at[worker.AttrOutcome]; ok || a.Status.Code != codes.Unset {
		t.Errorf("outcome %q status %+v: the handler span says only whether the handler failed", at[worker.AttrOutcome], a.Status)
	}
	f := got["handle fail F"]
	if f.Status.Code != codes.Error || f.Status.Description != "upstream said no" || len(f.Events) != 1 || f.Events[0].Name != "exception" {
		t.Errorf("failed handler: status %+v events %+v, want error \"upstream said no\" recorded", f.Status, f.Events)
	}
}

// spanning is a middleware that makes a span named "mw <name>" around the
// handler, from the tracer of tp.
func spanning(tp trace.TracerProvider, name string) worker.Middleware {
	return func(next worker.Handler) worker.Handler {
		return worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
			ctx, sp := tp.Tracer("test").Start(ctx, "mw "+name)
			defer sp.End()
			return next.Handle(ctx, r)
		})
	}
}

// tree is the spans of exp as "parent > child" lines, by name.
func tree(exp *tracetest.InMemoryExporter) string {
	byID := map[trace.SpanID]string{}
	for _, sp := range exp.GetSpans() {
		byID[sp.SpanContext.SpanID()] = sp.Name
	}
	var lines []string
	for _, sp := range exp.GetSpans() {
		p := "-"
		if sp.Parent.IsValid() {
			p = byID[sp.Parent.SpanID()]
		}
		lines = append(lines, fmt.Sprintf("%s > %s", p, sp.Name))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// The handler span sits where its middleware is in the chain (the first
// outermost), under the run span; with TracerProvider set and no Tracing
// in the chain the scheduler puts one first.
func TestTracingMiddlewareOrder(t *testing.T) {
	for _, c := range []struct {
		name string
		mws  func(tp trace.TracerProvider) []worker.Middleware
		want string
	}{
		{"placed between two", func(tp trace.TracerProvider) []worker.Middleware {
			return []worker.Middleware{spanning(tp, "outer"), worker.Tracing(tp), spanning(tp, "inner")}
		}, "- > run noop\nhandle noop > mw inner\nmw outer > handle noop\nrun noop > mw outer"},
		{"placed last", func(tp trace.TracerProvider) []worker.Middleware {
			return []worker.Middleware{spanning(tp, "outer"), worker.Tracing(tp)}
		}, "- > run noop\nmw outer > handle noop\nrun noop > mw outer"},
		{"added first", func(tp trace.TracerProvider) []worker.Middleware {
			return []worker.Middleware{spanning(tp, "a"), spanning(tp, "b")}
		}, "- > run noop\nhandle noop > mw a\nmw a > mw b\nrun noop > handle noop"},
		{"no middleware", func(tp trace.TracerProvider) []worker.Middleware { return nil },
			"- > run noop\nrun noop > handle noop"},
	} {
		t.Run(c.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := provider(t, exp)
			s, clk := withConfig(t, func(cfg *scheduler.Config) { cfg.TracerProvider, cfg.Middleware = tp, c.mws(tp) },
				func(c *clock.Virtual) map[string]worker.Handler {
					return map[string]worker.Handler{"noop": works(c, time.Second, nil)}
				})
			create(t, s, "A", "noop")
			clk.RunUntil(t0.Add(40 * time.Second))
			if got := tree(exp); got != c.want {
				t.Errorf("spans (parent > child):\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

// A run dropped before any handler is called keeps its run span, from
// queued to the drop, and has no handler span.
func TestDroppedRunHasItsQueueSpanOnly(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := provider(t, exp)
	s, clk := withConfig(t, func(c *scheduler.Config) {
		c.TracerProvider = tp
		c.PickupDelay = func(worker.QueuedRun) time.Duration { return 20 * time.Second }
	}, func(c *clock.Virtual) map[string]worker.Handler {
		return map[string]worker.Handler{"noop": works(c, 0, nil)}
	})
	ctx := context.Background()
	a, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: "a", Owner: "o", Kind: "noop", Interval: time.Minute, FirstRun: t0.Add(30 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(40 * time.Second))
	if _, err := s.PauseTask(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(55 * time.Second))
	if got := tree(exp); got != "- > run noop" {
		t.Fatalf("spans (parent > child):\n%s\nwant the run span alone", got)
	}
	d := spanOf(t, exp, "a", 1)
	if at := attrs(d); at[worker.AttrOutcome] != "dropped" || at[worker.AttrReason] != events.DropPaused ||
		!d.StartTime.Equal(t0.Add(30*time.Second)) || !d.EndTime.Equal(t0.Add(50*time.Second)) {
		t.Errorf("outcome %q reason %q, %s–%s; want dropped/paused, 30s–50s", at[worker.AttrOutcome], at[worker.AttrReason],
			d.StartTime.Sub(t0), d.EndTime.Sub(t0))
	}
}

// A handler's panic ends its span with the panic recorded, and still
// reaches the worker, which records the run as failed.
func TestTracingMiddlewarePanic(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := provider(t, exp)
	s, clk := withConfig(t, func(c *scheduler.Config) { c.TracerProvider = tp }, func(c *clock.Virtual) map[string]worker.Handler {
		return map[string]worker.Handler{"boom": worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) {
			panic("kaboom")
		})}
	})
	create(t, s, "P", "boom")
	clk.RunUntil(t0.Add(40 * time.Second))
	run := spanOf(t, exp, "P", 1)
	if a := attrs(run); a[worker.AttrOutcome] != "failed" || !strings.HasPrefix(run.Status.Description, "panic: kaboom") {
		t.Errorf("run span: outcome %q status %+v, want failed with the panic", a[worker.AttrOutcome], run.Status)
	}
	h := handlerSpanOf(t, exp, run)
	if h.Status.Code != codes.Error || h.Status.Description != "panic: kaboom" || !h.EndTime.Equal(t0.Add(35*time.Second)) {
		t.Errorf("handler span: status %+v end %s, want error \"panic: kaboom\" at 35s", h.Status, h.EndTime.Sub(t0))
	}
}
