package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

// Runs of a slow queue never take the slots of another: the default
// queue's short runs go on at their own pace while every slot of
// "reports" is taken for ten minutes at a time — and the run enqueued last
// starts first.
func TestASlowQueueDoesNotStarveAnother(t *testing.T) {
	var p *pool
	p = newPool(t, PoolConfig{Workers: 1, Queues: map[string]int{"reports": 1},
		Handlers: map[string]Handler{"R": sleepsOn(&p, 10*time.Minute), "D": sleepsOn(&p, time.Second)}})
	for n := 1; n <= 3; n++ {
		p.enqueue(Enqueued{TaskID: taskID("R"), Run: n, Queue: "reports"})
	}
	for n := 1; n <= 3; n++ {
		p.enqueue(Enqueued{TaskID: taskID("D"), Run: n}) // "" is the default queue
	}
	p.clk.RunUntil(h0.Add(time.Hour))
	want := []string{
		"00:00 start D1", "00:00 start R1",
		"00:01 complete D1", "00:01 start D2",
		"00:02 complete D2", "00:02 start D3",
		"00:03 complete D3",
		"10:00 complete R1", "10:00 start R2",
		"20:00 complete R2", "20:00 start R3",
		"30:00 complete R3",
	}
	if got := p.sorted(); !slices.Equal(got, want) {
		t.Fatalf("log:\n%q\nwant\n%q", got, want)
	}
}

// sleepsOn is sleeps on the pool's clock, read when the handler runs.
func sleepsOn(p **pool, d time.Duration) Handler {
	return HandlerFunc(func(ctx context.Context, r *Run) (json.RawMessage, error) {
		return sleeps((*p).clk, d, nil).Handle(ctx, r)
	})
}

// A queue's limit is how many of its runs execute at once; a queue no
// configuration names gets the default queue's limit, in slots of its own.
func TestQueueLimits(t *testing.T) {
	var p *pool
	p = newPool(t, PoolConfig{Workers: 2, Queues: map[string]int{"mail": 3},
		Handlers: map[string]Handler{"M": sleepsOn(&p, time.Minute), "T": sleepsOn(&p, time.Minute), "D": sleepsOn(&p, time.Minute)}})
	for n := 1; n <= 4; n++ {
		p.enqueue(Enqueued{TaskID: taskID("M"), Run: n, Queue: "mail"})
		p.enqueue(Enqueued{TaskID: taskID("T"), Run: n, Queue: "typo"})
		p.enqueue(Enqueued{TaskID: taskID("D"), Run: n, Queue: "default"})
	}
	figures := func() map[string]QueueStats {
		m := map[string]QueueStats{}
		for _, q := range p.stats.Queues() {
			m[q.Name] = q
		}
		return m
	}
	want := map[string]QueueStats{
		"default": {Name: "default", Limit: 2, Busy: 2, Depth: 2, Configured: true},
		"mail":    {Name: "mail", Limit: 3, Busy: 3, Depth: 1, Configured: true},
		"typo":    {Name: "typo", Limit: 2, Busy: 2, Depth: 2, Configured: false},
	}
	if got := figures(); !equalFigures(got, want) {
		t.Fatalf("at 00:00: %+v\nwant %+v", got, want)
	}
	if q, b := p.stats.Queued.Load(), p.stats.Busy.Load(); q != 5 || b != 7 {
		t.Fatalf("totals: queued %d busy %d, want 5 and 7", q, b)
	}
	p.clk.RunUntil(h0.Add(time.Hour))
	starts := map[string][]string{}
	for _, l := range p.sorted() {
		var at, verb, run string
		if n, _ := fmt.Sscanf(l, "%s %s %s", &at, &verb, &run); n == 3 && verb == "start" {
			starts[run[:1]] = append(starts[run[:1]], at)
		}
	}
	for task, want := range map[string][]string{
		"M": {"00:00", "00:00", "00:00", "01:00"},
		"T": {"00:00", "00:00", "01:00", "01:00"},
		"D": {"00:00", "00:00", "01:00", "01:00"},
	} {
		if !slices.Equal(starts[task], want) {
			t.Errorf("starts of %s: %v, want %v", task, starts[task], want)
		}
	}
	for name, q := range figures() {
		if q.Busy != 0 || q.Depth != 0 {
			t.Errorf("%s after: %+v", name, q)
		}
	}
}

