package worker_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
)

// heartbeatTrails runs, under a 5 s heartbeat_timeout, a task whose
// handler heartbeats in a loop for 10 s and is then kept alive for 15 s,
// and one whose handler sleeps 25 s; it returns their streams.
func heartbeatTrails(t *testing.T) (beats, hangs string) {
	s, clk, st := traced(t, nil, nil, func(c *clock.Virtual) map[string]worker.Handler {
		return map[string]worker.Handler{
			"beats": worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
				for i := 0; i < 40; i++ {
					r.Heartbeat()
					if err := clock.Sleep(ctx, c, 250*time.Millisecond); err != nil {
						return nil, err
					}
				}
				stop := r.KeepAlive()
				defer stop()
				return nil, clock.Sleep(ctx, c, 15*time.Second)
			}),
			"hangs": works(c, 25*time.Second, nil),
		}
	})
	var trails []func() string
	for _, kind := range []string{"beats", "hangs"} {
		task, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: kind, Owner: "o", Kind: kind,
			Interval: time.Minute, FirstRun: t0.Add(30 * time.Second), HeartbeatTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		trails = append(trails, func() string { return trail(t, st, task.ID) })
	}
	clk.RunUntil(t0.Add(80 * time.Second))
	return trails[0](), trails[1]()
}

// Heartbeats reach the real task actors without holding the virtual clock
// back or letting it run ahead: the handler that heartbeats completes on
// time, the one that does not is forced to end 5 s after its start, and
// two runs decide the same.
func TestHeartbeatsThroughTheScheduler(t *testing.T) {
	beats, hangs := heartbeatTrails(t)
	if !strings.Contains(beats, "55s RunCompleted") || strings.Contains(beats, "RunForcedEnd") {
		t.Errorf("the heartbeating run did not complete at 55s (30s + 10s of heartbeats + 15s kept alive):\n%s", beats)
	}
	if !strings.Contains(hangs, "35s RunForcedEnd") {
		t.Errorf("the silent run was not forced to end at 35s:\n%s", hangs)
	}
	beats2, hangs2 := heartbeatTrails(t)
	if beats != beats2 || hangs != hangs2 {
		t.Fatalf("two runs decided differently:\n%s\n%s\n%s\n%s", beats, beats2, hangs, hangs2)
	}
}
