package kinds_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
)

// Through the scheduler (virtual clock, a real endpoint): an http task
// whose endpoint answers 503 is retried with its backoff, then completes;
// one answered 404 fails once, fatal, and is not retried.
func TestHTTPFailuresThroughTheRetryPolicy(t *testing.T) {
	var calls503 atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/flaky":
			if calls503.Add(1) <= 2 {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		case "/gone":
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer srv.Close()
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
	s.Register("http", kinds.HTTP(srv.Client()))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s.Stop(ctx)
	}()
	retry := &scheduler.RetryPolicy{MaxAttempts: 5, InitialBackoff: 10 * time.Second, MaxBackoff: time.Minute, Multiplier: 2}
	ids := map[string]string{}
	for _, path := range []string{"flaky", "gone"} {
		task, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: path, Owner: "o", Kind: "http",
			Payload: []byte(`{"url":"` + srv.URL + "/" + path + `"}`), Interval: time.Hour, FirstRun: t0.Add(time.Second), Retry: retry})
		if err != nil {
			t.Fatal(err)
		}
		ids[path] = task.ID.String()
	}
	clk.RunUntil(t0.Add(10 * time.Minute))
	outcomes := func(id string) string {
		recs, err := st.ReadStream(context.Background(), "task-"+id, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, r := range recs {
			e, _ := events.Decode(r)
			switch e := e.(type) {
			case events.RunStarted:
				fmt.Fprintf(&b, "%s start %d\n", r.At.Sub(t0), e.Run)
			case events.RunFailed:
				fmt.Fprintf(&b, "%s fail %d fatal=%v backoff=%s\n", r.At.Sub(t0), e.Run, e.Fatal, e.Backoff.D())
			case events.RunCompleted:
				fmt.Fprintf(&b, "%s complete %d\n", r.At.Sub(t0), e.Run)
			}
		}
		return b.String()
	}
	want := "1s start 1\n1s fail 1 fatal=false backoff=10s\n" +
		"11s start 2\n11s fail 2 fatal=false backoff=20s\n" +
		"31s start 3\n31s complete 3\n"
	if got := outcomes(ids["flaky"]); got != want {
		t.Errorf("503, 503, 200:\n%s\nwant\n%s", got, want)
	}
	if got, want := outcomes(ids["gone"]), "1s start 1\n1s fail 1 fatal=true backoff=0s\n"; got != want {
		t.Errorf("404:\n%s\nwant\n%s", got, want)
	}
}
