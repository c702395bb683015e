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

// Heartbeats reach the real task actors without holding the virtual clock
// back or letting it run ahead: a handler heartbeating in a loop under the
// scheduler ends on time, and two runs of the scenario decide the same.
func TestHeartbeatsThroughTheScheduler(t *testing.T) {
	var trails []string
	for i := 0; i < 2; i++ {
		s, clk, st := traced(t, nil, nil, func(c *clock.Virtual) map[string]worker.Handler {
			return map[string]worker.Handler{"beats": worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
				for i := 0; i < 40; i++ {
					r.Heartbeat()
					if err := clock.Sleep(ctx, c, 250*time.Millisecond); err != nil {
						return nil, err
					}
				}
				stop := r.KeepAlive()
				defer stop()
				return nil, clock.Sleep(ctx, c, 15*time.Second)
			})}
		})
		task, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: "A", Owner: "o", Kind: "beats",
			Interval: time.Minute, FirstRun: t0.Add(30 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		clk.RunUntil(t0.Add(3 * time.Minute))
		trails = append(trails, trail(t, st, task.ID))
	}
	if !strings.Contains(trails[0], "55s RunCompleted") {
		t.Fatalf("the run did not complete at 55s (30s + 10s of heartbeats + 15s kept alive):\n%s", trails[0])
	}
	if trails[0] != trails[1] {
		t.Fatalf("two runs decided differently:\n%s\n%s", trails[0], trails[1])
	}
}
