package embedded

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// heldStore opens a store whose next WAL sync is held, and starts an append
// that waits in it: while the test holds it, every append it hands over
// waits in the intake for the next group.
func heldStore(t *testing.T, opts Options) (*Store, func()) {
	t.Helper()
	g := &gateFS{FS: vfs.NewMem(), entered: make(chan struct{}), release: make(chan struct{})}
	s, err := open(g, "/mem", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	g.armed.Store(true)
	first := make(chan error, 1)
	go func() {
		_, err := s.Append(context.Background(), "first", events.NoStream, proposed("first"))
		first <- err
	}()
	select {
	case <-g.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the first append never reached its WAL sync")
	}
	return s, func() {
		close(g.release)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
	}
}

func proposed(typ string) events.Proposed {
	return events.Proposed{ID: uuid.New(), Type: typ, Schema: 1, Data: []byte(`{}`)}
}

// outcome collects AppendAsync's answers by stream.
type outcome struct {
	stream string
	res    events.AppendResult
	err    error
}

func queueAsync(s *Store, streams []string, out chan<- outcome) {
	ctx := context.Background()
	for _, st := range streams {
		st := st
		s.AppendAsync(ctx, st, events.NoStream, []events.Proposed{proposed(st)}, func(r events.AppendResult, err error) {
			out <- outcome{st, r, err}
		})
	}
}

func positions(t *testing.T, out <-chan outcome, n int) map[string]uint64 {
	t.Helper()
	pos := map[string]uint64{}
	for range n {
		select {
		case o := <-out:
			if o.err != nil {
				t.Fatalf("%s: %v", o.stream, o.err)
			}
			pos[o.stream] = o.res.Position.Commit
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of %d appends answered", len(pos), n)
		}
	}
	return pos
}

func names(prefix string, n int) []string {
	var s []string
	for i := range n {
		s = append(s, fmt.Sprintf("%s%d", prefix, i))
	}
	return s
}

// TestAppendsDecidedInHandOverOrder: appends that queue while a group
// syncs are decided, in the next group, in the order they were handed over.
func TestAppendsDecidedInHandOverOrder(t *testing.T) {
	s, release := heldStore(t, Options{MaxBatchEvents: 4})
	out := make(chan outcome, 16)
	queueAsync(s, names("a", 6), out)
	release()
	pos := positions(t, out, 6)
	for i := range 6 {
		if want := uint64(2 + i); pos[fmt.Sprintf("a%d", i)] != want { // "first" is at 1
			t.Errorf("a%d at %d, want %d (all: %v)", i, pos[fmt.Sprintf("a%d", i)], want, pos)
		}
	}
}

// TestAppendAsyncAnswersOnceDurable: AppendAsync calls back only after its
// group's sync, with Append's outcome, conflicts included; refusals before
// the hand-off come through the callback too.
func TestAppendAsyncAnswersOnceDurable(t *testing.T) {
	s, release := heldStore(t, Options{})
	out := make(chan outcome, 4)
	queueAsync(s, []string{"first"}, out) // "first" exists once the held group is durable
	select {
	case o := <-out:
		t.Fatalf("answered %v before the held group was durable", o)
	default:
	}
	release()
	o := <-out
	if !errors.Is(o.err, events.ErrVersionConflict) {
		t.Fatalf("NoStream on an existing stream: %v, want a version conflict", o.err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := 0
	s.AppendAsync(ctx, "other", events.NoStream, []events.Proposed{proposed("x")}, func(_ events.AppendResult, err error) {
		called++
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ended ctx: %v", err)
		}
	})
	if called != 1 {
		t.Fatalf("callback called %d times before AppendAsync returned", called)
	}
}