func equalFigures(a, b map[string]QueueStats) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Within a queue, higher priority goes first, then enqueue order; another
// queue's priorities change nothing.
func TestPriorityOrdersRunsWithinAQueue(t *testing.T) {
	var p *pool
	p = newPool(t, PoolConfig{Workers: 1, Queues: map[string]int{"other": 1},
		Handlers: map[string]Handler{"A": sleepsOn(&p, time.Second), "O": sleepsOn(&p, time.Second)}})
	p.enqueue(Enqueued{TaskID: taskID("A"), Run: 1})
	for n, prio := range []int{0, 5, 0, 5, 9} {
		p.enqueue(Enqueued{TaskID: taskID("A"), Run: n + 2, Priority: prio})
	}
	p.enqueue(Enqueued{TaskID: taskID("O"), Run: 1, Queue: "other", Priority: 100})
	p.clk.RunUntil(h0.Add(time.Hour))
	var order []string
	for _, l := range p.sorted() {
		var at, verb, run string
		if n, _ := fmt.Sscanf(l, "%s %s %s", &at, &verb, &run); n == 3 && verb == "start" {
			order = append(order, at+" "+run)
		}
	}
	want := []string{"00:00 A1", "00:00 O1", "00:01 A6", "00:02 A3", "00:03 A5", "00:04 A2", "00:05 A4"}
	if !slices.Equal(order, want) {
		t.Fatalf("starts %v, want %v", order, want)
	}
}

// Once the pool is closed (a graceful stop began) no run of any queue
// starts; those running end, and Wait returns.
func TestCloseStopsEveryQueue(t *testing.T) {
	var p *pool
	p = newPool(t, PoolConfig{Workers: 1, Queues: map[string]int{"a": 1, "b": 1},
		Handlers: map[string]Handler{"A": sleepsOn(&p, time.Minute), "B": sleepsOn(&p, time.Minute), "D": sleepsOn(&p, time.Minute)}})
	for n := 1; n <= 2; n++ {
		p.enqueue(Enqueued{TaskID: taskID("A"), Run: n, Queue: "a"})
		p.enqueue(Enqueued{TaskID: taskID("B"), Run: n, Queue: "b"})
		p.enqueue(Enqueued{TaskID: taskID("D"), Run: n})
	}
	p.clk.RunUntil(h0.Add(30 * time.Second))
	p.stats.Close()
	p.enqueue(Enqueued{TaskID: taskID("D"), Run: 3, Queue: "new"}) // a queue opened after the stop began
	p.clk.RunUntil(h0.Add(time.Hour))
	want := []string{
		"00:00 start A1", "00:00 start B1", "00:00 start D1",
		"01:00 complete A1", "01:00 complete B1", "01:00 complete D1",
	}
	if got := p.sorted(); !slices.Equal(got, want) {
		t.Fatalf("log:\n%q\nwant\n%q", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.stats.Wait(ctx); err != nil {
		t.Fatal(err)
	}
}

// Queue.Enqueue puts a run on its lane with no message to the queue's
// actor, in the lanes' one order with the runs sent as messages; a queue
// that has no lane yet is the actor's to open (it spawns the workers), so
// Enqueue declines it until the first run sent as a message has opened it.
func TestEnqueueDirect(t *testing.T) {
	var p *pool
	p = newPool(t, PoolConfig{Workers: 1,
		Handlers: map[string]Handler{"A": sleepsOn(&p, time.Minute), "B": sleepsOn(&p, time.Minute), "C": sleepsOn(&p, time.Minute),
			"T": sleepsOn(&p, time.Minute)}})
	if _, direct := p.enqueueDirect(Enqueued{TaskID: taskID("A"), Run: 1}); !direct {
		t.Fatal("Enqueue declined a run of the default queue")
	}
	p.enqueue(Enqueued{TaskID: taskID("B"), Run: 1}) // as a message, behind A1
	if _, direct := p.enqueueDirect(Enqueued{TaskID: taskID("C"), Run: 1, Priority: 1}); !direct {
		t.Fatal("Enqueue declined a run of the default queue")
	}
	if _, direct := p.enqueueDirect(Enqueued{TaskID: taskID("T"), Run: 1, Queue: "typo"}); direct {
		t.Fatal("Enqueue took a run of a queue with no lane yet")
	}
	if _, direct := p.enqueueDirect(Enqueued{TaskID: taskID("T"), Run: 2, Queue: "typo"}); !direct {
		t.Fatal("Enqueue declined a run of a lane the actor opened")
	}
	if q := p.stats.Queued.Load(); q != 3 {
		t.Fatalf("queued %d, want 3 (B1, C1, T2)", q)
	}
	p.clk.RunUntil(h0.Add(time.Hour))
	want := []string{
		"00:00 start A1", "00:00 start T1",
		"01:00 complete A1", "01:00 complete T1", "01:00 start C1", "01:00 start T2", // C1 first: its priority
		"02:00 complete C1", "02:00 complete T2", "02:00 start B1",
		"03:00 complete B1",
	}
	if got := p.sorted(); !slices.Equal(got, want) {
		t.Fatalf("log:\n%q\nwant\n%q", got, want)
	}
	if q, b := p.stats.Queued.Load(), p.stats.Busy.Load(); q != 0 || b != 0 {
		t.Fatalf("at the end: queued %d busy %d, want 0 and 0", q, b)
	}
}

// Before its actor has started, a queue takes no run directly.
func TestEnqueueBeforeStart(t *testing.T) {
	q := NewPool(PoolConfig{Workers: 1, Stats: &Stats{}})
	if q.Enqueue(Enqueued{TaskID: taskID("A"), Run: 1}) {
		t.Fatal("Enqueue took a run before the queue's actor started")
	}
}
