package task_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// rig is one task actor on a virtual clock, with sinks for its queue and
// shard.
type rig struct {
	t     *testing.T
	clk   *clock.Virtual
	sys   *actor.ActorSystem
	store events.Store
	cfg   task.Config
	mu    sync.Mutex
	got   []any
	// tracked is what the shard got.
	tracked []any
	id      uuid.UUID
	reg     *registry
}

// registry records the actors that left and stopped, and the last state a
// resting one handed over.
type registry struct {
	mu      sync.Mutex
	stopped map[string]bool
	rest    *task.Initial
}

func (g *registry) Leave(id uuid.UUID, self *actor.PID, send func()) { send() }

func (g *registry) Left(id uuid.UUID, self *actor.PID, stopped bool, rest *rules.State, pos events.Position) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if stopped {
		g.stopped[self.String()] = true
		g.rest = nil
		if rest != nil {
			g.rest = &task.Initial{State: *rest, Position: pos, Tracked: true}
		}
	}
}

func newRig(t *testing.T, store events.Store) *rig {
	t.Helper()
	if store == nil {
		st, err := embedded.OpenMemory()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		store = st
	}
	r := &rig{t: t, clk: clock.NewVirtual(t0), store: store, id: uuid.New(), reg: &registry{stopped: map[string]bool{}}}
	r.sys = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	counted.Watch(r.sys, r.clk)
	shard := counted.Spawn(r.clk, r.sys.Root, actor.PropsFromProducer(func() actor.Actor { return sink{clk: r.clk, mu: &r.mu, got: &r.tracked} }))
	sink := counted.Spawn(r.clk, r.sys.Root, actor.PropsFromProducer(func() actor.Actor { return sink{clk: r.clk, mu: &r.mu, got: &r.got} }))
	r.cfg = task.Config{Store: store, Archetype: archetype.Archetype{Clock: r.clk}, Queue: sink, Shard: shard, Registry: r.reg}
	return r
}

func (r *rig) spawn() *actor.PID {
	return counted.Spawn(r.clk, r.sys.Root, actor.PropsFromProducer(task.New(r.cfg, r.id, nil)))
}

func (r *rig) ask(pid *actor.PID, cmd any) task.Reply {
	r.t.Helper()
	return ask(r.t, r.clk, r.sys, pid, cmd)
}

func (r *rig) create(pid *actor.PID, interval time.Duration, first time.Time) {
	r.t.Helper()
	spec := rules.Spec{Name: "A", Owner: "o", Kind: "k", Schedule: events.Schedule{Interval: events.Duration(interval)}}
	if rep := r.ask(pid, task.Command{Cmd: rules.Create{TaskID: r.id, Spec: spec, FirstRun: first}}); rep.Err != nil {
		r.t.Fatal(rep.Err)
	}
}

// alive reports whether the actor at pid has not left its registry to stop
// (once quiescent: leaving is a few messages).
func (r *rig) alive(pid *actor.PID) bool {
	r.clk.Quiesce()
	r.reg.mu.Lock()
	defer r.reg.mu.Unlock()
	return !r.reg.stopped[pid.String()]
}

// TestTickIsDecidedAtItsOwnInstant is issue 13's bug (R1): a tick processed
// after its instant still sets nextRun = the tick's time + interval, so a
// 2 s task on a 1 s tick runs every 2 s, not every 3 s.
func TestTickIsDecidedAtItsOwnInstant(t *testing.T) {
	r := newRig(t, nil)
	a := r.spawn()
	r.create(a, 2*time.Second, t0.Add(time.Second))
	r.clk.RunUntil(t0.Add(time.Second + 3*time.Millisecond)) // the tick is processed 3 ms late
	counted.Send(r.clk, r.sys.Root, a, dueindex.Tick{At: t0.Add(time.Second)})
	rep := r.ask(a, task.Get{})
	if want := t0.Add(3 * time.Second); !rep.State.NextRun.Equal(want) {
		t.Fatalf("nextRun %s after the tick at 00:01, want %s", rep.State.NextRun.Sub(t0), want.Sub(t0))
	}
	if rep.State.Runs != 1 {
		t.Fatalf("runs %d, want 1", rep.State.Runs)
	}
}

