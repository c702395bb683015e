package task

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/eventstream"
)

// answer is where the actor answers a Command sent by Post (and Ask): a
// one-slot channel the caller waits on, in place of a protoactor future. A
// future per command registered a process in the actor system's registry
// under a fresh name, armed a timer, and was answered through a PID lookup
// and a condition variable; an answer is reused, with its timer, once
// received (docs/performance.md, "A cheaper reply path").
//
// Each Command sent with an answer gets exactly one Reply in it: the
// actor's (respond), or — when the command never reaches an actor, or
// reaches one that is stopping — an ErrDeadLetter put there by the
// dead-letter watcher of the actor system (watchDeadLetters), as a future
// would have been answered. A caller that stops waiting (its context
// ended, or the timeout) abandons the answer: a late Reply goes into its
// slot and is collected with it.
//
// The Reply is written into the answer and only a flag goes through the
// channel: the goroutines that wait (a worker's) start with a small stack,
// and a Reply (~650 B, most of it the task's state) copied through the
// frames of the wait made them grow it for every run.
type answer struct {
	reply Reply
	ch    chan bool // true: the command went to the dead letters
	timer *time.Timer
}

var answers = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &answer{ch: make(chan bool, 1), timer: t}
}}

// answer gives the waiter the Reply written in w.reply; lost says the
// command went to the dead letters instead. It never blocks: a command gets
// one answer.
func (w *answer) answer(lost bool) {
	select {
	case w.ch <- lost:
	default:
	}
}

// take moves the Reply received to r (unless nil) and returns w to the
// pool. Through a pointer: a Reply returned by value would sit in one more
// frame of the waiting goroutine.
func (w *answer) take(r *Reply) {
	if r != nil {
		*r = w.reply
	}
	w.reply = Reply{}
	answers.Put(w)
}

// IgnoreDeadLetterLogging keeps a Command that reaches no actor out of
// protoactor's dead-letter log: its requester is answered (an answer by
// watchDeadLetters, a future by protoactor), as a request always was.
func (Command) IgnoreDeadLetterLogging() {}

// watched holds, for each actor system whose dead letters answer
// Commands' answers, its watch; weakly: a system that is gone is not kept
// alive by it.
var watched sync.Map // weak.Pointer[actor.ActorSystem] → *watch

// watch is one actor system's dead-letter watcher and who holds it.
type watch struct {
	mu sync.Mutex
	// holders counts the WatchDeadLetters not released; sticky is set once
	// a Command was sent with no holder (the watcher then stays for the
	// life of the system, as it always did).
	holders int
	sticky  bool
	sub     *eventstream.Subscription
	// on is sub != nil, read without mu by every Command sent.
	on atomic.Bool
}

// WatchDeadLetters makes sure that a Command with an answer that ends in
// sys's dead letters is answered with actor.ErrDeadLetter, until release
// is called; one watcher per system, whoever holds it. A component that
// sends Commands with Ask or Post on a system it does not own (a
// scheduler in a host's actor system) holds it from before its first
// Command until its actors are gone, so that its release leaves the
// system with the subscribers it had. Ask and Post on a system nobody
// holds a watch on install one that stays for the life of the system.
func WatchDeadLetters(sys *actor.ActorSystem) (release func()) {
	w := watchOf(sys)
	w.mu.Lock()
	w.holders++
	w.subscribe(sys)
	w.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.holders--; w.holders == 0 && !w.sticky && w.sub != nil {
				sys.EventStream.Unsubscribe(w.sub)
				w.sub = nil
				w.on.Store(false)
			}
		})
	}
}

func watchOf(sys *actor.ActorSystem) *watch {
	key := weak.Make(sys)
	if w, ok := watched.Load(key); ok {
		return w.(*watch)
	}
	w, loaded := watched.LoadOrStore(key, &watch{})
	if !loaded {
		runtime.AddCleanup(sys, func(k weak.Pointer[actor.ActorSystem]) { watched.Delete(k) }, key)
	}
	return w.(*watch)
}

// subscribe installs the watcher on sys unless it is there; w.mu is held.
func (w *watch) subscribe(sys *actor.ActorSystem) {
	if w.sub != nil {
		return
	}
	w.sub = sys.EventStream.Subscribe(func(evt any) {
		if dl, ok := evt.(*actor.DeadLetterEvent); ok {
			if c, ok := dl.Message.(Command); ok && c.answer != nil {
				c.answer.answer(true)
			}
		}
	})
	w.on.Store(true)
}

// watchDeadLetters makes sure, as a Command is sent on sys, that a
// watcher is installed there (see WatchDeadLetters).
func watchDeadLetters(sys *actor.ActorSystem) {
	w := watchOf(sys)
	if w.on.Load() {
		return
	}
	w.mu.Lock()
	if w.sub == nil {
		w.sticky = true
		w.subscribe(sys)
	}
	w.mu.Unlock()
}

// wait waits for the answer, at most timeout (none when negative) and no
// longer than ctx lasts. Once it returns without error, the caller takes
// the Reply (take); an answer abandoned does not go back to the pool.
func (w *answer) wait(ctx context.Context, timeout time.Duration) (lost bool, err error) {
	var expired <-chan time.Time
	if timeout >= 0 {
		w.timer.Reset(timeout)
		expired = w.timer.C
	}
	select {
	case lost = <-w.ch:
		w.timer.Stop()
		return lost, nil
	case <-expired:
		return false, actor.ErrTimeout
	case <-ctx.Done():
		w.timer.Stop()
		return false, ctx.Err()
	}
}
