package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

var h0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pool is a queue on a virtual clock whose task actors are played by the
// test: every start is granted (no rule is consulted), and every command a
// worker sends is written down with the virtual time it arrived. It tests
// the worker's side of the protocol alone.
type pool struct {
	t     *testing.T
	clk   *clock.Virtual
	sys   *actor.ActorSystem
	queue *actor.PID
	q     *Queue // the queue's actor is at queue
	stats *Stats

	mu   sync.Mutex
	runs map[uuid.UUID]Enqueued
	// heartbeatTimeout is the fake tasks' heartbeat_timeout, by name.
	heartbeatTimeout map[string]time.Duration
	log              []string // "00:05 start A1", "00:15 fail A1 fatal", …
	// runners are the workers that asked to start each run; ended the
	// runs whose outcome the fake task actors say they recorded already
	// (a report gets rules.ErrUnknownRun).
	runners map[uuid.UUID]*actor.PID
	ended   map[uuid.UUID]bool
	// onStart, if set, is called with each run's name as its start is
	// granted.
	onStart func(name string)
	// bareStarts, while above zero, is how many starts are answered with
	// their event but without their run (an AskFunc not using
	// StartDecision).
	bareStarts int
	// holdSaves, when set, keeps every SaveCheckpoint unanswered until the
	// ask's context ends or holdSaves is closed: a task actor that does
	// not answer.
	holdSaves chan struct{}
}

// timebox of every run the fake task actors grant.
const timebox = time.Hour

func newPool(t *testing.T, cfg PoolConfig) *pool {
	t.Helper()
	return buildPool(t, cfg, true)
}

// buildPool is newPool; without tell, heartbeats reach the fake task
// actors through Ask.
func buildPool(t *testing.T, cfg PoolConfig, tell bool) *pool {
	t.Helper()
	p := &pool{t: t, clk: clock.NewVirtual(h0), stats: &Stats{}, runs: map[uuid.UUID]Enqueued{},
		heartbeatTimeout: map[string]time.Duration{}, runners: map[uuid.UUID]*actor.PID{}, ended: map[uuid.UUID]bool{}}
	p.sys = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.DiscardHandler)
	}))
	counted.Watch(p.sys, p.clk)
	cfg.Archetype = archetype.Archetype{Clock: p.clk, Logger: cfg.Archetype.Logger}
	cfg.Stats = p.stats
	cfg.Base = context.Background()
	cfg.Ask = p.ask
	if tell && cfg.Tell == nil {
		cfg.Tell = p.tell
	}
	p.q = NewPool(cfg)
	p.queue = counted.Spawn(p.clk, p.sys.Root, actor.PropsFromProducer(p.q.Producer()))
	p.clk.Quiesce()
	t.Cleanup(func() { p.sys.Shutdown() })
	return p
}

// enqueue puts a run on the queue; its task is named by taskID, its ID
// derives from the task's, its number and its attempt unless set.
func (p *pool) enqueue(e Enqueued) Enqueued {
	e = p.register(e)
	counted.Send(p.clk, p.sys.Root, p.queue, e)
	p.clk.Quiesce()
	return e
}

// enqueueDirect puts a run on the queue as a task actor does: through
// Queue.Enqueue, and as a message when that reports false (which it
// returns).
func (p *pool) enqueueDirect(e Enqueued) (Enqueued, bool) {
	e = p.register(e)
	direct := p.q.Enqueue(e)
	if !direct {
		counted.Send(p.clk, p.sys.Root, p.queue, e)
	}
	p.clk.Quiesce()
	return e, direct
}

// register makes e known to the fake task actors without queueing it.
func (p *pool) register(e Enqueued) Enqueued {
	if e.RunID == uuid.Nil {
		e.RunID = uuid.NewSHA1(e.TaskID, []byte(fmt.Sprintf("%d/%d", e.Run, e.Attempt)))
	}
	p.mu.Lock()
	p.runs[e.RunID] = e
	p.mu.Unlock()
	return e
}

func (p *pool) note(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log = append(p.log, fmt.Sprintf("%s ", mmss(p.clk.Now().Sub(h0)))+fmt.Sprintf(format, args...))
}

func (p *pool) lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

// sorted is lines in time order, and by text within one instant: workers
// of different runs work at once, so their lines of one instant may come
// in any order.
func (p *pool) sorted() []string {
	l := p.lines()
	sort.Strings(l)
	return l
}

func mmss(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d", int(d/time.Minute), int(d%time.Minute/time.Second))
}

// name is how the log names a run: the task's name and the run's number.
func (p *pool) name(id uuid.UUID) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.runs[id]
	return fmt.Sprintf("%s%d", taskName(e.TaskID), e.Run)
}

var taskNames sync.Map // uuid → name

func taskID(name string) uuid.UUID {
	id := uuid.NewSHA1(uuid.NameSpaceURL, []byte(name))
	taskNames.Store(id, name)
	return id
}

