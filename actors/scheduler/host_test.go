package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/google/uuid"
)

// echo is a host actor of the tests' own: it answers what it is asked.
type echo struct{}

func (echo) Receive(ctx actor.Context) {
	if s, ok := ctx.Message().(string); ok {
		ctx.Respond("echo " + s)
	}
}

// tally is a clock that counts Begin and End on top of a Virtual one:
// once the system is quiescent the two must be equal (an End without its
// Begin would make ends exceed begins and let virtual time move early).
type tally struct {
	*clock.Virtual
	begins, ends atomic.Int64
}

func (c *tally) Begin() { c.begins.Add(1); c.Virtual.Begin() }
func (c *tally) End()   { c.ends.Add(1); c.Virtual.End() }

func (c *tally) check(t *testing.T, when string) {
	t.Helper()
	c.Quiesce()
	if b, e := c.begins.Load(), c.ends.Load(); b != e {
		t.Fatalf("%s: %d counted in flight and %d ended: the clock is unbalanced", when, b, e)
	}
}

func hostScheduler(t *testing.T, sys *actor.ActorSystem, c clock.Clock) *scheduler.Scheduler {
	t.Helper()
	s, err := scheduler.New(scheduler.Config{Store: memStore(t), Clock: c, Tick: 30 * time.Second, ActorSystem: sys})
	if err != nil {
		t.Fatal(err)
	}
	for k, h := range noop() {
		if err := s.Register(k, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func ask(t *testing.T, sys *actor.ActorSystem, pid *actor.PID, msg any) scheduler.TaskReply {
	t.Helper()
	res, err := sys.Root.RequestFuture(pid, msg, 10*time.Second).Result()
	if err != nil {
		t.Fatalf("%T: %v", msg, err)
	}
	r, ok := res.(scheduler.TaskReply)
	if !ok {
		t.Fatalf("%T answered %T", msg, res)
	}
	return r
}

// waitGone returns once the actor at pid has stopped (a request sent
// while it stops may go unanswered: see gateway.go).
func waitGone(t *testing.T, sys *actor.ActorSystem, pid *actor.PID) {
	t.Helper()
	done := make(chan struct{})
	sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		switch ctx.Message().(type) {
		case *actor.Started:
			ctx.Watch(pid)
		case *actor.Terminated:
			close(done)
			ctx.Stop(ctx.Self())
		}
	}))
	within(t, done, "the actor to stop")
}

// within waits for ch to close, failing the test after 30 s rather than
// hanging until the package's timeout.
func within(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("waited 30 s for %s", what)
	}
}

// actorsUnder counts the processes of sys whose name starts with prefix.
func actorsUnder(sys *actor.ActorSystem, prefix string) int {
	n := 0
	for _, m := range sys.ProcessRegistry.LocalPIDs.LocalPIDs {
		for _, k := range m.Keys() {
			if strings.HasPrefix(k, prefix) {
				n++
			}
		}
	}
	return n
}

// TestHostSystemOutlivesStop: two schedulers share the host's actor
// system, each under its own prefix; host actors drive their tasks by
// messages; stopping one removes exactly its actors, the other scheduler
// and the host's actors go on, and the host can still spawn.
func TestHostSystemOutlivesStop(t *testing.T) {
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	ctx := context.Background()
	host := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return echo{} }))
	c1, c2 := &tally{Virtual: clock.NewVirtual(t0)}, &tally{Virtual: clock.NewVirtual(t0)}
	s1, s2 := hostScheduler(t, sys, c1), hostScheduler(t, sys, c2)
	defer stopNow(s2)
	if s1.ActorPrefix() == s2.ActorPrefix() {
		t.Fatalf("two schedulers share the prefix %q", s1.ActorPrefix())
	}
	t1, _, err := s1.CreateTask(ctx, spec("a", time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t2, _, err := s2.CreateTask(ctx, spec("a", time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	p1, err := s1.TaskPID(ctx, t1.ID)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := s2.TaskPID(ctx, t2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p1.Id, s1.ActorPrefix()) || !strings.HasPrefix(p2.Id, s2.ActorPrefix()) {
		t.Fatalf("task PIDs %s, %s outside their prefixes %s, %s", p1.Id, p2.Id, s1.ActorPrefix(), s2.ActorPrefix())
	}
	if r := ask(t, sys, p1, scheduler.TriggerTask{}); r.Err != nil || r.RunID == uuid.Nil || r.Task.Runs != 1 || r.Task.Waiting != 1 {
		t.Fatalf("trigger: %+v", r)
	}
	c1.check(t, "after a trigger")
	if r := ask(t, sys, p1, &scheduler.GetTask{}); r.Err != nil || r.Task.ID != t1.ID || r.Task.Runs != 1 || r.Task.Waiting+r.Task.Running != 0 {
		t.Fatalf("get after the triggered run: %+v", r)
	}
	if actorsUnder(sys, s1.ActorPrefix()) == 0 || actorsUnder(sys, s2.ActorPrefix()) == 0 {
		t.Fatal("no actors under the schedulers' prefixes")
	}

	if err := s1.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if n := actorsUnder(sys, s1.ActorPrefix()); n != 0 {
		t.Fatalf("%d actors of the stopped scheduler left in the host's system", n)
	}
	if _, err := sys.Root.RequestFuture(p1, scheduler.GetTask{}, 10*time.Second).Result(); !errors.Is(err, actor.ErrDeadLetter) {
		t.Fatalf("a request to the stopped scheduler's task: %v, want a dead letter", err)
	}
	if res, err := sys.Root.RequestFuture(host, "ping", 10*time.Second).Result(); err != nil || res != "echo ping" {
		t.Fatalf("the host's actor after Stop: %v %v", res, err)
	}
	late := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return echo{} }))
	if res, err := sys.Root.RequestFuture(late, "pong", 10*time.Second).Result(); err != nil || res != "echo pong" {
		t.Fatalf("an actor spawned after Stop: %v %v", res, err)
	}
	if r := ask(t, sys, p2, scheduler.PauseTask{}); r.Err != nil || r.Task.Status != "paused" {
		t.Fatalf("the other scheduler's task after Stop: %+v", r)
	}
	if _, err := s2.Trigger(ctx, t2.ID); !errors.Is(err, scheduler.ErrCannotTrigger) {
		t.Fatalf("trigger of the paused task: %v", err)
	}
	c2.check(t, "the other scheduler")
}

