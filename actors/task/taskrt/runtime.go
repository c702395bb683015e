// Package taskrt is the runtime of the task actors on protoactor-go: how
// they are spawned (a dispatcher and a mailbox of their own), how the
// Actor objects of stopped actors are reused, and the checks that make a
// broken assumption about protoactor fail loudly rather than hand one
// task's message to another task's actor.
//
// It leans on protoactor's internals in four places, each pinned by a
// contract test against the version in go.mod (runtime_test.go):
//
//   - the mailbox's invoker is the actor's context, an actor.Context whose
//     Actor method returns the actor just produced (Mailbox reaches it in
//     RegisterHandlers to tell the actor its mailbox, Life.Waiting);
//   - an actor without children handles Stopping and Stopped within the
//     invocation of the *actor.Stop system message, and leaves the process
//     registry before Stopped: so once that invocation returns, a user
//     message still in the mailbox has no actor to go to and the mailbox
//     hands it to the dead letters (the actor context would drop it);
//   - nothing reaches an actor's Receive after *actor.Stopped: so the actor
//     may give its object back for reuse (Runtime.Put) on Stopped;
//   - ctx.Stop(ctx.Self()) inside Receive only queues the Stop: the actor
//     is not stopped (nor its object reused) under its own feet.
//
// Generations. Each reuse of an object is a new generation (Life): the
// mailbox notes the generation of its actor when it is made, and a message
// it would hand an actor whose object has been put back since — another
// task's actor now, or nobody's — is stale. A stale message is never
// delivered: it goes to the dead letters (a requester is answered, a
// counted message uncounted) and is counted (Runtime.Stale); in a test
// binary (testing.Testing) it panics, out of the mailbox's recovery, so
// the test fails where the assumption broke.
//
// Concurrency: a Runtime is safe for concurrent use; a Life belongs to its
// actor's goroutine but for its generation, which is atomic.
package taskrt

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// ErrStale: a message or callback of one generation of a reused actor
// object reached it after it was put back for reuse.
var ErrStale = errors.New("taskrt: stale delivery to a reused actor")

// ErrStopNotSynchronous: an actor of the runtime handled the *actor.Stop
// system message without getting *actor.Stopped within it (it had
// children, or protoactor changed).
var ErrStopNotSynchronous = errors.New("taskrt: actor not stopped within its Stop")

// Life is embedded in every actor the runtime runs: its generation, and
// its mailbox when it runs under the runtime's.
type Life struct {
	gen atomic.Uint64
	mb  *mailbox
}

func (l *Life) life() *Life { return l }

// Generation is the object's generation: how many times it was put back
// for reuse.
func (l *Life) Generation() uint64 { return l.gen.Load() }

// Waiting reports how many user messages wait in the actor's mailbox, and
// ok false when the actor runs under another mailbox than the runtime's
// (then the count is unknown).
func (l *Life) Waiting() (n int, ok bool) {
	if l.mb == nil {
		return 0, false
	}
	return int(l.mb.userN.Load()), true
}

// Pooled is an actor the runtime runs: one embedding Life.
type Pooled interface {
	actor.Actor
	life() *Life
}

// Config is a Runtime's configuration.
type Config struct {
	// New makes a new actor object. Required.
	New func() Pooled
	// Reuse keeps the objects given back (Put) for Get; false: Get
	// always makes a new one and Put only ends the generation.
	Reuse bool
	// Dispatcher runs the mailboxes; nil: protoactor's default (a
	// goroutine per run of a mailbox).
	Dispatcher actor.Dispatcher
	// Logger receives a violation (see the package doc) at ERROR, outside
	// test binaries. Nil: none is logged; Violations still counts them.
	Logger *slog.Logger
}

// Runtime spawns and recycles the actors of one kind (the scheduler's task
// actors). Build it with New.
type Runtime struct {
	newA       func() Pooled
	pool       *sync.Pool            // nil: no reuse
	mailbox    actor.MailboxProducer // made once
	opts       []actor.PropsOption   // the mailbox's and the dispatcher's, made once
	violations atomic.Uint64
	log        *slog.Logger // nil: none
	// strict panics on a violation: set in test binaries.
	strict bool
}