func taskName(id uuid.UUID) string {
	if n, ok := taskNames.Load(id); ok {
		return n.(string)
	}
	return id.String()
}

// ask plays the task actors: a start is granted with the run's kind being
// the task's name (so a test registers a handler per task), outcomes are
// written down.
func (p *pool) ask(ctx context.Context, from actor.SenderContext, _ *actor.PID, cmd rules.Command) (Decision, error) {
	switch c := cmd.(type) {
	case rules.Complete, rules.Fail, rules.ForceEnd:
		id := outcomeRun(c)
		p.mu.Lock()
		ended := p.ended[id]
		p.mu.Unlock()
		if ended {
			p.note("late %T %s", c, p.name(id))
			return Decision{}, fmt.Errorf("fake: %w", rules.ErrUnknownRun)
		}
	}
	switch c := cmd.(type) {
	case rules.RequestStart:
		p.mu.Lock()
		e := p.runs[c.RunID]
		p.runners[c.RunID] = from.Self()
		p.mu.Unlock()
		now := p.clk.Now()
		name := taskName(e.TaskID)
		p.note("start %s%d", name, e.Run)
		if p.onStart != nil {
			p.onStart(fmt.Sprintf("%s%d", name, e.Run))
		}
		var st rules.State
		st.ID = e.TaskID
		st.Spec.Name, st.Spec.Kind = name, name
		p.mu.Lock()
		st.Spec.Policy.HeartbeatTimeout = events.Duration(p.heartbeatTimeout[name])
		p.mu.Unlock()
		st.Open = append(st.Open, rules.Run{ID: e.RunID, Number: e.Run, Started: true, StartedAt: now,
			Deadline: now.Add(timebox), Attempt: max(e.Attempt, 1), RetryOf: e.RetryOf, Trigger: e.Trigger})
		d := StartDecision([]events.Event{events.RunStarted{RunID: e.RunID, Run: e.Run}}, &st, e.RunID)
		p.mu.Lock()
		if p.bareStarts > 0 {
			p.bareStarts--
			d.Run = nil
		}
		p.mu.Unlock()
		return d, nil
	case rules.Complete:
		p.note("complete %s", p.name(c.RunID))
		return Decision{Events: []events.Event{events.RunCompleted{RunID: c.RunID}}}, nil
	case rules.Fail:
		fatal := ""
		if c.Fatal {
			fatal = " fatal"
		}
		p.note("fail %s%s", p.name(c.RunID), fatal)
		return Decision{Events: []events.Event{events.RunFailed{RunID: c.RunID}}}, nil
	case rules.ForceEnd:
		p.note("forced %s %s", p.name(c.RunID), c.Reason)
		return Decision{Events: []events.Event{events.RunForcedEnd{RunID: c.RunID}}}, nil
	case rules.Heartbeat:
		p.note("heartbeat %s (asked)", p.name(c.RunID))
		return Decision{}, nil
	case rules.SaveCheckpoint:
		p.mu.Lock()
		hold := p.holdSaves
		p.mu.Unlock()
		if hold != nil {
			select {
			case <-ctx.Done():
				return Decision{}, ctx.Err()
			case <-hold:
			}
		}
		p.note("checkpoint %s", p.name(c.RunID))
		return Decision{}, nil
	}
	return Decision{}, fmt.Errorf("unexpected %T", cmd)
}

// outcomeRun is the run an outcome command reports.
func outcomeRun(cmd rules.Command) uuid.UUID {
	switch c := cmd.(type) {
	case rules.Complete:
		return c.RunID
	case rules.Fail:
		return c.RunID
	case rules.ForceEnd:
		return c.RunID
	}
	return uuid.Nil
}

// forceEnd plays a task actor recording run id's forced end for reason
// and telling the worker that runs it (StopRun). It does not wait.
func (p *pool) forceEnd(id uuid.UUID, reason string) {
	p.mu.Lock()
	p.ended[id] = true
	pid := p.runners[id]
	p.mu.Unlock()
	p.note("forced %s %s (by the task)", p.name(id), reason)
	counted.Send(p.clk, p.sys.Root, pid, StopRun{RunID: id, Reason: reason})
}

func (p *pool) tell(_ actor.SenderContext, _ *actor.PID, cmd rules.Command) {
	if c, ok := cmd.(rules.Heartbeat); ok {
		p.note("heartbeat %s", p.name(c.RunID))
		return
	}
	p.t.Errorf("unexpected tell %T", cmd)
}

// sleeps is a handler that works d on the clock, then returns err.
func sleeps(c clock.Clock, d time.Duration, err error) Handler {
	return HandlerFunc(func(ctx context.Context, r *Run) (json.RawMessage, error) {
		if e := clock.Sleep(ctx, c, d); e != nil {
			return nil, e
		}
		return nil, err
	})
}
