package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
)

// A task deleted and created again is a new incarnation that starts clean:
// the old incarnation's waiting run never starts under it (it is dropped as
// deleted), its running run's end is recorded without handing its
// checkpoint on, and the first run of the new incarnation gets no
// checkpoint and is not held to the old lastRun.
func TestRecreatedTaskStartsClean(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	var mu sync.Mutex
	received := map[int]string{}
	work := map[int]time.Duration{1: 20 * time.Second, 3: 45 * time.Second, 4: 20 * time.Second}
	h := worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		mu.Lock()
		received[r.Number] = string(r.Checkpoint)
		mu.Unlock()
		if err := r.SaveCheckpoint(ctx, json.RawMessage(fmt.Sprintf(`{"run":%d}`, r.Number))); err != nil {
			return nil, err
		}
		if err := clock.Sleep(ctx, clk, work[r.Number]); err != nil {
			return nil, err
		}
		return json.RawMessage(fmt.Sprintf(`{"done":%d}`, r.Number)), nil
	})
	// Run 2 waits in the queue for three minutes; the others are taken at once.
	e := newEnv(t, st, clk, func(r worker.QueuedRun) time.Duration {
		if r.Run == 2 {
			return 3 * time.Minute
		}
		return 0
	}, map[string]worker.Handler{"work": h})
	defer stopNow(e.s)
	spec := scheduler.TaskSpec{Name: "a", Owner: "chan/1", Kind: "work", Interval: time.Minute, Tolerance: 5 * time.Second,
		Timebox: 50 * time.Second, FirstRun: t0.Add(30 * time.Second)}
	a, _, err := e.s.CreateTask(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	// 00:30 run 1 (ends 00:50), 01:30 run 2 (waits until 04:30), 02:30 run 3
	// (runs until 03:15).
	clk.RunUntil(t0.Add(2*time.Minute + 45*time.Second))
	if _, err := e.s.DeleteTask(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(2*time.Minute + 50*time.Second))
	spec.FirstRun = t0.Add(2*time.Minute + 55*time.Second)
	again, created, err := e.s.CreateTask(ctx, spec)
	if err != nil || !created || again.ID != a.ID {
		t.Fatalf("create again: %+v %v %v", again, created, err)
	}
	if again.Status != "active" || !again.LastRun.IsZero() || again.Checkpoint != nil || again.Waiting != 0 || again.Running != 1 ||
		!again.CreatedAt.Equal(t0.Add(2*time.Minute+50*time.Second)) {
		t.Fatalf("created again: %+v", again)
	}
	// 03:00 run 4 of the new incarnation starts (30s after the old lastRun).
	clk.RunUntil(t0.Add(3*time.Minute + 16*time.Second))
	now, err := e.s.Task(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !now.LastRun.Equal(t0.Add(3*time.Minute)) || now.Checkpoint != nil || now.Runs != 4 {
		t.Fatalf("after the old run ended: last_run %s checkpoint %s runs %d, want 03:00, none, 4", mmss(now.LastRun), now.Checkpoint, now.Runs)
	}
	clk.RunUntil(t0.Add(6 * time.Minute))
	got := trail(t, st, a.ID)
	for _, want := range []string{"02:50 RunDropped 2 deleted\n02:50 TaskCreated\n", "03:00 RunStarted 4\n", `03:15 RunCompleted 3 {"done":3}`} {
		if !strings.Contains(got, want) {
			t.Errorf("trail lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "RunStarted 2") || strings.Count(got, "RunDropped 2") != 1 {
		t.Errorf("the old incarnation's waiting run started or ended twice:\n%s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if received[4] != "" {
		t.Errorf("the new incarnation's first run was handed %s", received[4])
	}
}
