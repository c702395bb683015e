package taskrt

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

// mailbox is the mailbox of the runtime's actors (Runtime.Props): what
// protoactor's default mailbox does for them, for fewer allocations, and
// the runtime's checks. A task actor of a resting task is started and
// stopped for every run, and the default mailbox allocated five objects
// per actor (a ring buffer and a lock-free queue), one per system message
// (a queue node) and one each time it scheduled itself on the dispatcher
// (the method value it hands over); this one allocates itself with room
// for a few messages, and the function it hands the dispatcher once
// (docs/performance.md).
//
// The order is the default mailbox's: system messages first, each time
// round; user messages in the order posted, not while suspended; the
// dispatcher's throughput between yields; a panic escalated to the actor's
// supervisor. Not supported (task actors use neither): mailbox middlewares,
// and actor.MessageBatch (a batch is delivered as one message).
func newMailbox(rt *Runtime) actor.Mailbox {
	m := &mailbox{rt: rt}
	m.user, m.system = m.userBuf[:0], m.systemBuf[:0]
	m.process = m.processMessages
	return m
}

const (
	mailboxIdle int32 = iota
	mailboxRunning
)

type mailbox struct {
	mu sync.Mutex
	// user and system are the messages waiting, from userHead and
	// systemHead on; mu guards them.
	user, system         []any
	userHead, systemHead int
	userBuf              [4]any
	systemBuf            [2]any

	status    atomic.Int32 // mailboxIdle or mailboxRunning
	userN     atomic.Int32 // user messages waiting
	systemN   atomic.Int32 // system messages waiting
	suspended atomic.Bool

	invoker    actor.MessageInvoker
	dispatcher actor.Dispatcher
	process    func() // m.processMessages, made once
	rt         *Runtime
	// life is the actor's, and gen its generation when the mailbox was
	// made for it; nil when the actor is not one of the runtime's.
	life *Life
	gen  uint64
	// gone is set once the actor has stopped: it put its object back
	// within a system message (Stopped comes within the Stop's). Only the
	// goroutine running the mailbox (one at a time) reads or writes it.
	gone bool
	// afterSystem, if set (tests), is called after each system message
	// is handed to the invoker.
	afterSystem func(msg any)
}

// PostUserMessage implements actor.Mailbox.
func (m *mailbox) PostUserMessage(msg any) {
	m.mu.Lock()
	m.user = append(m.user, msg)
	m.mu.Unlock()
	m.userN.Add(1)
	m.schedule()
}

// PostSystemMessage implements actor.Mailbox.
func (m *mailbox) PostSystemMessage(msg any) {
	m.mu.Lock()
	m.system = append(m.system, msg)
	m.mu.Unlock()
	m.systemN.Add(1)
	m.schedule()
}

// RegisterHandlers implements actor.Mailbox. The invoker is the actor's
// context, its actor made already: the actor learns its mailbox here
// (Life.Waiting), and the mailbox its generation.
func (m *mailbox) RegisterHandlers(invoker actor.MessageInvoker, dispatcher actor.Dispatcher) {
	m.invoker, m.dispatcher = invoker, dispatcher
	m.bind()
}

// bind notes the invoker's actor, its generation, and tells it its
// mailbox: when the mailbox is made, and after a restart (protoactor then
// produces a new actor in the same context, and never stops the old one).
func (m *mailbox) bind() {
	m.life, m.gen = nil, 0
	if c, ok := m.invoker.(interface{ Actor() actor.Actor }); ok {
		if a, ok := c.Actor().(Pooled); ok {
			m.life, m.gen = a.life(), a.life().gen.Load()
			m.life.mb = m
		}
	}
}

// Start implements actor.Mailbox.
func (m *mailbox) Start() {}

// UserMessageCount implements actor.Mailbox.
func (m *mailbox) UserMessageCount() int { return int(m.userN.Load()) }

func (m *mailbox) schedule() {
	if m.status.CompareAndSwap(mailboxIdle, mailboxRunning) {
		m.dispatcher.Schedule(m.process)
	}
}

