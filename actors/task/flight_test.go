package task_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
)

// gated is a store whose asynchronous appends, while held, wait until the
// test lets each go (by calling what it received on calls).
type gated struct {
	events.Store
	hold  bool // set before the actor appends, by the test goroutine
	calls chan func()
}

func (g *gated) AppendAsync(ctx context.Context, stream string, exp events.ExpectedVersion, evs []events.Proposed, done func(events.AppendResult, error)) {
	if !g.hold {
		events.AppendAsync(ctx, g.Store, stream, exp, evs, done)
		return
	}
	g.calls <- func() { events.AppendAsync(ctx, g.Store, stream, exp, evs, done) }
}

func gatedRig(t *testing.T) (*rig, *gated) {
	t.Helper()
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	g := &gated{Store: st, calls: make(chan func(), 4)}
	r := newRig(t, g)
	r.clk.StallAfter(10 * time.Second)
	return r, g
}

func nextCall(t *testing.T, g *gated) func() {
	t.Helper()
	select {
	case c := <-g.calls:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no append came")
		return nil
	}
}

// TestMessagesWaitForTheAppendInFlight: while an append is in flight the
// actor decides nothing; what arrives meanwhile is handled after the
// append's events are applied, in the order it arrived, and each sender
// gets its own answer. The clock counts the append in flight.
func TestMessagesWaitForTheAppendInFlight(t *testing.T) {
	r, g := gatedRig(t)
	a := r.spawn()
	r.create(a, time.Minute, t0.Add(time.Minute))
	g.hold = true
	r.clk.Begin() // counted as counted.Request does
	pause := r.sys.Root.RequestFuture(a, task.Command{Cmd: rules.Pause{}}, time.Minute)
	release := nextCall(t, g)
	r.clk.Begin()
	get := r.sys.Root.RequestFuture(a, task.Get{}, time.Minute)
	r.clk.Begin()
	resume := r.sys.Root.RequestFuture(a, task.Command{Cmd: rules.Resume{}}, time.Minute)
	quiet := make(chan struct{})
	go func() { r.clk.Quiesce(); close(quiet) }()
	select {
	case <-g.calls:
		t.Fatal("a second append while the first was in flight")
	case <-quiet:
		t.Fatal("the clock was quiescent with an append in flight")
	default:
	}
	release()
	nextCall(t, g)() // the resume's, decided after the pause was applied
	replies := map[string]task.Reply{}
	for name, f := range map[string]interface{ Result() (any, error) }{"pause": pause, "get": get, "resume": resume} {
		res, err := f.Result()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		replies[name] = res.(task.Reply)
	}
	if p := replies["pause"]; p.Err != nil || p.State.Status != rules.StatusPaused || len(p.Events) != 1 {
		t.Fatalf("pause: %+v", p)
	}
	if g := replies["get"]; g.State.Status != rules.StatusPaused || g.State.Version != replies["pause"].State.Version {
		t.Fatalf("get, held behind the pause: status %s version %d, want paused at %d", g.State.Status, g.State.Version, replies["pause"].State.Version)
	}
	if rs := replies["resume"]; rs.Err != nil || rs.State.Status != rules.StatusActive || rs.State.Version != replies["pause"].State.Version+1 {
		t.Fatalf("resume: %+v", rs)
	}
	<-quiet
	if err := r.clk.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestStopWithAnAppendInFlight: an actor stopped while its append is in
// flight waits for the answer and finishes the command (its sender is
// answered and the event is stored); a message it held goes to the dead
// letters, so its requester is answered at once and the clock is not held.
func TestStopWithAnAppendInFlight(t *testing.T) {
	r, g := gatedRig(t)
	a := r.spawn()
	r.create(a, time.Minute, t0.Add(10*time.Second))
	g.hold = true
	r.clk.Begin()
	pause := r.sys.Root.RequestFuture(a, task.Command{Cmd: rules.Pause{}}, 10*time.Second)
	release := nextCall(t, g)
	r.clk.Begin()
	get := r.sys.Root.RequestFuture(a, task.Get{}, 10*time.Second)
	stopped := r.sys.Root.StopFuture(a) // queued ahead of the append's answer
	release()
	res, err := pause.Result()
	if err != nil {
		t.Fatal(err)
	}
	if p := res.(task.Reply); p.Err != nil || p.State.Status != rules.StatusPaused {
		t.Fatalf("pause: %+v", p)
	}
	if _, err := get.Result(); !errors.Is(err, actor.ErrDeadLetter) {
		t.Fatalf("get held when the actor stopped: %v, want a dead letter", err)
	}
	if err := stopped.Wait(); err != nil {
		t.Fatal(err)
	}
	recs, err := r.store.ReadStream(context.Background(), events.TaskStream(r.id), 0, 0)
	if err != nil || recs[len(recs)-1].Type != "TaskPaused" {
		t.Fatalf("stream after the stop: %d events, %v", len(recs), err)
	}
	r.clk.Quiesce()
	if err := r.clk.Err(); err != nil {
		t.Fatal(err)
	}
}
