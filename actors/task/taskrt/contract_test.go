package taskrt

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// The contract of the runtime against protoactor-go, the version pinned in
// go.mod: each test pins one behaviour the runtime (and the task actor
// above it) relies on, through the runtime's own Props, mailbox and pool.
// They run on a dispatcher that runs what is scheduled only when the test
// says so, on the test's goroutine: every step is deterministic.

// journal is what the actors of a test received, in order, by actor.
type journal struct {
	mu  sync.Mutex
	got []string
}

func (j *journal) note(s string) {
	j.mu.Lock()
	j.got = append(j.got, s)
	j.mu.Unlock()
}

func (j *journal) all() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.got...)
}

// probe is an actor of the runtime: it notes every message it receives
// (name, then the message: "a Started"), calls on, and puts its object
// back on Stopped, as the task actor does.
type probe struct {
	Life
	rt   *Runtime
	name string
	j    *journal
	on   func(p *probe, ctx actor.Context)
}

func (p *probe) Receive(ctx actor.Context) {
	if p.j == nil {
		panic(fmt.Sprintf("probe: %T reached an object put back", ctx.Message()))
	}
	p.j.note(p.name + " " + describe(ctx.Message()))
	if p.on != nil {
		p.on(p, ctx)
	}
	if _, ok := ctx.Message().(*actor.Stopped); ok {
		p.name, p.j, p.on = "", nil, nil
		p.rt.Put(p)
	}
}

func describe(m any) string {
	switch m := m.(type) {
	case string:
		return m
	case *actor.Started:
		return "Started"
	case *actor.Stopping:
		return "Stopping"
	case *actor.Stopped:
		return "Stopped"
	case *actor.Terminated:
		return "Terminated"
	case *actor.Restarting:
		return "*actor.Restarting"
	default:
		return fmt.Sprintf("%T", m)
	}
}

// rig is an actor system, a runtime of probes on a step dispatcher, and
// the dead letters seen.
type rig struct {
	sys  *actor.ActorSystem
	rt   *Runtime
	d    *stepDispatcher
	j    *journal
	mu   sync.Mutex
	dead []*actor.DeadLetterEvent
}

func newRig(t *testing.T) *rig {
	r := &rig{d: &stepDispatcher{}, j: &journal{}}
	r.sys = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	t.Cleanup(r.sys.Shutdown)
	r.rt = New(Config{New: func() Pooled { return &probe{} }, Reuse: true, Dispatcher: r.d})
	r.sys.EventStream.Subscribe(func(evt any) {
		if dl, ok := evt.(*actor.DeadLetterEvent); ok {
			r.mu.Lock()
			r.dead = append(r.dead, dl)
			r.mu.Unlock()
		}
	})
	return r
}

// spawn starts a probe named name under the runtime; it has not run yet.
func (r *rig) spawn(name string, on func(*probe, actor.Context)) (*actor.PID, *probe) {
	var made *probe
	pid := r.sys.Root.Spawn(r.rt.Props(func() actor.Actor {
		p := r.rt.Get().(*probe)
		p.rt, p.name, p.j, p.on = r.rt, name, r.j, on
		made = p
		return p
	}))
	return pid, made
}

// deadTo is the messages of the dead letters addressed to pid, by name.
func (r *rig) deadTo(pid *actor.PID) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var got []string
	for _, dl := range r.dead {
		if dl.PID != nil && dl.PID.Id == pid.Id {
			got = append(got, describe(dl.Message))
		}
	}
	return got
}

