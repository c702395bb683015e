package worker

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
)

// loops heartbeats every step for d, then returns.
func loops(c clock.Clock, step, d time.Duration) Handler {
	return HandlerFunc(func(ctx context.Context, r *Run) (json.RawMessage, error) {
		for spent := time.Duration(0); spent < d; spent += step {
			r.Heartbeat()
			if err := clock.Sleep(ctx, c, step); err != nil {
				return nil, err
			}
		}
		r.Heartbeat()
		return nil, nil
	})
}

func filter(lines []string, word string) []string {
	var out []string
	for _, l := range lines {
		if len(l) > 6 && strings.HasPrefix(l[6:], word) {
			out = append(out, l)
		}
	}
	return out
}

// A handler heartbeating in a tight loop sends one heartbeat per
// HeartbeatGap (the start counts as the first), the last before the
// outcome.
func TestHeartbeatsAreThrottled(t *testing.T) {
	var p *pool
	h := HandlerFunc(func(ctx context.Context, r *Run) (json.RawMessage, error) {
		return loops(p.clk, 100*time.Millisecond, 3500*time.Millisecond).Handle(ctx, r)
	})
	p = newPool(t, PoolConfig{Workers: 1, Handlers: map[string]Handler{"A": h}})
	p.enqueue(Enqueued{TaskID: taskID("A"), Run: 1})
	p.clk.RunUntil(h0.Add(time.Minute))
	want := []string{"00:00 start A1", "00:01 heartbeat A1", "00:02 heartbeat A1", "00:03 heartbeat A1", "00:03 complete A1"}
	if got := p.lines(); !slices.Equal(got, want) {
		t.Fatalf("log:\n%q\nwant\n%q", got, want)
	}
}

// Under a short heartbeat_timeout the gap is a tenth of it.
func TestHeartbeatGapFollowsAShortTimeout(t *testing.T) {
	var p *pool
	h := HandlerFunc(func(ctx context.Context, r *Run) (json.RawMessage, error) {
		return loops(p.clk, 100*time.Millisecond, 2*time.Second).Handle(ctx, r)
	})
	p = newPool(t, PoolConfig{Workers: 1, Handlers: map[string]Handler{"A": h}})
	p.heartbeatTimeout["A"] = 4 * time.Second // gap 400ms
	p.enqueue(Enqueued{TaskID: taskID("A"), Run: 1})
	p.clk.RunUntil(h0.Add(time.Minute))
	if got := filter(p.lines(), "heartbeat"); len(got) != 5 { // 0.4, 0.8, 1.2, 1.6, 2.0
		t.Fatalf("heartbeats: %q, want 5", got)
	}
	for _, tc := range []struct{ timeout, gap, every time.Duration }{
		{0, time.Second, 10 * time.Second},
		{time.Hour, time.Second, 10 * time.Second},
		{10 * time.Second, time.Second, 10 * time.Second / 3},
		{4 * time.Second, 400 * time.Millisecond, 4 * time.Second / 3},
	} {
		if g, e := heartbeatGap(tc.timeout), keepAliveEvery(tc.timeout); g != tc.gap || e != tc.every {
			t.Errorf("timeout %s: gap %s every %s, want %s %s", tc.timeout, g, e, tc.gap, tc.every)
		}
	}
}

// A Heartbeat call after the handler returned sends nothing.
func TestNoHeartbeatAfterTheHandlerReturned(t *testing.T) {
	kept := make(chan *Run, 1)
	h := HandlerFunc(func(_ context.Context, r *Run) (json.RawMessage, error) {
		kept <- r
		return nil, nil
	})
	p := newPool(t, PoolConfig{Workers: 1, Handlers: map[string]Handler{"A": h}})
	p.enqueue(Enqueued{TaskID: taskID("A"), Run: 1})
	r := <-kept
	p.clk.RunUntil(h0.Add(time.Minute))
	p.clk.Begin() // as a handler would be
	r.Heartbeat()
	stop := r.KeepAlive()
	p.clk.End()
	p.clk.RunUntil(h0.Add(2 * time.Minute))
	stop()
	if got := filter(p.lines(), "heartbeat"); len(got) != 0 {
		t.Fatalf("heartbeats after the outcome: %q", got)
	}
	if n := p.clk.Pending(); n != 0 {
		t.Fatalf("%d timers left", n)
	}
}

// KeepAlive heartbeats every third of the heartbeat_timeout until stopped,
// and stops by itself when the handler returns.
func TestKeepAlive(t *testing.T) {
	var p *pool
	stopped := HandlerFunc(func(ctx context.Context, r *Run) (json.RawMessage, error) {
		stop := r.KeepAlive()
		clock.Sleep(ctx, p.clk, 35*time.Second)
		stop()
		clock.Sleep(ctx, p.clk, 20*time.Second)
		return nil, nil
	})
	forgotten := HandlerFunc(func(ctx context.Context, r *Run) (json.RawMessage, error) {
		r.KeepAlive() // never stopped: the handler's return stops it
		clock.Sleep(ctx, p.clk, 5*time.Second)
		return nil, nil
	})
	p = newPool(t, PoolConfig{Workers: 2, Handlers: map[string]Handler{"A": stopped, "B": forgotten}})
	p.heartbeatTimeout["A"] = 30 * time.Second // every 10s
	p.heartbeatTimeout["B"] = 3 * time.Second  // every 1s
	p.enqueue(Enqueued{TaskID: taskID("A"), Run: 1})
	p.enqueue(Enqueued{TaskID: taskID("B"), Run: 1})
	p.clk.RunUntil(h0.Add(5 * time.Minute))
	want := []string{
		"00:00 start A1", "00:00 start B1",
		"00:01 heartbeat B1", "00:02 heartbeat B1", "00:03 heartbeat B1", "00:04 heartbeat B1",
		"00:05 complete B1", // its sleep's timer, set first, fires before the keep-alive's
		"00:10 heartbeat A1", "00:20 heartbeat A1", "00:30 heartbeat A1",
		"00:55 complete A1",
	}
	if got := p.sorted(); !slices.Equal(got, want) {
		t.Fatalf("log:\n%q\nwant\n%q", got, want)
	}
	if n := p.clk.Pending(); n != 0 {
		t.Fatalf("%d timers left", n)
	}
}

// Without Tell, a heartbeat is asked on a goroutine of its own, counted
// on the clock.
func TestHeartbeatWithoutTellAsks(t *testing.T) {
	var p *pool
	h := HandlerFunc(func(ctx context.Context, r *Run) (json.RawMessage, error) {
		clock.Sleep(ctx, p.clk, 2*time.Second)
		r.Heartbeat()
		clock.Sleep(ctx, p.clk, 2*time.Second)
		return nil, nil
	})
	p = buildPool(t, PoolConfig{Workers: 1, Handlers: map[string]Handler{"A": h}}, false)
	p.enqueue(Enqueued{TaskID: taskID("A"), Run: 1})
	p.clk.RunUntil(h0.Add(time.Minute))
	want := []string{"00:00 start A1", "00:02 heartbeat A1 (asked)", "00:04 complete A1"}
	if got := p.lines(); !slices.Equal(got, want) {
		t.Fatalf("log:\n%q\nwant\n%q", got, want)
	}
}