// TestHostMessagesKeepTheClockBalanced: every host request, those answered
// with errors, those sent without a sender, strangers' messages and a
// request to a task's stopped actor leave the virtual clock's in-flight
// count exactly balanced.
func TestHostMessagesKeepTheClockBalanced(t *testing.T) {
	sys := actor.NewActorSystem()
	defer sys.Shutdown()
	ctx := context.Background()
	c := &tally{Virtual: clock.NewVirtual(t0)}
	s := hostScheduler(t, sys, c)
	defer stopNow(s)
	tk, _, err := s.CreateTask(ctx, spec("a", time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := s.TaskPID(ctx, tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	v := tk.Version + 7
	if r := ask(t, sys, pid, scheduler.PauseTask{IfVersion: &v}); !errors.Is(r.Err, scheduler.ErrVersionMismatch) || r.Task.Status != "active" {
		t.Fatalf("pause at a wrong version: %+v", r)
	}
	if r := ask(t, sys, pid, scheduler.PauseTask{IfVersion: &tk.Version}); r.Err != nil || r.Task.Status != "paused" {
		t.Fatalf("pause: %+v", r)
	}
	if r := ask(t, sys, pid, scheduler.TriggerTask{}); !errors.Is(r.Err, scheduler.ErrCannotTrigger) {
		t.Fatalf("trigger of a paused task: %+v", r)
	}
	if r := ask(t, sys, pid, &scheduler.ResumeTask{}); r.Err != nil || r.Task.Status != "active" {
		t.Fatalf("resume: %+v", r)
	}
	p := 7
	if r := ask(t, sys, pid, scheduler.UpdateTask{Update: scheduler.TaskUpdate{Priority: &p, Interval: new(2 * time.Minute)}}); r.Err != nil ||
		r.Task.Priority != 7 || r.Task.Interval != 2*time.Minute {
		t.Fatalf("update: %+v", r)
	}
	if r := ask(t, sys, pid, scheduler.UpdateTask{Update: scheduler.TaskUpdate{Interval: new(-time.Second)}}); !errors.Is(r.Err, scheduler.ErrInvalidSpec) {
		t.Fatalf("a bad update: %+v", r)
	}
	sys.Root.Send(pid, scheduler.TriggerTask{}) // no sender: decided, not answered
	sys.Root.Send(pid, "a stranger's message")
	sys.Root.Send(pid, (*scheduler.GetTask)(nil))
	c.check(t, "after the requests")
	clk := c.Virtual
	clk.RunUntil(t0.Add(5 * time.Minute))
	c.check(t, "after running")
	got, err := s.Task(ctx, tk.ID)
	if err != nil || got.Runs != 4 || !got.LastRun.Equal(t0.Add(5*time.Minute)) { // the trigger sent without a sender, 01:00, 03:00, 05:00
		t.Fatalf("task after running: %+v %v", got, err)
	}

	if _, err := s.DeleteTask(ctx, tk.ID); err != nil {
		t.Fatal(err)
	}
	c.check(t, "after the delete") // the deleted task's actor is stopping
	waitGone(t, sys, pid)
	if _, err := sys.Root.RequestFuture(pid, scheduler.GetTask{}, 10*time.Second).Result(); !errors.Is(err, actor.ErrDeadLetter) {
		t.Fatalf("a request to the stopped actor: %v, want a dead letter", err)
	}
	c.check(t, "after a dead letter")
	if _, err := s.TaskPID(ctx, tk.ID); !errors.Is(err, scheduler.ErrTaskDeleted) {
		t.Fatalf("TaskPID of the deleted task: %v", err)
	}
	c.check(t, "at the end")
	if _, err := s.TaskPID(ctx, uuid.New()); !errors.Is(err, scheduler.ErrTaskNotFound) {
		t.Fatalf("TaskPID of an unknown task: %v", err)
	}
}