func equal(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// stopOn makes a probe stop itself when it receives msg.
func stopOn(msg string) func(*probe, actor.Context) {
	return func(_ *probe, ctx actor.Context) {
		if ctx.Message() == msg {
			ctx.Stop(ctx.Self())
		}
	}
}

// Nothing reaches an actor after *actor.Stopped — not the user messages
// still in its mailbox, not a second Stop, a poison pill or a watch — so
// the actor may put its object back for reuse on Stopped. (The task
// actor's recycle relies on it.)
func TestContractNothingAfterStopped(t *testing.T) {
	r := newRig(t)
	pid, p := r.spawn("a", stopOn("stop"))
	gen := p.Generation()
	r.sys.Root.Send(pid, "stop")
	r.sys.Root.Send(pid, "late") // behind the stop the first message asks for
	r.d.runAll()
	r.sys.Root.Stop(pid)
	r.sys.Root.Poison(pid)
	r.sys.Root.Send(pid, "after")
	_, w := r.spawn("w", func(_ *probe, ctx actor.Context) {
		if _, ok := ctx.Message().(*actor.Started); ok {
			ctx.Watch(pid)
		}
	})
	r.d.runAll()
	want := []string{"a Started", "a stop", "a Stopping", "a Stopped", "w Started", "w Terminated"}
	if got := r.j.all(); !equal(got, want) {
		t.Fatalf("received %v, want %v", got, want)
	}
	if p.Generation() != gen+1 {
		t.Fatalf("the object is at generation %d, want %d: put back once", p.Generation(), gen+1)
	}
	if w == p {
		t.Log("the watcher reused the stopped probe's object")
	}
	if n := r.rt.Violations(); n != 0 {
		t.Fatalf("%d violations", n)
	}
}

// An actor without children is stopped within the invocation of its
// *actor.Stop system message: Stopping and Stopped both come before the
// invocation returns, so the mailbox knows once it returns that the actor
// is gone (and the runtime sees no violation).
func TestContractStopIsSynchronousWithoutChildren(t *testing.T) {
	r := newRig(t)
	pid, p := r.spawn("a", nil)
	r.d.runAll()
	var atStop []string
	p.mb.afterSystem = func(msg any) {
		if _, ok := msg.(*actor.Stop); ok {
			atStop = r.j.all()
		}
	}
	r.sys.Root.Stop(pid)
	r.d.runAll()
	want := []string{"a Started", "a Stopping", "a Stopped"}
	if !equal(atStop, want) {
		t.Fatalf("when the Stop's invocation returned the actor had received %v, want %v", atStop, want)
	}
	if n := r.rt.Violations(); n != 0 {
		t.Fatalf("%d violations", n)
	}
}

// The other side of the contract above: an actor with a child is not
// stopped within its Stop (it waits for the child's Terminated), and the
// runtime says so — a panic in tests (ErrStopNotSynchronous), counted
// otherwise — rather than take its mailbox for gone while it is not. Task
// actors have no children.
func TestContractStopWithAChildIsAViolation(t *testing.T) {
	r := newRig(t)
	pid, _ := r.spawn("a", func(_ *probe, ctx actor.Context) {
		if _, ok := ctx.Message().(*actor.Started); ok {
			ctx.Spawn(actor.PropsFromFunc(func(actor.Context) {}, actor.WithDispatcher(r.d)))
		}
	})
	r.d.runAll()
	r.sys.Root.Stop(pid)
	v := catch(r.d.runAll)
	if v == nil || !errors.Is(v, ErrStopNotSynchronous) {
		t.Fatalf("stopping an actor with a child: panic %v, want %v", v, ErrStopNotSynchronous)
	}

	r2 := newRig(t)
	r2.rt.strict = false // production: counted, the actor stops all the same
	pid, _ = r2.spawn("b", func(_ *probe, ctx actor.Context) {
		if _, ok := ctx.Message().(*actor.Started); ok {
			ctx.Spawn(actor.PropsFromFunc(func(actor.Context) {}, actor.WithDispatcher(r2.d)))
		}
	})
	r2.d.runAll()
	r2.sys.Root.Stop(pid)
	r2.sys.Root.Send(pid, "late")
	r2.d.runAll()
	if got, want := r2.j.all(), []string{"b Started", "b Stopping", "b Terminated", "b Stopped"}; !equal(got, want) {
		t.Fatalf("received %v, want %v", got, want)
	}
	if got := r2.deadTo(pid); !equal(got, []string{"late"}) {
		t.Fatalf("dead letters %v, want [late]: a stopping actor gets no user message", got)
	}
	if n := r2.rt.Violations(); n != 1 {
		t.Fatalf("%d violations, want 1", n)
	}
}

// A user message that reached the mailbox before its actor stopped and is
// taken after goes to the dead letters, with its sender, addressed to the
// actor — where a request is answered (a future fails with ErrDeadLetter)
// and a counted message is uncounted — not nowhere, as protoactor's actor
// context would have it.
func TestContractHeldMessageGoesToDeadLetters(t *testing.T) {
	r := newRig(t)
	pid, _ := r.spawn("a", stopOn("stop"))
	r.d.runAll()
	r.sys.Root.Send(pid, "stop")
	r.sys.Root.Send(pid, "held")
	req := r.sys.Root.RequestFuture(pid, "asked", time.Minute)
	r.d.runAll()
	if got, want := r.j.all(), []string{"a Started", "a stop", "a Stopping", "a Stopped"}; !equal(got, want) {
		t.Fatalf("received %v, want %v", got, want)
	}
	if got := r.deadTo(pid); !equal(got, []string{"held", "asked"}) {
		t.Fatalf("dead letters to the actor %v, want [held asked]", got)
	}
	if _, err := req.Result(); !errors.Is(err, actor.ErrDeadLetter) {
		t.Fatalf("the request held behind the stop: %v, want %v", err, actor.ErrDeadLetter)
	}
}

// The mailbox's invoker is the actor's context, whose Actor method
// returns the actor just produced, before its Started: the actor learns
// its mailbox there, and reads what waits in it (the task actor
// passivates at once when nothing does).
func TestContractMailboxReachesItsActor(t *testing.T) {
	r := newRig(t)
	var waiting []int
	pid, p := r.spawn("a", func(p *probe, ctx actor.Context) {
		if _, ok := ctx.Message().(*actor.Started); ok {
			n, ok := p.Waiting()
			if !ok {
				n = -1
			}
			waiting = append(waiting, n)
		}
	})
	if _, ok := p.Waiting(); !ok {
		t.Fatal("the actor does not know its mailbox once spawned")
	}
	r.sys.Root.Send(pid, "x")
	r.sys.Root.Send(pid, "y")
	r.d.runAll()
	if fmt.Sprint(waiting) != "[2]" {
		t.Fatalf("at Started the actor saw %v messages waiting, want [2]", waiting)
	}
}

// The actor has left the process registry when it receives Stopped: what
// is sent to it then, or after, goes to the dead letters rather than into
// its mailbox (the dead-lettering of the mailbox covers only what came
// before).
func TestContractStoppedActorHasLeftTheRegistry(t *testing.T) {
	r := newRig(t)
	registered := true
	pid, _ := r.spawn("a", func(_ *probe, ctx actor.Context) {
		if _, ok := ctx.Message().(*actor.Stopped); ok {
			_, registered = r.sys.ProcessRegistry.GetLocal(ctx.Self().Id)
			ctx.Send(ctx.Self(), "to self")
		}
	})
	r.d.runAll()
	r.sys.Root.Stop(pid)
	r.d.runAll()
	if registered {
		t.Fatal("the actor is still in the process registry at Stopped")
	}
	if got := r.deadTo(pid); !equal(got, []string{"to self"}) {
		t.Fatalf("dead letters %v, want [to self]", got)
	}
}

// ctx.Stop(ctx.Self()) inside Receive only queues the Stop: the handler
// runs to its end before Stopping, so an actor that passivates (the task
// actor's passivate) is not stopped, nor its object reused, under its own
// feet.
func TestContractStopInsideReceiveIsQueued(t *testing.T) {
	r := newRig(t)
	pid, _ := r.spawn("a", func(p *probe, ctx actor.Context) {
		if ctx.Message() == "stop" {
			ctx.Stop(ctx.Self())
			p.j.note("a handler ended")
		}
	})
	r.sys.Root.Send(pid, "stop")
	r.d.runAll()
	want := []string{"a Started", "a stop", "a handler ended", "a Stopping", "a Stopped"}
	if got := r.j.all(); !equal(got, want) {
		t.Fatalf("received %v, want %v", got, want)
	}
}

// A panic restarts the actor (protoactor's default supervisor): a new
// object from the producer, in the same context and mailbox, and no
// Stopped for the old one, which is not put back. The mailbox follows the
// new object: its stop is the synchronous one, its messages are its own.
func TestContractRestartProducesANewObject(t *testing.T) {
	r := newRig(t)
	var objects []*probe
	pid := r.sys.Root.Spawn(r.rt.Props(func() actor.Actor {
		p := r.rt.Get().(*probe)
		p.rt, p.name, p.j = r.rt, fmt.Sprint("a", len(objects)), r.j
		p.on = func(_ *probe, ctx actor.Context) {
			if ctx.Message() == "boom" {
				panic("boom")
			}
		}
		objects = append(objects, p)
		return p
	}))
	r.sys.Root.Send(pid, "boom")
	r.sys.Root.Send(pid, "after")
	r.d.runAll()
	if len(objects) != 2 {
		t.Fatalf("%d objects produced, want 2", len(objects))
	}
	if _, ok := objects[1].Waiting(); !ok {
		t.Fatal("the restarted actor does not know its mailbox")
	}
	r.sys.Root.Stop(pid)
	r.d.runAll()
	want := []string{"a0 Started", "a0 boom", "a0 *actor.Restarting", "a1 Started", "a1 after", "a1 Stopping", "a1 Stopped"}
	if got := r.j.all(); !equal(got, want) {
		t.Fatalf("received %v, want %v", got, want)
	}
	if len(objects) != 2 || objects[0] == objects[1] {
		t.Fatalf("%d objects produced, want 2, distinct", len(objects))
	}
	if n := r.rt.Violations(); n != 0 {
		t.Fatalf("%d violations", n)
	}
	if objects[0].Generation() != 0 || objects[1].Generation() != 1 {
		t.Fatalf("generations %d and %d, want 0 (never stopped) and 1", objects[0].Generation(), objects[1].Generation())
	}
}

// Generations: an object put back while its actor is still alive (a
// broken assumption: Stopped not last, a release by someone else) makes
// every message the mailbox would still hand that actor stale. In a test
// binary it panics, with the generations; otherwise it goes to the dead
// letters, is counted, and is never delivered — to the object's next
// owner least of all.
func TestStaleDeliveryFailsLoudly(t *testing.T) {
	r := newRig(t)
	pid, p := r.spawn("a", nil)
	r.d.runAll()
	gen := p.Generation()
	r.rt.Put(p) // too early: the actor has not stopped
	r.sys.Root.Send(pid, "stale")
	v := catch(r.d.runAll)
	var sd *Violation
	if !errors.As(v, &sd) || !errors.Is(v, ErrStale) || sd.Generation != gen || sd.Now != gen+1 || sd.Message != "stale" {
		t.Fatalf("panic %v, want a stale delivery of \"stale\" for generation %d at %d", v, gen, gen+1)
	}

	r2 := newRig(t)
	r2.rt.strict = false
	var logged strings.Builder
	r2.rt.log = slog.New(slog.NewTextHandler(&logged, nil))
	pid, p = r2.spawn("b", nil)
	r2.d.runAll()
	r2.rt.Put(p)
	next := r2.rt.Get().(*probe) // its next owner
	next.rt, next.name, next.j = r2.rt, "next", r2.j
	r2.sys.Root.Send(pid, "stale")
	r2.d.runAll()
	if got, want := r2.j.all(), []string{"b Started"}; !equal(got, want) {
		t.Fatalf("received %v, want %v", got, want)
	}
	if got := r2.deadTo(pid); !equal(got, []string{"stale"}) {
		t.Fatalf("dead letters %v, want [stale]", got)
	}
	if n := r2.rt.Violations(); n != 1 {
		t.Fatalf("%d violations, want 1", n)
	}
	if l := logged.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "message_type=string") ||
		!strings.Contains(l, "object_generation=1") {
		t.Fatalf("logged %q, want the stale delivery at ERROR", l)
	}
}

// catch runs f and returns what it panicked with, as an error (nil: no
// panic, or not an error).
func catch(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err, _ = r.(error)
			if err == nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}
	}()
	f()
	return nil
}
