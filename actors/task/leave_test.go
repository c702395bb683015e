package task_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/google/uuid"
)

// hookRegistry is the rig's registry with a hook called in Leave before
// the actor's send, under what a Registry holds there.
type hookRegistry struct {
	*registry
	beforeSend func(self *actor.PID)
	stopped    chan struct{} // if set, gets a value when an actor stops
}

func (g hookRegistry) Left(id uuid.UUID, self *actor.PID, stopped bool, rest *rules.State, pos events.Position) {
	g.registry.Left(id, self, stopped, rest, pos)
	if stopped && g.stopped != nil {
		g.stopped <- struct{}{}
	}
}

func (g hookRegistry) Leave(id uuid.UUID, self *actor.PID, send func()) {
	if g.beforeSend != nil {
		g.beforeSend(self)
	}
	send()
}

// spawnOnTaskMailbox starts the rig's actor on the task actors' own mailbox
// (as the scheduler does), counting the passivate messages it handles.
func (r *rig) spawnOnTaskMailbox(passivates *int, mu *sync.Mutex) *actor.PID {
	count := func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			if fmt.Sprintf("%T", env.Message) == "task.passivate" {
				mu.Lock()
				*passivates++
				mu.Unlock()
			}
			next(c, env)
		}
	}
	r.clk.Begin() // its Started, as counted.Spawn counts it
	if r.cfg.Runtime == nil {
		r.cfg.Runtime = task.NewRuntime(nil, nil)
	}
	return r.sys.Root.Spawn(r.cfg.Runtime.Props(task.New(r.cfg, r.id, nil), actor.WithReceiverMiddleware(count)))
}

// An idle actor with nothing waiting in its mailbox leaves without its
// last message to itself: it passivates at once, and the next message
// for the task finds a new actor.
func TestLeavesAtOnceWhenNothingWaits(t *testing.T) {
	r := newRig(t, nil)
	r.cfg.Rest = true
	var mu sync.Mutex
	passivates := 0
	a := r.spawnOnTaskMailbox(&passivates, &mu)
	r.create(a, time.Minute, t0.Add(time.Minute))
	if r.alive(a) {
		t.Fatal("the actor of a resting task did not stop")
	}
	mu.Lock()
	defer mu.Unlock()
	if passivates != 0 {
		t.Fatalf("%d passivate messages handled, want none", passivates)
	}
	if r.reg.rest == nil || r.reg.rest.State.Spec.Name != "A" {
		t.Fatalf("resting state handed over: %+v", r.reg.rest)
	}
}

// A message that waits in the mailbox when the actor leaves — sent before
// the Registry stopped handing the actor out — is handled before the actor
// stops: the actor queues its last message behind it.
func TestLeavingHandlesTheMessageThatWaits(t *testing.T) {
	r := newRig(t, nil)
	r.cfg.Rest = true
	var mu sync.Mutex
	passivates := 0
	var fut *actor.Future
	posted := make(chan struct{})
	hook := hookRegistry{registry: r.reg}
	hook.beforeSend = func(self *actor.PID) {
		if fut == nil { // the first leave only
			r.clk.Begin() // the pause, counted until the actor handles it
			fut = r.sys.Root.RequestFuture(self, task.Command{Cmd: rules.Pause{}}, 10*time.Second)
			close(posted)
		}
	}
	r.cfg.Registry = hook
	a := r.spawnOnTaskMailbox(&passivates, &mu)
	r.create(a, time.Minute, t0.Add(time.Minute))
	select {
	case <-posted:
	case <-time.After(10 * time.Second):
		t.Fatal("the actor did not leave after its task was created")
	}
	// Not Quiesce first: a pause dropped by the stopped actor would stay
	// counted, and the clock would wait for ever; the future times out.
	res, err := fut.Result()
	if err != nil {
		t.Fatalf("the message that waited was not handled: %v", err)
	}
	rep := res.(task.Reply)
	if rep.Err != nil || len(rep.Events) != 1 {
		t.Fatalf("pause: %+v", rep)
	}
	if _, ok := rep.Events[0].(events.TaskPaused); !ok {
		t.Fatalf("pause recorded %T", rep.Events[0])
	}
	if r.alive(a) {
		t.Fatal("the actor did not stop after the message that waited")
	}
	mu.Lock()
	defer mu.Unlock()
	if passivates == 0 {
		t.Fatal("no passivate message: the actor did not wait for the message in its mailbox")
	}
	if r.reg.rest == nil || r.reg.rest.State.Status != rules.StatusPaused {
		t.Fatalf("state handed over: %+v, want the paused task", r.reg.rest)
	}
}

// gatedStore holds each append until the test lets it go. It has no
// AppendAsync: the actor appends on a goroutine of its own.
type gatedStore struct {
	events.Store
	gate chan struct{}
}

func (s gatedStore) Append(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	<-s.gate
	return s.Store.Append(ctx, stream, exp, evs...)
}

// A command held while an append was in flight is decided before the
// actor leaves, even when its mailbox is empty by then: the actor queues
// its last message behind the held ones, and hands over the state they
// made (here paused), not the one before them.
func TestLeavingHandlesTheHeldMessages(t *testing.T) {
	mem, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	gate := make(chan struct{})
	r := newRig(t, gatedStore{Store: mem, gate: gate})
	r.cfg.Rest = true
	stopped := make(chan struct{}, 1)
	r.cfg.Registry = hookRegistry{registry: r.reg, stopped: stopped}
	held := make(chan struct{})
	spy := func(next actor.ReceiverFunc) actor.ReceiverFunc {
		return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
			next(c, env)
			if m, ok := env.Message.(task.Command); ok && m.Cmd == (rules.Pause{}) {
				close(held) // the actor has it, held behind the append
			}
		}
	}
	r.clk.Begin() // its Started
	r.cfg.Runtime = task.NewRuntime(nil, nil)
	a := r.sys.Root.Spawn(r.cfg.Runtime.Props(task.New(r.cfg, r.id, nil), actor.WithReceiverMiddleware(spy)))
	spec := rules.Spec{Name: "A", Owner: "o", Kind: "k", Schedule: events.Schedule{Interval: events.Duration(time.Minute)}}
	r.clk.Begin()
	created := r.sys.Root.RequestFuture(a, task.Command{Cmd: rules.Create{TaskID: r.id, Spec: spec, FirstRun: t0.Add(time.Minute)}}, 10*time.Second)
	r.clk.Begin()
	got := r.sys.Root.RequestFuture(a, task.Command{Cmd: rules.Pause{}}, 10*time.Second)
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the pause did not reach the actor")
	}
	close(gate)
	if _, err := created.Result(); err != nil {
		t.Fatal(err)
	}
	res, err := got.Result()
	if err != nil {
		t.Fatalf("the held pause was not answered: %v", err)
	}
	if rep := res.(task.Reply); rep.Err != nil || rep.State.Status != rules.StatusPaused {
		t.Fatalf("pause: %+v", rep)
	}
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the actor of the resting task did not stop")
	}
	r.reg.mu.Lock()
	rest := r.reg.rest
	r.reg.mu.Unlock()
	if rest == nil || rest.State.Status != rules.StatusPaused {
		t.Fatalf("state handed over: %+v, want the paused task", rest)
	}
	if r.alive(a) {
		t.Fatal("the actor of the resting task did not stop")
	}
}