// New returns a Runtime for cfg.
func New(cfg Config) *Runtime {
	r := &Runtime{newA: cfg.New, log: cfg.Logger, strict: testing.Testing()}
	if cfg.Reuse {
		r.pool = &sync.Pool{New: func() any { return cfg.New() }}
	}
	r.mailbox = func() actor.Mailbox { return newMailbox(r) }
	r.opts = []actor.PropsOption{actor.WithMailbox(r.mailbox)}
	if cfg.Dispatcher != nil {
		r.opts = append(r.opts, actor.WithDispatcher(cfg.Dispatcher))
	}
	return r
}

// Props are the props of an actor produced by produce under the runtime:
// its dispatcher, its mailbox. produce should return an object from Get.
func (r *Runtime) Props(produce actor.Producer, opts ...actor.PropsOption) *actor.Props {
	if len(opts) == 0 {
		return actor.PropsFromProducer(produce, r.opts...) // a spawn per run: nothing made here
	}
	return actor.PropsFromProducer(produce, append(opts, r.opts...)...)
}

// Get returns an actor object: one put back (reset by its owner before
// Put), or a new one.
func (r *Runtime) Get() Pooled {
	if r.pool == nil {
		return r.newA()
	}
	return r.pool.Get().(Pooled)
}

// Put ends a's generation and keeps a for Get. Call it on *actor.Stopped,
// the last message an actor gets, once a holds nothing of its last task
// and nothing of ours holds a. A nil Runtime only ends the generation (an
// actor spawned without the runtime's Props, in tests).
func (r *Runtime) Put(a Pooled) {
	l := a.life()
	l.mb = nil
	l.gen.Add(1)
	if r != nil && r.pool != nil {
		r.pool.Put(a)
	}
}

// Violations is how many times an assumption of the runtime was found
// broken (a stale delivery dropped, a Stop not synchronous): 0 unless
// protoactor or our use of it changed. See the package doc.
func (r *Runtime) Violations() uint64 { return r.violations.Load() }

// Violation is the panic value of a broken assumption in a test binary.
type Violation struct {
	Err     error // ErrStale or ErrStopNotSynchronous
	Message any
	// Generation is the generation the message was for; Now the object's.
	Generation, Now uint64
}

func (v *Violation) Error() string {
	return fmt.Sprintf("%v: %T for generation %d, the object is at %d", v.Err, v.Message, v.Generation, v.Now)
}

func (v *Violation) Unwrap() error { return v.Err }

// Stale reports a stale delivery of msg, for generation gen, to an object
// now at generation now: counted (Violations), and a panic in a test
// binary. The caller drops msg (to the dead letters, when it is a
// message).
func (r *Runtime) Stale(msg any, gen, now uint64) { r.violated(ErrStale, msg, gen, now) }

func (r *Runtime) violated(err error, msg any, gen, now uint64) {
	if r == nil {
		if testing.Testing() {
			panic(&Violation{Err: err, Message: msg, Generation: gen, Now: now})
		}
		return
	}
	r.violations.Add(1)
	if r.strict {
		panic(&Violation{Err: err, Message: msg, Generation: gen, Now: now})
	}
	if r.log != nil {
		r.log.Error("task actor runtime: assumption broken, message dropped", "err", err,
			"message_type", fmt.Sprintf("%T", msg), "generation", gen, "object_generation", now)
	}
}

// Check reports whether a callback made for generation gen of l's object
// finds it still there; if not, it is a stale delivery (see the package
// doc) and the caller must drop what it carries.
func (r *Runtime) Check(l *Life, gen uint64, what any) bool {
	now := l.gen.Load()
	if now == gen {
		return true
	}
	r.Stale(what, gen, now)
	return false
}
