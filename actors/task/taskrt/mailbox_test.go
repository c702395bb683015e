package taskrt

import (
	"io"
	"log/slog"
	"sync"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// stepDispatcher runs what is scheduled only when the test says so.
type stepDispatcher struct{ fns []func() }

func (d *stepDispatcher) Schedule(fn func()) { d.fns = append(d.fns, fn) }
func (d *stepDispatcher) Throughput() int    { return 300 }
func (d *stepDispatcher) runAll() {
	for len(d.fns) > 0 {
		fn := d.fns[0]
		d.fns = d.fns[1:]
		fn()
	}
}

// recorder is a MessageInvoker that notes what it is given.
type recorder struct {
	got       []any
	escalated []any
	panicOn   any
}

func (r *recorder) InvokeSystemMessage(m any) { r.got = append(r.got, m) }
func (r *recorder) InvokeUserMessage(m any) {
	if m == r.panicOn {
		panic("boom")
	}
	r.got = append(r.got, m)
}
func (r *recorder) EscalateFailure(reason, m any) { r.escalated = append(r.escalated, m) }

// TestMailboxOrder: the mailbox schedules itself once however many
// messages arrive until it runs, hands system messages over before user
// messages, user messages in the order posted, holds them while
// suspended, and escalates a panic with the message that caused it.
func TestMailboxOrder(t *testing.T) {
	d := &stepDispatcher{}
	r := &recorder{}
	m := newMailbox(New(Config{New: func() Pooled { return &probe{} }}))
	m.RegisterHandlers(r, d)
	m.Start()
	for i := range 100 { // beyond the room it starts with
		m.PostUserMessage(i)
	}
	m.PostSystemMessage("sys")
	if len(d.fns) != 1 {
		t.Fatalf("scheduled %d times, want once", len(d.fns))
	}
	if n := m.UserMessageCount(); n != 100 {
		t.Fatalf("UserMessageCount() = %d, want 100", n)
	}
	d.runAll()
	if len(r.got) != 101 || r.got[0] != "sys" {
		t.Fatalf("got %d messages, first %v; want 101, the system message first", len(r.got), r.got[0])
	}
	for i, m := range r.got[1:] {
		if m != i {
			t.Fatalf("user message %d is %v", i, m)
		}
	}
	if n := m.UserMessageCount(); n != 0 {
		t.Fatalf("UserMessageCount() = %d after the run", n)
	}

	// Suspended: system messages go on, user messages wait for the resume.
	r.got = nil
	m.PostSystemMessage(&actor.SuspendMailbox{})
	m.PostUserMessage("held")
	d.runAll()
	if len(r.got) != 0 {
		t.Fatalf("while suspended got %v", r.got)
	}
	m.PostSystemMessage(&actor.ResumeMailbox{})
	d.runAll()
	if len(r.got) != 1 || r.got[0] != "held" {
		t.Fatalf("after the resume got %v, want [held]", r.got)
	}

	// A panic is escalated with its message; the next message still runs.
	r.got, r.panicOn = nil, "bad"
	m.PostUserMessage("bad")
	m.PostUserMessage("next")
	d.runAll()
	if len(r.escalated) != 1 || r.escalated[0] != "bad" {
		t.Fatalf("escalated %v, want [bad]", r.escalated)
	}
	m.PostUserMessage("after")
	d.runAll()
	if len(r.got) != 2 || r.got[0] != "next" || r.got[1] != "after" {
		t.Fatalf("after the panic got %v, want [next after]", r.got)
	}
}

// TestMailboxDeadLettersWhatOutlivesItsActor: a message that reached the
// mailbox before its actor stopped, and is taken after, goes to the dead
// letters (where a counted message is uncounted and a request answered),
// not nowhere: the actor context drops a user message once stopped.
func TestMailboxDeadLettersWhatOutlivesItsActor(t *testing.T) {
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	var mu sync.Mutex
	var dead, received []any
	sys.EventStream.Subscribe(func(evt any) {
		if dl, ok := evt.(*actor.DeadLetterEvent); ok {
			mu.Lock()
			dead = append(dead, dl.Message)
			mu.Unlock()
		}
	})
	d := &stepDispatcher{}
	pid := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if s, ok := ctx.Message().(string); ok {
			mu.Lock()
			received = append(received, s)
			mu.Unlock()
		}
	}, actor.WithDispatcher(d), actor.WithMailbox(func() actor.Mailbox { return newMailbox(New(Config{New: func() Pooled { return &probe{} }})) })))
	d.runAll() // started
	sys.Root.Send(pid, "before")
	d.runAll()
	sys.Root.Send(pid, "late") // in the mailbox, behind the stop that follows
	sys.Root.Stop(pid)
	d.runAll() // the stop first (system messages go first), then "late"
	mu.Lock()
	defer mu.Unlock()
	if len(received) != 1 || received[0] != "before" {
		t.Errorf("the actor received %v, want [before]", received)
	}
	found := false
	for _, m := range dead {
		found = found || m == "late"
	}
	if !found {
		t.Errorf("dead letters %v: want the message taken after the stop among them", dead)
	}
}