func (m *mailbox) processMessages() {
	for {
		m.run()
		m.status.Store(mailboxIdle)
		// Messages posted after the loop ended, while still running,
		// did not schedule the mailbox: go round again for them.
		sys, user := m.systemN.Load(), m.userN.Load()
		if !(sys > 0 || (!m.suspended.Load() && user > 0)) || !m.status.CompareAndSwap(mailboxIdle, mailboxRunning) {
			return
		}
	}
}

func (m *mailbox) run() {
	var msg any
	defer func() {
		if r := recover(); r != nil {
			if v, ok := r.(*Violation); ok {
				panic(v) // a test binary: fail loudly, not as the actor's failure
			}
			m.invoker.EscalateFailure(r, msg)
		}
	}()
	i, t := 0, m.dispatcher.Throughput()
	for {
		if i > t {
			i = 0
			runtime.Gosched()
		}
		i++
		if m.systemN.Load() > 0 {
			if msg = m.pop(&m.system, &m.systemHead); msg != nil {
				m.systemN.Add(-1)
				switch msg.(type) {
				case *actor.SuspendMailbox:
					m.suspended.Store(true)
				case *actor.ResumeMailbox:
					m.suspended.Store(false)
				default:
					if !m.gone && m.stale(msg) {
						continue // nobody's to handle: protoactor's context would hand it to another's actor
					}
					m.invoker.InvokeSystemMessage(msg)
					if m.afterSystem != nil {
						m.afterSystem(msg)
					}
					if _, restart := msg.(*actor.Restart); restart && !m.gone {
						m.bind()
					}
					if m.life != nil && m.life.gen.Load() != m.gen {
						m.gone = true // it got Stopped and put its object back
					} else if _, stop := msg.(*actor.Stop); stop && !m.gone {
						// A task actor has no children: it has stopped. A
						// runtime's actor put its object back on Stopped.
						m.gone = true
						if m.life != nil {
							m.rt.violated(ErrStopNotSynchronous, msg, m.gen, m.gen)
						}
					}
				}
				continue
			}
		}
		if m.suspended.Load() {
			return
		}
		if msg = m.pop(&m.user, &m.userHead); msg == nil {
			return
		}
		m.userN.Add(-1)
		if m.gone || m.stale(msg) {
			m.deadLetter(msg)
			continue
		}
		m.invoker.InvokeUserMessage(msg)
	}
}

// stale reports whether msg would reach an actor whose object was put
// back for reuse other than within a system message of its own (which
// sets gone): a stale delivery, reported to the runtime.
func (m *mailbox) stale(msg any) bool {
	if m.life == nil {
		return false
	}
	if now := m.life.gen.Load(); now != m.gen {
		m.rt.Stale(msg, m.gen, now)
		return true
	}
	return false
}

// deadLetter hands msg, which reached the mailbox before its stopped actor
// left the process registry, to the dead letters, as a send after that
// would have been: the actor context drops a user message once stopped,
// and then a counted message would stay in flight for ever (the virtual
// clock never moving again) and a request would wait for its timeout. The
// dead letters answer a request with a dead-letter response, and the
// scheduler's watcher uncounts a counted message (package counted).
func (m *mailbox) deadLetter(msg any) {
	if ctx, ok := m.invoker.(actor.Context); ok {
		ctx.ActorSystem().DeadLetter.SendUserMessage(ctx.Self(), msg)
	}
}

// pop takes the first message waiting in q (from *head on), nil if none.
func (m *mailbox) pop(q *[]any, head *int) any {
	m.mu.Lock()
	defer m.mu.Unlock()
	if *head == len(*q) {
		return nil
	}
	msg := (*q)[*head]
	(*q)[*head] = nil
	*head++
	switch {
	case *head == len(*q): // drained: start again at the front
		*q, *head = (*q)[:0], 0
	case *head >= 64 && *head*2 >= len(*q): // mostly taken: move the rest up
		n := copy(*q, (*q)[*head:])
		clear((*q)[n:])
		*q, *head = (*q)[:n], 0
	}
	return msg
}
