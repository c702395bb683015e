package worker

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
)

// A handler past its deadline that saves a checkpoint gets its context's
// error at once, even when the task actor would never answer: it does not
// wait for the ask's own timeout.
func TestSaveCheckpointAfterDeadlineReturnsContextError(t *testing.T) {
	saved := make(chan error, 1)
	var p *pool
	h := HandlerFunc(func(ctx context.Context, r *Run) (json.RawMessage, error) {
		// Sleep on the virtual clock past the run's deadline.
		if err := clock.Sleep(ctx, p.clk, 2*timebox); err == nil {
			saved <- errors.New("the handler's context outlived its deadline")
			return nil, nil
		}
		err := r.SaveCheckpoint(ctx, json.RawMessage(`{"n":1}`))
		saved <- err
		return nil, err
	})
	p = newPool(t, PoolConfig{Workers: 1, Handlers: map[string]Handler{"A": h}})
	release := make(chan struct{})
	p.holdSaves = release
	defer close(release)
	p.enqueue(Enqueued{TaskID: taskID("A"), Run: 1})
	go p.clk.RunUntil(h0.Add(2 * timebox))
	select {
	case err := <-saved:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("SaveCheckpoint after the deadline: %v, want the context's error (deadline exceeded)", err)
		}
	case <-time.After(10 * time.Second): // a bound on a hang, not a wait
		t.Fatal("SaveCheckpoint after the deadline is still waiting for the task actor")
	}
}
