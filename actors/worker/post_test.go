package worker

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/internal/counted"
)

// TestPostFreesTheWorkerBeforeTheOutcomeIsDecided: with Post, a worker
// whose handler has returned takes its next run while the outcome of the
// last one is still being decided (recorded) by its task; Stats.Wait still
// waits for that outcome. With one worker, the second run can start only
// if the worker did not wait.
func TestPostFreesTheWorkerBeforeTheOutcomeIsDecided(t *testing.T) {
	var p *pool
	bStarted := make(chan struct{})
	decided := make(chan struct{})
	var once sync.Once
	returns := HandlerFunc(func(context.Context, *Run) (json.RawMessage, error) { return nil, nil })
	cfg := PoolConfig{Workers: 1, Handlers: map[string]Handler{"A": returns, "B": returns}}
	cfg.Post = func(from actor.SenderContext, task *actor.PID, cmd rules.Command) func() (Decision, error) {
		return func() (Decision, error) {
			if c, ok := cmd.(rules.Complete); ok && p.name(c.RunID) == "A1" {
				select {
				case <-bStarted:
				case <-time.After(10 * time.Second):
					t.Error("B1 did not start while A1's outcome was undecided")
				}
				defer close(decided)
			}
			return p.ask(context.Background(), from, task, cmd)
		}
	}
	p = newPool(t, cfg)
	p.onStart = func(name string) {
		if name == "B1" {
			once.Do(func() { close(bStarted) })
		}
	}
	a := p.register(Enqueued{TaskID: taskID("A"), Run: 1})
	b := p.register(Enqueued{TaskID: taskID("B"), Run: 1})
	counted.Send(p.clk, p.sys.Root, p.queue, a)
	counted.Send(p.clk, p.sys.Root, p.queue, b)
	select {
	case <-decided:
	case <-time.After(20 * time.Second):
		t.Fatal("A1's outcome was never decided")
	}
	p.clk.Quiesce()
	p.stats.Close()
	if err := p.stats.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"00:00 complete A1", "00:00 complete B1", "00:00 start A1", "00:00 start B1"}
	if got := p.sorted(); !slices.Equal(got, want) {
		t.Fatalf("log %q, want %q", got, want)
	}
}