// TestRestingTaskActorLeaves: with Config.Rest, an actor whose task has
// nothing open stops after its message and hands over its state; an actor
// started from that state answers without reading the store and without
// telling the due-time index again; a run keeps the actor until its
// outcome; a pinned actor stays.
func TestRestingTaskActorLeaves(t *testing.T) {
	r := newRig(t, nil)
	r.cfg.Rest = true
	a := r.spawn()
	r.create(a, time.Minute, t0.Add(time.Minute))
	if r.alive(a) {
		t.Fatal("the actor of a resting task stayed")
	}
	r.reg.mu.Lock()
	rest := r.reg.rest
	r.reg.mu.Unlock()
	if rest == nil || !rest.Tracked || rest.State.Status != rules.StatusActive || rest.Position != r.store.(events.HeadReader).Head() {
		t.Fatalf("handed over %+v", rest)
	}
	r.mu.Lock()
	before := len(r.tracked)
	r.mu.Unlock()
	r.cfg.Store = nil // an actor started from the record reads nothing
	b := counted.Spawn(r.clk, r.sys.Root, actor.PropsFromProducer(task.New(r.cfg, r.id, rest)))
	if rep := r.ask(b, task.Get{}); rep.Err != nil || rep.State.Version != rest.State.Version {
		t.Fatalf("from the record: %+v", rep)
	}
	if r.alive(b) {
		t.Fatal("an actor woken for a Get stayed")
	}
	r.cfg.Store = r.store
	c := counted.Spawn(r.clk, r.sys.Root, actor.PropsFromProducer(task.New(r.cfg, r.id, rest)))
	counted.Send(r.clk, r.sys.Root, c, dueindex.Tick{At: t0.Add(time.Minute)}) // due at 01:00: enqueues run 1
	if !r.alive(c) {
		t.Fatal("stopped with a run waiting")
	}
	if rep := r.ask(c, task.Command{Cmd: rules.RequestStart{RunID: events.RunID(r.id, 1)}}); rep.Err != nil {
		t.Fatal(rep.Err)
	}
	r.ask(c, task.Command{Cmd: rules.Complete{RunID: events.RunID(r.id, 1)}})
	if r.alive(c) {
		t.Fatal("stayed once the run ended")
	}
	r.mu.Lock()
	got := r.tracked[before:]
	r.mu.Unlock()
	// One: the answer to the tick. Starting from the record tells the
	// index nothing it holds already.
	if len(got) != 1 || !got[0].(dueindex.Track).NextRun.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("the shard got %+v, want the tick's Track of 02:00", got)
	}
	d := counted.Spawn(r.clk, r.sys.Root, actor.PropsFromProducer(task.New(r.cfg, r.id, r.reg.rest)))
	if rep := r.ask(d, task.Get{Pin: true}); rep.Err != nil {
		t.Fatal(rep.Err)
	}
	r.ask(d, task.Get{})
	if !r.alive(d) {
		t.Fatal("a pinned actor left")
	}
}

