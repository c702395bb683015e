package kinds_test

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
)

// Through the scheduler (virtual clock, a real endpoint that never
// answers): the task actor's deadline timer forces the http run to end at
// its timebox, and the request is cancelled by that forced end — its error
// names it — rather than left to the handler's own deadline; the run has
// one outcome, the forced end. (The run heartbeats while its request is in
// flight, so its heartbeat_timeout does not end it.)
func TestHTTPRequestIsCancelledWhenTheRunIsForcedToEnd(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // hangs until the client gives up
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(t0)
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		errs []string
		at   []time.Duration
	)
	h := kinds.HTTP(srv.Client())
	err = s.Register("http", worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		// The request is I/O the virtual clock does not see: the handler
		// leaves the clock's count while it waits (as clock.Sleep does),
		// so that time moves on. It keeps the run alive from before that
		// (the kind does too, but only once it runs: in between, the clock
		// could reach the heartbeat timeout).
		stop := r.KeepAlive()
		defer stop()
		clk.End()
		cp, err := h.Handle(ctx, r)
		clk.Begin()
		mu.Lock()
		defer mu.Unlock()
		at = append(at, clk.Now().Sub(t0))
		if err != nil {
			errs = append(errs, fmt.Sprintf("%v (forced end: %v)", err, errors.Is(err, worker.ErrForcedEnd)))
		}
		return cp, err
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s.Stop(ctx)
	}()
	task, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: "hangs", Owner: "o", Kind: "http",
		Payload: []byte(`{"url":"` + srv.URL + `"}`), Interval: time.Minute, Timebox: 10 * time.Second,
		FirstRun: t0.Add(time.Second), HeartbeatTimeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(30 * time.Second))

	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 1 || len(at) != 1 || at[0] != 11*time.Second ||
		!strings.Contains(errs[0], "worker: forced to end: "+events.ForcedTimebox+" (forced end: true)") {
		t.Fatalf("the handler returned at %v with %q; want once, at 11s, cancelled by the forced end", at, errs)
	}
	recs, err := st.ReadStream(context.Background(), "task-"+task.ID.String(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, r := range recs {
		switch e, _ := events.Decode(r); e := e.(type) {
		case events.RunCompleted, events.RunFailed:
			outcomes = append(outcomes, fmt.Sprintf("%s %s", r.At.Sub(t0), r.Type))
		case events.RunForcedEnd:
			outcomes = append(outcomes, fmt.Sprintf("%s %s %s", r.At.Sub(t0), r.Type, e.Reason))
		}
	}
	if got := strings.Join(outcomes, "; "); got != "11s RunForcedEnd "+events.ForcedTimebox {
		t.Fatalf("outcomes: %s; want one, the forced end at 11s", got)
	}
}

// The http kind names the cause of its context's end: a run forced to
// end fails its request with the forced end in the error, retryably.
func TestHTTPNamesWhyItsContextEnded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	checkForcedEnd(t, kinds.HTTP(srv.Client()), `{"url":"`+srv.URL+`"}`)
}

// checkForcedEnd runs h with payload under a context cancelled by a forced
// end for heartbeat_timeout, and checks its error names it.
func checkForcedEnd(t *testing.T, h worker.Handler, payload string) {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(&worker.ForcedEndError{Reason: events.ForcedHeartbeat})
	_, err := h.Handle(ctx, run(payload, "", time.Now().Add(time.Minute)))
	if !errors.Is(err, worker.ErrForcedEnd) || !strings.Contains(fmt.Sprint(err), "worker: forced to end: heartbeat_timeout") {
		t.Errorf("err = %v, want the forced end", err)
	}
	if worker.IsPermanent(err) {
		t.Errorf("a forced end marked permanent: %v", err)
	}
}
