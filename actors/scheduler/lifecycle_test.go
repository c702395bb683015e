package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
)

func spec(name string, first time.Duration) scheduler.TaskSpec {
	return scheduler.TaskSpec{Name: name, Owner: "o", Kind: "noop", Interval: time.Minute, FirstRun: t0.Add(first)}
}

// TestDeletedTaskLeavesMemory: deleting a task with nothing open stops its
// actor; re-creating it starts a new one, which ticks.
func TestDeletedTaskLeavesMemory(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	e := newEnv(t, st, clk, nil, map[string]worker.Handler{"noop": sleeper(clk, 0)})
	defer stopNow(e.s)
	a, _, err := e.s.CreateTask(ctx, spec("a", 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if a.Position != st.Head() {
		t.Fatalf("create returned position %s, the log's head is %s", a.Position, st.Head())
	}
	if _, _, err := e.s.CreateTask(ctx, spec("b", 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	del, err := e.s.DeleteTask(ctx, a.ID)
	if err != nil || del.Status != "deleted" || del.Position != st.Head() {
		t.Fatalf("delete: %+v %v (head %s)", del, err, st.Head())
	}
	clk.Quiesce()
	if n := e.s.Stats().Tasks; n != 1 {
		t.Fatalf("%d task actors in memory after a delete, want 1", n)
	}
	got, err := e.s.Task(ctx, a.ID)
	if err != nil || got.Status != "deleted" {
		t.Fatalf("a deleted task, asked for: %+v %v", got, err)
	}
	again, created, err := e.s.CreateTask(ctx, spec("a", 60*time.Second))
	if err != nil || !created || again.Status != "active" {
		t.Fatalf("re-create: %+v %v %v", again, created, err)
	}
	clk.RunUntil(t0.Add(90 * time.Second))
	if got := trail(t, st, a.ID); !strings.Contains(got, "01:00 RunEnqueued") {
		t.Fatalf("the re-created task did not run:\n%s", got)
	}
	if n := e.s.Stats().Tasks; n != 2 {
		t.Fatalf("%d task actors, want 2", n)
	}
}

// TestStartSpawnsNoActorForDeletedTasks: a task deleted with nothing open
// stays in the log, gets no actor at start, and comes back on demand.
func TestStartSpawnsNoActorForDeletedTasks(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	handlers := map[string]worker.Handler{"noop": sleeper(clk, 0)}
	e := newEnv(t, st, clk, nil, handlers)
	gone, _, _ := e.s.CreateTask(ctx, spec("gone", 30*time.Second))
	if _, _, err := e.s.CreateTask(ctx, spec("kept", 30*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.DeleteTask(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	clk.Quiesce()
	stopNow(e.s)

	e2 := newEnv(t, st, clk, nil, handlers)
	defer stopNow(e2.s)
	clk.Quiesce()
	if n := e2.s.Stats().Tasks; n != 1 {
		t.Fatalf("%d task actors after start, want 1 (the deleted task needs none)", n)
	}
	if got, err := e2.s.Task(ctx, gone.ID); err != nil || got.Status != "deleted" {
		t.Fatalf("deleted task on demand: %+v %v", got, err)
	}
	if _, created, err := e2.s.CreateTask(ctx, spec("gone", 45*time.Second)); err != nil || !created {
		t.Fatalf("re-create after restart: %v %v", created, err)
	}
	clk.RunUntil(t0.Add(time.Minute))
	if got := trail(t, st, gone.ID); !strings.Contains(got, "RunEnqueued") {
		t.Fatalf("the re-created task did not run:\n%s", got)
	}
}

// TestSchedulerCallsHonourTheirContext: an ended context sends nothing; a
// context that ends while the actor is busy ends the call at once, long
// before RequestTimeout.
func TestSchedulerCallsHonourTheirContext(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	h := &hangingStore{Store: st}
	s, err := scheduler.New(scheduler.Config{Store: h, Clock: clk, Tick: 30 * time.Second,
		RequestTimeout: time.Hour, StoreTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s.Register("noop", sleeper(clk, 0))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer stopNow(s)
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := s.CreateTask(ended, spec("a", time.Minute)); !errors.Is(err, context.Canceled) {
		t.Fatalf("create with an ended context: %v", err)
	}
	if head := st.Head(); !head.IsZero() {
		t.Fatalf("recorded up to %s with an ended context", head)
	}
	a, _, err := s.CreateTask(context.Background(), spec("a", time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	h.hang.Store(true)
	defer h.release()
	ctx, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	errc := make(chan error, 1)
	go func() {
		_, err := s.PauseTask(ctx, a.ID)
		errc <- err
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("pause on a hung store: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call outlived its context")
	}
}

// hangingStore's appends, once hang is set, wait until released or their
// context ends.
type hangingStore struct {
	events.Store
	hang     atomic.Bool
	released chan struct{}
	once     atomic.Bool
}

func (h *hangingStore) release() {
	if h.once.CompareAndSwap(false, true) && h.released != nil {
		close(h.released)
	}
}

func (h *hangingStore) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	if h.hang.Load() {
		select {
		case <-ctx.Done():
			return events.AppendResult{}, ctx.Err()
		case <-h.wait():
		}
	}
	return h.Store.Append(ctx, stream, expected, evs...)
}

var never = make(chan struct{})

func (h *hangingStore) wait() <-chan struct{} {
	if h.released == nil {
		return never
	}
	return h.released
}

// TestNoRunStartsOnceStopBegan: while Stop waits for running runs, a run a
// worker takes from the queue does not start (it stays waiting for the next
// start) — Stop no longer races a run's start against its wait.
func TestNoRunStartsOnceStopBegan(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	e := newEnv(t, st, clk, func(r worker.QueuedRun) time.Duration {
		if r.Priority == 1 {
			return 20 * time.Second // picked up at 00:50
		}
		return 0
	}, map[string]worker.Handler{"slow": sleeper(clk, time.Minute), "noop": sleeper(clk, 0)})
	if _, _, err := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "slow", Owner: "o", Kind: "slow", Interval: 2 * time.Minute,
		Timebox: 90 * time.Second, FirstRun: t0.Add(30 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	late, _, err := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "late", Owner: "o", Kind: "noop", Interval: 2 * time.Minute,
		Priority: 1, FirstRun: t0.Add(30 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(35 * time.Second)) // slow runs until 01:30; late waits for 00:50
	draining := make(chan struct{})
	scheduler.SetStopHook(e.s, func() { close(draining) })
	defer scheduler.SetStopHook(e.s, nil)
	stopCtx, abandon := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { e.s.Stop(stopCtx); close(stopped) }()
	within(t, draining, "Stop to begin draining")
	clk.RunUntil(t0.Add(time.Minute))
	if got := trail(t, st, late.ID); strings.Contains(got, "RunStarted") {
		t.Fatalf("a run started while Stop was draining:\n%s", got)
	}
	abandon()
	within(t, stopped, "Stop to return once abandoned")
}

// TestRestingTasksHaveNoActor: a task with no open run rests — no actor,
// a record — and wakes for its tick and for calls: its runs go on exactly
// (every due tick enqueues, every run ends), a pause and a resume reach it,
// and after a restart only the task with an open run gets an actor.
func TestRestingTasksHaveNoActor(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	handlers := map[string]worker.Handler{"noop": sleeper(clk, 0), "slow": sleeper(clk, 20*time.Second)}
	e := newEnv(t, st, clk, nil, handlers)
	a, _, err := e.s.CreateTask(ctx, spec("a", 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "b", Owner: "o", Kind: "slow", Interval: time.Minute,
		FirstRun: t0.Add(30 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	clk.Quiesce()
	if got := e.s.Stats(); got.Tasks != 2 || got.Actors != 0 {
		t.Fatalf("after create: %d tasks, %d actors; want 2, 0", got.Tasks, got.Actors)
	}
	clk.RunUntil(t0.Add(40 * time.Second)) // both ran at 00:30; b works until 00:50
	if got := e.s.Stats(); got.Actors != 1 {
		t.Fatalf("at 00:40: %d actors, want 1 (b's run is open)", got.Actors)
	}
	if _, err := e.s.PauseTask(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(95 * time.Second)) // a paused; b ran again at 01:30 and works until 01:50
	if _, err := e.s.ResumeTask(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(155 * time.Second))
	if got := trail(t, st, a.ID); got != "00:00 TaskCreated\n00:30 RunEnqueued 1 next=01:30 missed=0\n00:30 RunStarted 1\n"+
		"00:30 CheckpointSaved 1\n00:30 RunCompleted 1 {\"done\":1}\n00:40 TaskPaused\n01:35 TaskResumed\n"+
		"02:00 RunEnqueued 2 next=03:00 missed=0\n02:00 RunStarted 2\n02:00 CheckpointSaved 2\n02:00 RunCompleted 2 {\"done\":2}\n" {
		t.Fatalf("a:\n%s", got)
	}
	if got := trail(t, st, b.ID); got != "00:00 TaskCreated\n00:30 RunEnqueued 1 next=01:30 missed=0\n00:30 RunStarted 1\n"+
		"00:30 CheckpointSaved 1\n00:50 RunCompleted 1 {\"done\":1}\n01:30 RunEnqueued 2 next=02:30 missed=0\n01:30 RunStarted 2\n"+
		"01:30 CheckpointSaved 2\n01:50 RunCompleted 2 {\"done\":2}\n02:30 RunEnqueued 3 next=03:30 missed=0\n02:30 RunStarted 3\n"+
		"02:30 CheckpointSaved 3\n" {
		t.Fatalf("b:\n%s", got)
	}
	if got := e.s.Stats(); got.Actors != 1 {
		t.Fatalf("at 02:35: %d actors, want 1 (b's third run is open)", got.Actors)
	}
	stopNow(e.s)

	e2 := newEnv(t, st, clk, nil, handlers)
	defer stopNow(e2.s)
	clk.Quiesce()
	if got := e2.s.Stats(); got.Tasks != 2 || got.Actors != 1 {
		t.Fatalf("after restart: %d tasks, %d actors; want 2, 1 (b's run was open)", got.Tasks, got.Actors)
	}
	got, err := e2.s.Task(ctx, a.ID)
	if err != nil || got.Status != "active" || got.Runs != 2 {
		t.Fatalf("a from its record: %+v %v", got, err)
	}
	clk.RunUntil(t0.Add(3*time.Minute + 10*time.Second)) // the new ticker ticks at 03:05
	if got := trail(t, st, a.ID); !strings.HasSuffix(got, "03:05 RunEnqueued 3 next=04:05 missed=0\n03:05 RunStarted 3\n"+
		"03:05 CheckpointSaved 3\n03:05 RunCompleted 3 {\"done\":3}\n") {
		t.Fatalf("a after the restart:\n%s", got)
	}
	if got := trail(t, st, b.ID); !strings.Contains(got, "03:00 RunForcedEnd 3 process_lost") {
		t.Fatalf("b after the restart:\n%s", got)
	}
	if got := e2.s.Stats(); got.Tasks != 2 || got.Actors != 0 {
		t.Fatalf("at 03:10: %d tasks, %d actors; want 2, 0 (both rest)", got.Tasks, got.Actors)
	}
}