// TestNewFromRecord: an actor whose state read fills in answers from it,
// reading nothing; one whose read fails starts from nothing it read and
// loads its stream instead.
func TestNewFromRecord(t *testing.T) {
	r := newRig(t, nil)
	r.cfg.Rest = true
	r.create(r.spawn(), time.Minute, t0.Add(time.Minute))
	r.clk.Quiesce()
	r.reg.mu.Lock()
	rest := r.reg.rest
	r.reg.mu.Unlock()
	if rest == nil {
		t.Fatal("nothing handed over")
	}
	r.cfg.Store = nil // read from the record: nothing from the store
	a := counted.Spawn(r.clk, r.sys.Root, actor.PropsFromProducer(task.NewFrom(r.cfg, r.id, func(st *rules.State, pos *events.Position) error {
		*st, *pos = rest.State, rest.Position
		return nil
	})))
	if rep := r.ask(a, task.Get{}); rep.Err != nil || rep.State.Version != rest.State.Version || rep.Position != rest.Position {
		t.Fatalf("from the record: %+v", rep)
	}
	r.cfg.Store = r.store
	b := counted.Spawn(r.clk, r.sys.Root, actor.PropsFromProducer(task.NewFrom(r.cfg, r.id, func(st *rules.State, pos *events.Position) error {
		st.Version, st.Spec.Name, pos.Commit = 99, "half-read", 99 // a read that fails halfway
		return errors.New("bad record")
	})))
	rep := r.ask(b, task.Get{})
	if rep.Err != nil || rep.State.Version != rest.State.Version || rep.State.Spec.Name != "A" || rep.Position != rest.Position {
		t.Fatalf("after a failed read: %+v, want the stream's state (version %d)", rep, rest.State.Version)
	}
}

// TestDeletedTaskActorStops: once its task is deleted with nothing open the
// actor stops (after leaving the due-time index), and its Reply carried the
// global position of the deletion.
func TestDeletedTaskActorStops(t *testing.T) {
	r := newRig(t, nil)
	a := r.spawn()
	r.create(a, time.Minute, t0.Add(time.Minute))
	rep := r.ask(a, task.Command{Cmd: rules.Delete{Reason: "x"}})
	if rep.Err != nil || rep.State.Status != rules.StatusDeleted {
		t.Fatalf("delete: %+v", rep)
	}
	head := r.store.(events.HeadReader).Head()
	if rep.Position != head {
		t.Fatalf("reply position %s, the deletion is at %s", rep.Position, head)
	}
	if r.alive(a) {
		t.Fatal("the actor of a deleted task with nothing open is still running")
	}
	// A new actor loads the deleted task, answers, and stops in turn.
	b := r.spawn()
	if rep := r.ask(b, task.Get{}); rep.State.Status != rules.StatusDeleted || rep.Position != head {
		t.Fatalf("reloaded: %+v", rep)
	}
	if r.alive(b) {
		t.Fatal("an actor started for a deleted task stayed")
	}
}

// TestDeletedTaskActorWaitsForOpenRuns: a deleted task with a running run
// keeps its actor (and the run's deadline timer) until the run has its
// outcome.
func TestDeletedTaskActorWaitsForOpenRuns(t *testing.T) {
	r := newRig(t, nil)
	a := r.spawn()
	r.create(a, time.Minute, t0)
	r.ask(a, task.Command{Cmd: rules.Tick{}})
	run := events.RunID(r.id, 1)
	if rep := r.ask(a, task.Command{Cmd: rules.RequestStart{RunID: run}}); rep.Err != nil {
		t.Fatal(rep.Err)
	}
	r.ask(a, task.Command{Cmd: rules.Delete{}})
	if !r.alive(a) {
		t.Fatal("stopped with a run still running")
	}
	if r.clk.Pending() != 1 {
		t.Fatalf("%d timers pending, want the run's deadline", r.clk.Pending())
	}
	r.ask(a, task.Command{Cmd: rules.Complete{RunID: run}})
	if r.alive(a) {
		t.Fatal("still running after the last run ended")
	}
	if r.clk.Pending() != 0 {
		t.Fatalf("%d timers outlive the actor", r.clk.Pending())
	}
}

// TestStoppingStopsTimers: an actor stopped from outside (shutdown) stops
// its deadline timers, so none fires for an actor that is gone.
func TestStoppingStopsTimers(t *testing.T) {
	r := newRig(t, nil)
	a := r.spawn()
	r.create(a, time.Minute, t0)
	r.ask(a, task.Command{Cmd: rules.Tick{}})
	if rep := r.ask(a, task.Command{Cmd: rules.RequestStart{RunID: events.RunID(r.id, 1)}}); rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if r.clk.Pending() != 1 {
		t.Fatalf("%d timers pending, want 1", r.clk.Pending())
	}
	if err := r.sys.Root.StopFuture(a).Wait(); err != nil {
		t.Fatal(err)
	}
	if r.clk.Pending() != 0 {
		t.Fatalf("%d timers outlive the stopped actor", r.clk.Pending())
	}
}

