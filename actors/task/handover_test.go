package task_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
)

// TestStoppedFromOutsideHandsOverItsState: an actor stopped from outside
// (the scheduler stopping) with a run open — which no resting actor has —
// hands its state to the Registry, open run and all, at the position of
// its stream's last event: what the scheduler's last snapshot needs so
// the next start reads nothing of the stream.
func TestStoppedFromOutsideHandsOverItsState(t *testing.T) {
	r := newRig(t, nil)
	a := r.spawn()
	r.create(a, time.Minute, t0)
	r.ask(a, task.Command{Cmd: rules.Tick{}})
	if rep := r.ask(a, task.Command{Cmd: rules.RequestStart{RunID: events.RunID(r.id, 1)}}); rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if err := r.sys.Root.StopFuture(a).Wait(); err != nil {
		t.Fatal(err)
	}
	recs, err := r.store.ReadStream(context.Background(), events.TaskStream(r.id), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	r.reg.mu.Lock()
	defer r.reg.mu.Unlock()
	switch rest := r.reg.rest; {
	case !r.reg.stopped[a.String()] || rest == nil:
		t.Fatal("the stopped actor handed nothing over")
	case len(rest.State.Open) != 1 || rest.State.Version != last.Version || rest.Position != last.Position:
		t.Fatalf("handed over %d open runs at version %d, position %v; the stream has 1 open run, its last event at version %d, position %v",
			len(rest.State.Open), rest.State.Version, rest.Position, last.Version, last.Position)
	}
}

// failingStore, once fail is set, holds each append until the test lets
// it go, then writes it and answers with an error — as an append whose
// deadline passed after the write landed would; reached tells the test the
// append has arrived.
type failingStore struct {
	events.Store
	fail    *atomic.Bool
	reached chan struct{}
	gate    chan struct{}
}

var errLateAnswer = errors.New("failing: the answer came too late")

func (s failingStore) Append(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	if !s.fail.Load() {
		return s.Store.Append(ctx, stream, exp, evs...)
	}
	s.reached <- struct{}{}
	<-s.gate
	if _, err := s.Store.Append(ctx, stream, exp, evs...); err != nil {
		return events.AppendResult{}, err
	}
	return events.AppendResult{}, errLateAnswer
}

// TestStoppedWithAFailedAppendHandsNothingOver: an append that failed may
// have landed all the same, so the stream may hold what the state does
// not: an actor stopped after one — or while it is in flight, whose
// answer it waits for — hands nothing over (the scheduler then reads the
// task's stream whole at the next start).
func TestStoppedWithAFailedAppendHandsNothingOver(t *testing.T) {
	for _, inFlight := range []bool{true, false} {
		t.Run(map[bool]string{true: "in flight", false: "before"}[inFlight], func(t *testing.T) {
			mem, err := embedded.OpenMemory()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { mem.Close() })
			st := failingStore{Store: mem, fail: &atomic.Bool{}, reached: make(chan struct{}, 1), gate: make(chan struct{})}
			r := newRig(t, st)
			a := r.spawn()
			r.create(a, time.Minute, t0.Add(time.Minute))
			st.fail.Store(true)
			r.clk.Begin()
			paused := r.sys.Root.RequestFuture(a, task.Command{Cmd: rules.Pause{}}, 10*time.Second)
			select {
			case <-st.reached:
			case <-time.After(10 * time.Second):
				t.Fatal("the pause's append did not reach the store")
			}
			var stopped *actor.Future
			if inFlight {
				stopped = r.sys.Root.StopFuture(a)
			}
			close(st.gate)
			res, err := paused.Result()
			if err != nil {
				t.Fatal(err)
			}
			if rep := res.(task.Reply); !errors.Is(rep.Err, errLateAnswer) {
				t.Fatalf("the pause was answered %v, want its append's error", rep.Err)
			}
			if !inFlight {
				stopped = r.sys.Root.StopFuture(a)
			}
			if err := stopped.Wait(); err != nil {
				t.Fatal(err)
			}
			r.reg.mu.Lock()
			defer r.reg.mu.Unlock()
			if r.reg.stopped[a.String()] {
				t.Fatalf("the actor handed over a state its failed append may be ahead of: %+v", r.reg.rest)
			}
		})
	}
}
