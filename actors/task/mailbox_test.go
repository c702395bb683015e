package task_test

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task"
)

// orderActor notes the messages it receives, by sender.
type orderActor struct {
	mu   *sync.Mutex
	last map[int]int
	bad  *int
	n    *int
	all  chan struct{}
	want int
}

type seqMsg struct{ from, seq int }

func (a *orderActor) Receive(ctx actor.Context) {
	m, ok := ctx.Message().(seqMsg)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if prev, seen := a.last[m.from]; seen && m.seq != prev+1 {
		*a.bad++
	}
	a.last[m.from] = m.seq
	*a.n++
	if *a.n == a.want {
		close(a.all)
	}
}

// TestMailboxKeepsEachSendersOrder: on the task runtime and dispatcher, from several
// goroutines at once, every message arrives once and each sender's in the
// order sent; stopping the actor works.
func TestMailboxKeepsEachSendersOrder(t *testing.T) {
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	defer sys.Shutdown()
	const senders, each = 4, 5000
	var mu sync.Mutex
	var bad, n int
	a := &orderActor{mu: &mu, last: map[int]int{}, bad: &bad, n: &n, all: make(chan struct{}), want: senders * each}
	pid := sys.Root.Spawn(task.NewRuntime(task.NewDispatcher(0), nil).Props(func() actor.Actor { return a }))
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				sys.Root.Send(pid, seqMsg{from: s, seq: i})
			}
		}()
	}
	wg.Wait()
	select {
	case <-a.all:
	case <-time.After(30 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("received %d of %d messages", n, senders*each)
	}
	mu.Lock()
	if bad != 0 {
		t.Errorf("%d messages out of their sender's order", bad)
	}
	mu.Unlock()
	if err := sys.Root.StopFuture(pid).Wait(); err != nil {
		t.Fatal(err)
	}
}
