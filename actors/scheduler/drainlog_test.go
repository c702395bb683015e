package scheduler_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
)

// logBuffer is a bytes.Buffer the scheduler's goroutines may log to while
// the test reads it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the logged lines that contain s.
func (l *logBuffer) lines(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// slogTime is how slog's text handler writes a time.
func slogTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// A graceful stop with runs running says at once what it waits for (how
// many runs, until when), and at the drain timeout names each run it cuts
// off, with its task and the deadline at which it will be recorded lost
// (issue 38 item 11). The run that ended before the stop is not named.
func TestDrainLogsWhatItWaitsForAndWhatItCutsOff(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	logs := &logBuffer{}
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: 30 * time.Second, Workers: 4,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for k, h := range map[string]worker.Handler{"slow": sleeper(clk, time.Hour), "quick": sleeper(clk, 0)} {
		if err := s.Register(k, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	slow, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: "slow", Owner: "o", Kind: "slow", Interval: 5 * time.Minute,
		Timebox: 90 * time.Second, FirstRun: t0.Add(30 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: "quick", Owner: "o", Kind: "quick", Interval: 5 * time.Minute,
		FirstRun: t0.Add(30 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(35 * time.Second)) // slow's run 1 runs until its deadline, 02:00; quick's has ended
	clk.Quiesce()
	if got := trail(t, st, slow.ID); !strings.Contains(got, "RunStarted") {
		t.Fatalf("slow's run did not start:\n%s", got)
	}

	draining := make(chan struct{})
	scheduler.SetStopHook(s, func() { close(draining) })
	defer scheduler.SetStopHook(s, nil)
	until := time.Now().Add(time.Hour)
	stopCtx, timeout := context.WithDeadline(context.Background(), until)
	defer timeout()
	stopped := make(chan struct{})
	go func() { s.Stop(stopCtx); close(stopped) }()
	within(t, draining, "Stop to begin draining")
	run1 := events.RunID(slow.ID, 1)
	deadline := slogTime(t0.Add(2 * time.Minute))
	drain := logs.lines(`msg="draining: waiting for running runs to end"`)
	if len(drain) != 1 {
		t.Fatalf("drain lines: %q, want one", drain)
	}
	for _, kv := range []string{"level=INFO", "runs=1", "last_deadline=" + deadline, "until=" + slogTime(until)} {
		if !strings.Contains(drain[0], kv) {
			t.Errorf("drain line %q lacks %q", drain[0], kv)
		}
	}
	if cut := logs.lines("drain timeout"); len(cut) != 0 {
		t.Fatalf("a run was logged cut off before the drain timeout: %q", cut)
	}

	timeout() // the drain timeout
	within(t, stopped, "Stop to return at the drain timeout")
	cut := logs.lines(`msg="drain timeout: run cut off`)
	if len(cut) != 1 {
		t.Fatalf("cut-off lines: %q, want one (slow's run 1)", cut)
	}
	for _, kv := range []string{"level=WARN", "task_id=" + slow.ID.String(), "run_id=" + run1.String(), "run=1", "deadline=" + deadline} {
		if !strings.Contains(cut[0], kv) {
			t.Errorf("cut-off line %q lacks %q", cut[0], kv)
		}
	}
}

// A stop with no run running logs no drain.
func TestStopWithNothingRunningLogsNoDrain(t *testing.T) {
	logs := &logBuffer{}
	s, err := scheduler.New(scheduler.Config{Store: memStore(t), Clock: clock.NewVirtual(t0), Tick: 30 * time.Second,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	stopNow(s)
	if got := logs.lines("drain"); len(got) != 0 {
		t.Fatalf("drain lines with nothing running: %q", got)
	}
	if got := logs.lines("scheduler stopped"); len(got) != 1 {
		t.Fatalf("stop lines: %q, want one (the test reads the scheduler's log)", got)
	}
}
