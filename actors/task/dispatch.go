package task

import (
	"runtime"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// Dispatcher runs the mailboxes of task actors on at most a few goroutines
// at a time, each of which goes on to the next scheduled mailbox when one is
// done, instead of protoactor's default of a new goroutine for every run of
// a mailbox. A goroutine that runs many mailboxes in a row keeps the stack
// it grew deciding, where a new goroutine per run started from the
// runtime's adaptive stack size and grew it again for each decision
// (docs/performance.md). It suits task actors because they do not park
// their goroutine in the store: appends and loads are asynchronous (see
// flight and load.go).
//
// Runs wait in an unbounded first-in, first-out queue, so scheduling never
// blocks the sender. No goroutine is left once the queue is empty.
type Dispatcher struct {
	mu      sync.Mutex
	queue   []func()
	head    int
	running int
	max     int
}

// DispatcherThroughput is how many messages a mailbox processes before it
// lets the next one run: protoactor's default.
const DispatcherThroughput = 300

// NewDispatcher returns a Dispatcher running at most max mailboxes at once
// (max <= 0: twice GOMAXPROCS).
func NewDispatcher(max int) *Dispatcher {
	if max <= 0 {
		max = 2 * runtime.GOMAXPROCS(0)
	}
	return &Dispatcher{max: max}
}

var _ actor.Dispatcher = (*Dispatcher)(nil)

// Schedule implements actor.Dispatcher.
func (d *Dispatcher) Schedule(fn func()) {
	d.mu.Lock()
	if d.running < d.max {
		d.running++
		d.mu.Unlock()
		go d.run(fn)
		return
	}
	d.queue = append(d.queue, fn)
	d.mu.Unlock()
}

// Throughput implements actor.Dispatcher.
func (d *Dispatcher) Throughput() int { return DispatcherThroughput }

// run runs fn, then the queued runs until none is left.
func (d *Dispatcher) run(fn func()) {
	for {
		fn()
		d.mu.Lock()
		if d.head == len(d.queue) {
			d.queue, d.head = d.queue[:0], 0
			d.running--
			d.mu.Unlock()
			return
		}
		fn = d.queue[d.head]
		d.queue[d.head] = nil
		d.head++
		d.mu.Unlock()
	}
}
