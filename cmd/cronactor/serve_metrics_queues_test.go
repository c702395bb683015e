package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events/embedded"
)

// /metrics has one series per queue for its waiting runs, busy workers and
// limit.
func TestQueueMetrics(t *testing.T) {
	mem, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(t0)
	s, err := scheduler.New(scheduler.Config{Store: mem, Clock: clk, Tick: time.Second, Workers: 1, Queues: map[string]int{"reports": 2}})
	if err != nil {
		t.Fatal(err)
	}
	s.Register("work", worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		return nil, clock.Sleep(ctx, clk, time.Minute)
	}))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s.Stop(ctx)
	}()
	for _, name := range []string{"a", "b", "c"} {
		if _, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: name, Owner: "o", Kind: "work",
			Interval: time.Hour, FirstRun: t0.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	clk.RunUntil(t0.Add(2 * time.Second))
	m := newMetrics()
	m.registerQueues(s)
	srv := httptest.NewServer(m.handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`cronactor_queue_waiting{queue="default"} 2`, `cronactor_queue_busy_workers{queue="default"} 1`, `cronactor_queue_limit{queue="default"} 1`,
		`cronactor_queue_waiting{queue="reports"} 0`, `cronactor_queue_busy_workers{queue="reports"} 0`, `cronactor_queue_limit{queue="reports"} 2`,
	} {
		if !strings.Contains(string(b), want+"\n") {
			t.Errorf("no %s in\n%s", want, b)
		}
	}
}
