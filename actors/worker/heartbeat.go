package worker

import (
	"context"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/task/rules"
)

// HeartbeatGap is the least time between two heartbeats the worker sends
// for one run (R16): a Heartbeat call sooner than that after the last one
// sent (or the run's start, which counts as one) sends nothing, so a
// handler may call it in a tight loop. For a task whose heartbeat_timeout
// is under ten times HeartbeatGap the gap is a tenth of the timeout, so
// the task actor's view of the last heartbeat is never stale by more than
// that.
const HeartbeatGap = time.Second

// KeepAliveEvery is how often KeepAlive heartbeats when the run's task has
// no heartbeat_timeout (with one: a third of it, at most this).
const KeepAliveEvery = 10 * time.Second

// heartbeatGap is the gap for a task whose heartbeat_timeout is timeout
// (0: none).
func heartbeatGap(timeout time.Duration) time.Duration {
	if timeout > 0 && timeout/10 < HeartbeatGap {
		return timeout / 10
	}
	return HeartbeatGap
}

// keepAliveEvery is KeepAlive's period for a task whose heartbeat_timeout
// is timeout (0: none): at least two heartbeats fall in every window of
// the timeout.
func keepAliveEvery(timeout time.Duration) time.Duration {
	if timeout > 0 && timeout/3 < KeepAliveEvery {
		return timeout / 3
	}
	return KeepAliveEvery
}

// beats sends the heartbeats of one running run to its task actor, at most
// one per gap on the clock, and none once the handler has returned.
type beats struct {
	c     clock.Clock
	gap   time.Duration
	every time.Duration
	// to sends the heartbeats: the worker's run (handling), with no
	// function value made for every run, or HeartbeatTo's function.
	to      heartbeater
	mu      sync.Mutex
	last    time.Time
	stopped bool
	alive   []func() // stops of the KeepAlives in force
}

// heartbeater sends a run's heartbeat.
type heartbeater interface{ heartbeat() }

// sendFunc is HeartbeatTo's send as a heartbeater.
type sendFunc func()

func (f sendFunc) heartbeat() { f() }

// newBeats starts counting at now: the run's start is its first heartbeat.
func newBeats(c clock.Clock, timeout time.Duration, send func()) *beats {
	b := &beats{to: sendFunc(send)}
	b.start(c, timeout)
	return b
}

// start sets b up for a run whose task has heartbeat_timeout timeout,
// counting from now: the run's start is its first heartbeat.
func (b *beats) start(c clock.Clock, timeout time.Duration) {
	b.c, b.gap, b.every, b.last = c, heartbeatGap(timeout), keepAliveEvery(timeout), c.Now()
}

// beat sends a heartbeat unless one was sent less than gap ago. It sends
// while holding mu, so that none is sent after stop: a heartbeat a handler
// sends before it returns reaches the task actor before the outcome.
func (b *beats) beat() {
	now := b.c.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped || now.Sub(b.last) < b.gap {
		return
	}
	b.last = now
	b.to.heartbeat()
}

// stop ends the run's heartbeats, KeepAlive's too: its handler has
// returned.
func (b *beats) stop() {
	b.mu.Lock()
	b.stopped = true
	alive := b.alive
	b.alive = nil
	b.mu.Unlock()
	for _, stop := range alive { // without b.mu: a KeepAlive's timer takes its own lock, then b.mu
		stop()
	}
}

func (b *beats) over() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stopped
}

// keepAlive heartbeats every b.every on the clock until the returned
// function is called or the handler returns.
func (b *beats) keepAlive() (stop func()) {
	var (
		mu      sync.Mutex
		t       clock.Timer
		stopped bool
		arm     func()
	)
	arm = func() {
		t = b.c.AfterFunc(b.every, func() {
			mu.Lock()
			defer mu.Unlock()
			if stopped || b.over() {
				return
			}
			b.beat()
			arm()
		})
	}
	stop = func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			stopped = true
			t.Stop()
		}
	}
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return func() {}
	}
	b.alive = append(b.alive, stop)
	b.mu.Unlock()
	mu.Lock()
	arm()
	mu.Unlock()
	return stop
}

// TellFunc sends cmd to the task actor at task, from from, without waiting
// for an answer (the answer, if any, is dropped). The send must be counted
// on the clock (package internal/counted), like every message between the
// scheduler's actors, so that a virtual clock stays deterministic.
type TellFunc func(from actor.SenderContext, task *actor.PID, cmd rules.Command)

// tell sends cmd with cfg.Tell, or, when there is none, asks on a
// goroutine of its own (counted as work in flight) and drops the answer.
func (w *Worker) tell(from actor.SenderContext, run QueuedRun, cmd rules.Command) {
	if w.cfg.Tell != nil {
		w.cfg.Tell(from, run.Task, cmd)
		return
	}
	c := w.cfg.Archetype.Clock
	c.Begin()
	go func() {
		defer c.End()
		_, _ = w.cfg.Ask(context.Background(), from, run.Task, cmd)
	}()
}