// flaky fails the first n stream reads.
type flaky struct {
	events.Store
	fails atomic.Int32
}

var errFlaky = errors.New("flaky: read failed")

func (f *flaky) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	if f.fails.Add(-1) >= 0 {
		return nil, errFlaky
	}
	return f.Store.ReadStream(ctx, stream, from, limit)
}

// TestFailedLoadAnswersWithTheError: an actor whose load failed does not go
// on with an empty state: it answers with the error and stops, and the next
// actor loads the task.
func TestFailedLoadAnswersWithTheError(t *testing.T) {
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f := &flaky{Store: st}
	r := newRig(t, f)
	a := r.spawn()
	r.create(a, time.Minute, t0.Add(time.Minute))
	f.fails.Store(1) // the next actor's load: it answers with its error, and reads no more

	b := r.spawn()
	rep := r.ask(b, task.Get{})
	if !errors.Is(rep.Err, task.ErrLoad) || !errors.Is(rep.Err, errFlaky) {
		t.Fatalf("Get after a failed load: err %v, state %+v", rep.Err, rep.State)
	}
	if r.alive(b) {
		t.Fatal("an actor whose load failed stayed")
	}
	c := r.spawn()
	if rep := r.ask(c, task.Get{}); rep.Err != nil || rep.State.Status != rules.StatusActive {
		t.Fatalf("next actor: %+v", rep)
	}
}

// hung is a store whose appends, once on, block until their context ends.
type hung struct {
	events.Store
	on atomic.Bool
}

func (h *hung) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	if !h.on.Load() {
		return h.Store.Append(ctx, stream, expected, evs...)
	}
	<-ctx.Done()
	return events.AppendResult{}, ctx.Err()
}

// TestHungStoreCallEndsAtItsDeadline: a store call that never returns ends
// at StoreTimeout, the command gets the error and the mailbox goes on.
func TestHungStoreCallEndsAtItsDeadline(t *testing.T) {
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := &hung{Store: st}
	r := newRig(t, h)
	r.cfg.StoreTimeout = 20 * time.Millisecond
	a := r.spawn()
	r.create(a, time.Minute, t0.Add(time.Minute))
	h.on.Store(true)
	done := make(chan task.Reply, 1)
	go func() {
		res, err := counted.Request(context.Background(), r.clk, r.sys.Root, a, task.Command{Cmd: rules.Pause{}}, time.Minute)
		if err != nil {
			t.Error(err)
		}
		rep, _ := res.(task.Reply)
		done <- rep
	}()
	select {
	case rep := <-done:
		if !errors.Is(rep.Err, context.DeadlineExceeded) {
			t.Fatalf("pause on a hung store: %v", rep.Err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a hung store call blocked the actor")
	}
	if rep := r.ask(a, task.Get{}); rep.Err != nil || rep.State.Status != rules.StatusActive {
		t.Fatalf("after the failed pause: %+v", rep)
	}
}

// TestCommandWithEndedContextIsNotDecided: a command whose context ended
// before the actor got to it is answered with that error, and nothing is
// recorded.
func TestCommandWithEndedContextIsNotDecided(t *testing.T) {
	r := newRig(t, nil)
	a := r.spawn()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	spec := rules.Spec{Name: "A", Owner: "o", Kind: "k", Schedule: events.Schedule{Interval: events.Duration(time.Minute)}}
	rep := r.ask(a, task.Command{Ctx: ctx, Cmd: rules.Create{TaskID: r.id, Spec: spec, FirstRun: t0}})
	if !errors.Is(rep.Err, context.Canceled) {
		t.Fatalf("err %v", rep.Err)
	}
	if _, err := r.store.ReadStream(context.Background(), events.TaskStream(r.id), 0, 0); !errors.Is(err, events.ErrStreamNotFound) {
		t.Fatalf("recorded anyway: %v", err)
	}
}
