package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events/embedded"
)

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A handler that waits on its context and never heartbeats, on a task
// with a 5 s heartbeat_timeout, a 5 min timebox and one retry 10 s after a
// failure, with two workers: the task actor forces the run to end at 5 s
// (R16) and the handler's context is cancelled then, not at its deadline,
// with a cause naming the reason. The worker reports nothing more (one
// outcome per run, no log of a failure), its slot is free once the handler
// has returned, and the retry starts only after that: never two handlers
// of the task at once.
func TestHungHandlerIsStoppedAtItsHeartbeatTimeout(t *testing.T) {
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clk := clock.NewVirtual(t0)
	var logs syncBuffer
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: time.Second, Workers: 2,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu            sync.Mutex
		seen          []string
		causes        []error
		running, most int
	)
	note := func(format string, args ...any) {
		seen = append(seen, fmt.Sprintf("%s ", clk.Now().Sub(t0))+fmt.Sprintf(format, args...))
	}
	hangs := worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		mu.Lock()
		running++
		most = max(most, running)
		note("attempt %d starts, busy workers %d", r.Attempt, s.Stats().Busy)
		mu.Unlock()
		_ = clock.Sleep(ctx, clk, 24*time.Hour) // no heartbeat: waits for its context
		cause := context.Cause(ctx)
		mu.Lock()
		running--
		causes = append(causes, cause)
		note("attempt %d returns: %v", r.Attempt, cause)
		mu.Unlock()
		return nil, cause
	})
	if err := s.Register("hangs", hangs); err != nil {
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
	task, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: "hung", Owner: "o", Kind: "hangs",
		Interval: 10 * time.Minute, Timebox: 5 * time.Minute, FirstRun: t0.Add(time.Second), HeartbeatTimeout: 5 * time.Second,
		Retry: &scheduler.RetryPolicy{MaxAttempts: 2, InitialBackoff: 10 * time.Second, MaxBackoff: time.Minute, Multiplier: 2}})
	if err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(time.Minute))

	mu.Lock()
	got := slices.Clone(seen)
	mu.Unlock()
	want := []string{
		"1s attempt 1 starts, busy workers 1",
		"6s attempt 1 returns: worker: forced to end: heartbeat_timeout",
		"16s attempt 2 starts, busy workers 1",
		"21s attempt 2 returns: worker: forced to end: heartbeat_timeout",
	}
	if !slices.Equal(got, want) {
		t.Errorf("handlers:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if most != 1 {
		t.Errorf("%d handlers of the task ran at once", most)
	}
	for _, c := range causes {
		var fe *worker.ForcedEndError
		if !errors.Is(c, worker.ErrForcedEnd) || !errors.As(c, &fe) || fe.Reason != "heartbeat_timeout" {
			t.Errorf("cause %v (%T): not a forced end for heartbeat_timeout", c, c)
		}
	}
	wantTrail := "0s TaskCreated\n1s RunEnqueued\n1s RunStarted\n6s RunForcedEnd\n16s RunEnqueued\n16s RunStarted\n21s RunForcedEnd\n"
	if got := trail(t, st, task.ID); got != wantTrail {
		t.Errorf("stream:\n%s\nwant\n%s", got, wantTrail)
	}
	if b := s.Stats().Busy; b != 0 {
		t.Errorf("%d workers busy once both handlers returned", b)
	}
	// Each forced end is logged once, as such, by the task (issue 38 item
	// 11); nothing else: not as a failing run, nor its report as failed.
	var others []string
	forced := 0
	for _, l := range strings.Split(strings.TrimSuffix(logs.String(), "\n"), "\n") {
		switch {
		case l == "":
		case strings.Contains(l, `msg="run forced to end"`) && strings.Contains(l, "reason=heartbeat_timeout"):
			forced++
		default:
			others = append(others, l)
		}
	}
	if forced != 2 || len(others) > 0 {
		t.Errorf("%d forced ends logged (want 2); logged besides:\n%s", forced, strings.Join(others, "\n"))
	}
}
