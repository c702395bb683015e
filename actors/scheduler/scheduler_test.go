package scheduler_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func mmss(t time.Time) string {
	d := t.Sub(t0)
	return fmt.Sprintf("%02d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

type env struct {
	t     *testing.T
	store *embedded.Store
	clk   *clock.Virtual
	s     *scheduler.Scheduler
}

func newEnv(t *testing.T, store *embedded.Store, clk *clock.Virtual, delay func(worker.QueuedRun) time.Duration, handlers map[string]worker.Handler) *env {
	t.Helper()
	s, err := scheduler.New(scheduler.Config{Store: store, Clock: clk, Tick: 30 * time.Second, Workers: 4, PickupDelay: delay})
	if err != nil {
		t.Fatal(err)
	}
	for k, h := range handlers {
		if err := s.Register(k, h); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &env{t: t, store: store, clk: clk, s: s}
}

// stopNow stops without draining: under a virtual clock nobody would move
// time for running handlers to finish.
func stopNow(s *scheduler.Scheduler) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Stop(ctx)
}

func memStore(t *testing.T) *embedded.Store {
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// sleeper works d on the clock, saving a checkpoint first.
func sleeper(c clock.Clock, d time.Duration) worker.Handler {
	return worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		if err := r.SaveCheckpoint(ctx, json.RawMessage(fmt.Sprintf(`{"run":%d}`, r.Number))); err != nil {
			return nil, err
		}
		if err := clock.Sleep(ctx, c, d); err != nil {
			return nil, err
		}
		return json.RawMessage(fmt.Sprintf(`{"done":%d}`, r.Number)), nil
	})
}

// trail renders a stream as "MM:SS Type run" lines.
func trail(t *testing.T, st events.Store, id fmt.Stringer) string {
	t.Helper()
	recs, err := st.ReadStream(context.Background(), "task-"+id.String(), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range recs {
		e, err := events.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s", mmss(r.At), r.Type)
		switch e := e.(type) {
		case events.RunEnqueued:
			fmt.Fprintf(&b, " %d next=%s missed=%d", e.Run, mmss(e.NextRun), e.Missed)
		case events.RunStarted:
			fmt.Fprintf(&b, " %d", e.Run)
		case events.RunCompleted:
			fmt.Fprintf(&b, " %d %s", e.Run, e.Checkpoint)
		case events.RunDropped:
			fmt.Fprintf(&b, " %d %s", e.Run, e.Reason)
		case events.RunForcedEnd:
			fmt.Fprintf(&b, " %d %s %s", e.Run, e.Reason, e.Checkpoint)
		case events.RunFailed:
			fmt.Fprintf(&b, " %d %s", e.Run, strings.SplitN(e.Error, "\n", 2)[0])
		case events.CheckpointSaved:
			fmt.Fprintf(&b, " %d", e.Run)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestWorkedExampleEndToEnd(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	delays := map[int]time.Duration{1: 5 * time.Second, 2: 2 * time.Second}
	e := newEnv(t, st, clk, func(r worker.QueuedRun) time.Duration { return delays[r.Run] },
		map[string]worker.Handler{"work": sleeper(clk, 10*time.Second)})
	task, created, err := e.s.CreateTask(context.Background(), scheduler.TaskSpec{Name: "A", Owner: "o", Kind: "work",
		Interval: time.Minute, FirstRun: t0.Add(30 * time.Second)})
	if err != nil || !created {
		t.Fatal(created, err)
	}
	clk.RunUntil(t0.Add(2 * time.Minute))
	got := trail(t, st, task.ID)
	want := `00:00 TaskCreated
00:30 RunEnqueued 1 next=01:30 missed=0
00:35 RunStarted 1
00:35 CheckpointSaved 1
00:45 RunCompleted 1 {"done":1}
01:30 RunEnqueued 2 next=02:30 missed=0
01:32 RunStarted 2
01:32 CheckpointSaved 2
01:42 RunCompleted 2 {"done":2}
`
	if got != want {
		t.Fatalf("trail:\n%s\nwant:\n%s", got, want)
	}
	if err := e.s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestForcedEndFailurePanicAndDrop(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	e := newEnv(t, st, clk, func(r worker.QueuedRun) time.Duration {
		if r.Run == 2 {
			return 0
		}
		return 0
	}, map[string]worker.Handler{
		"slow": sleeper(clk, 5*time.Minute),
		"fail": worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) {
			return nil, errors.New("upstream said no")
		}),
		"panic": worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) {
			panic("handler bug")
		}),
	})
	slow, _, err := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "slow", Owner: "o", Kind: "slow", Interval: time.Minute,
		Timebox: 20 * time.Second, FirstRun: t0.Add(30 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	fail, _, _ := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "fail", Owner: "o", Kind: "fail", Interval: time.Minute, FirstRun: t0.Add(30 * time.Second)})
	pan, _, _ := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "panic", Owner: "o", Kind: "panic", Interval: time.Minute, FirstRun: t0.Add(30 * time.Second)})
	clk.RunUntil(t0.Add(100 * time.Second))
	if got := trail(t, st, slow.ID); !strings.Contains(got, `00:50 RunForcedEnd 1 timebox_exceeded {"run":1}`) ||
		!strings.Contains(got, "01:30 RunStarted 2") {
		t.Fatalf("slow:\n%s", got)
	}
	if got := trail(t, st, fail.ID); !strings.Contains(got, "00:30 RunFailed 1 upstream said no") {
		t.Fatalf("fail:\n%s", got)
	}
	if got := trail(t, st, pan.ID); !strings.Contains(got, "00:30 RunFailed 1 panic: handler bug") || !strings.Contains(got, "01:30 RunFailed 2 panic") {
		t.Fatalf("panic (the worker must survive for run 2):\n%s", got)
	}
	stopNow(e.s)
}

func TestPauseDropsWaitingRunAndOwnerDelete(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	e := newEnv(t, st, clk, func(r worker.QueuedRun) time.Duration { return 20 * time.Second },
		map[string]worker.Handler{"noop": sleeper(clk, 0)})
	a, _, _ := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "a", Owner: "chan/1", Kind: "noop", Interval: time.Minute, FirstRun: t0.Add(30 * time.Second)})
	b, _, _ := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "b", Owner: "chan/1", Kind: "noop", Interval: time.Minute, FirstRun: t0.Add(30 * time.Second)})
	// Another spec under the same owner and name: the existing task, and a
	// conflict (R6).
	again, created, err := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "a", Owner: "chan/1", Kind: "noop", Interval: time.Hour})
	if !errors.Is(err, scheduler.ErrSpecConflict) || created || again.ID != a.ID || again.Interval != time.Minute {
		t.Fatalf("create again: %+v %v %v", again, created, err)
	}
	clk.RunUntil(t0.Add(40 * time.Second)) // A1 enqueued at 00:30, picked up at 00:50
	if _, err := e.s.PauseTask(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	clk.RunUntil(t0.Add(3 * time.Minute))
	got := trail(t, st, a.ID)
	if !strings.Contains(got, "00:50 RunDropped 1 paused") || strings.Count(got, "RunEnqueued") != 1 {
		t.Fatalf("paused task:\n%s", got)
	}
	n, err := e.s.DeleteOwner(ctx, "chan/1")
	if err != nil || n.Deleted != 2 {
		t.Fatalf("delete owner: %+v %v", n, err)
	}
	before := trail(t, st, b.ID)
	clk.RunUntil(t0.Add(10 * time.Minute))
	if after := trail(t, st, b.ID); after != before+"" && strings.Contains(after[len(before):], "RunEnqueued") {
		t.Fatalf("a deleted task enqueued:\n%s", after)
	}
	if _, err := e.s.Task(ctx, [16]byte{1}); !errors.Is(err, scheduler.ErrTaskNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
	var fe *scheduler.FieldError
	if _, _, err := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "x", Owner: "o", Kind: "noop", Interval: time.Millisecond}); !errors.As(err, &fe) || fe.Field != "interval" {
		t.Fatalf("bad interval: %v", err)
	}
	if _, _, err := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "x", Owner: "o", Kind: "nope", Interval: time.Minute}); !errors.As(err, &fe) || fe.Field != "kind" {
		t.Fatalf("unknown kind: %v", err)
	}
	// The refusal lists the kinds there are, so a client can say what to use.
	if want := "; the kinds registered are " + strings.Join(e.s.Kinds(), ", "); len(e.s.Kinds()) == 0 || !strings.HasSuffix(fe.Message, want) {
		t.Errorf("unknown kind: %q does not end with %q", fe.Message, want)
	}
	stopNow(e.s)
}

// TestRestartRecoversRuns stops a scheduler with a run waiting and a run
// running, starts a new one on the same store, and checks R9.
func TestRestartRecoversRuns(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	handlers := map[string]worker.Handler{"slow": sleeper(clk, 40*time.Second), "noop": sleeper(clk, 0)}
	e := newEnv(t, st, clk, func(r worker.QueuedRun) time.Duration {
		if r.Run == 1 && r.Priority == 1 {
			return time.Minute // the noop task's run waits in the queue
		}
		return 0
	}, handlers)
	slow, _, _ := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "slow", Owner: "o", Kind: "slow", Interval: 2 * time.Minute,
		Timebox: time.Minute, FirstRun: t0.Add(30 * time.Second)})
	waiting, _, _ := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "wait", Owner: "o", Kind: "noop", Interval: 2 * time.Minute,
		Priority: 1, FirstRun: t0.Add(30 * time.Second)})
	clk.RunUntil(t0.Add(45 * time.Second))
	// The process "dies": nothing drains, handlers are abandoned.
	stopNow(e.s)

	clk2 := clock.NewVirtual(clk.Now())
	handlers2 := map[string]worker.Handler{"slow": sleeper(clk2, 40*time.Second), "noop": sleeper(clk2, 0)}
	e2 := newEnv(t, st, clk2, nil, handlers2)
	clk2.RunUntil(t0.Add(3 * time.Minute))
	gotSlow := trail(t, st, slow.ID)
	if !strings.Contains(gotSlow, `01:30 RunForcedEnd 1 process_lost {"run":1}`) {
		t.Fatalf("running run not forced to end after restart:\n%s", gotSlow)
	}
	gotWait := trail(t, st, waiting.ID)
	if !strings.Contains(gotWait, "00:45 RunStarted 1") || !strings.Contains(gotWait, "00:45 RunCompleted 1") {
		t.Fatalf("waiting run not taken after restart:\n%s", gotWait)
	}
	stopNow(e2.s)
}

// TestRestartKeepsOwners restarts on a store with tasks of two owners, one
// of them deleted while its run was running (so that it gets an actor at
// the restart), and checks that Tasks and DeleteOwner (R6) still find
// every task of each owner and none that was deleted.
func TestRestartKeepsOwners(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	handlers := map[string]worker.Handler{"noop": sleeper(clk, 0), "slow": sleeper(clk, 10*time.Minute)}
	e := newEnv(t, st, clk, nil, handlers)
	mk := func(owner, name, kind string) scheduler.Task {
		t.Helper()
		task, _, err := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: name, Owner: owner, Kind: kind, Interval: time.Hour,
			FirstRun: t0.Add(30 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		return task
	}
	for _, name := range []string{"a1", "a2", "a3", "a4"} {
		mk("a", name, "noop")
	}
	mk("b", "b1", "noop")
	mk("b", "b2", "noop")
	gone := mk("a", "a5", "slow")
	clk.RunUntil(t0.Add(45 * time.Second)) // a5's run 1 is running
	if _, err := e.s.DeleteTask(ctx, gone.ID); err != nil {
		t.Fatal(err)
	}
	if got := trail(t, st, gone.ID); !strings.Contains(got, "RunStarted 1") || strings.Contains(got, "RunCompleted") {
		t.Fatalf("a5 was not deleted while running:\n%s", got)
	}
	stopNow(e.s)

	e2 := newEnv(t, st, clk, nil, handlers)
	defer stopNow(e2.s)
	names := func() string {
		t.Helper()
		tasks, err := e2.s.Tasks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, task := range tasks {
			got = append(got, task.Owner+"/"+task.Name)
		}
		return strings.Join(got, ",")
	}
	if got, want := names(), "a/a1,a/a2,a/a3,a/a4,b/b1,b/b2"; got != want {
		t.Fatalf("tasks after the restart: %s, want %s", got, want)
	}
	d, err := e2.s.DeleteOwner(ctx, "a")
	if err != nil || d.Deleted != 4 {
		t.Fatalf("delete owner a after the restart: %+v %v, want 4 deleted", d, err)
	}
	if got, want := names(), "b/b1,b/b2"; got != want {
		t.Fatalf("tasks after deleting owner a: %s, want %s", got, want)
	}
}

// TestQueueTakesRunsByPriority keeps the only worker busy while three runs
// wait, then checks they are taken by priority.
func TestQueueTakesRunsByPriority(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	var order []string
	record := worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		order = append(order, r.TaskName) // one worker: never concurrent
		return nil, nil
	})
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: 30 * time.Second, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.Register("block", sleeper(clk, 100*time.Second))
	s.Register("record", record)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stopNow(s)
	mk := func(name, kind string, prio int, first time.Duration) {
		if _, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: name, Owner: "o", Kind: kind, Interval: 2 * time.Minute,
			Timebox: 110 * time.Second, Priority: prio, FirstRun: t0.Add(first)}); err != nil {
			t.Fatal(err)
		}
	}
	mk("blocker", "block", 0, 30*time.Second) // runs 00:30–02:10 on the only worker
	// Enqueued in the order low (01:00), mid (01:30), high (02:00), all
	// waiting for the worker: taken by priority, not by enqueue order.
	mk("low", "record", 0, 45*time.Second)
	mk("mid", "record", 4, 75*time.Second)
	mk("high", "record", 9, 105*time.Second)
	clk.RunUntil(t0.Add(140 * time.Second))
	if got := strings.Join(order, ","); got != "high,mid,low" {
		t.Fatalf("runs taken in order %s, want high,mid,low", got)
	}
}

// With a single worker, a panicking handler must leave that worker able to
// take the next run; with several workers another one could hide its loss.
func TestPanicKeepsTheOnlyWorker(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: 30 * time.Second, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register("panic", worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) {
		panic("handler bug")
	})); err != nil {
		t.Fatal(err)
	}
	if err := s.Register("noop", sleeper(clk, 0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer stopNow(s)
	pan, _, _ := s.CreateTask(ctx, scheduler.TaskSpec{Name: "panic", Owner: "o", Kind: "panic", Interval: time.Minute, FirstRun: t0.Add(30 * time.Second)})
	ok, _, _ := s.CreateTask(ctx, scheduler.TaskSpec{Name: "ok", Owner: "o", Kind: "noop", Interval: time.Minute, FirstRun: t0.Add(90 * time.Second)})
	clk.RunUntil(t0.Add(100 * time.Second))
	if got := trail(t, st, pan.ID); !strings.Contains(got, "00:30 RunFailed 1 panic: handler bug") || !strings.Contains(got, "01:30 RunFailed 2 panic") {
		t.Fatalf("panic task:\n%s", got)
	}
	if got := trail(t, st, ok.ID); !strings.Contains(got, "01:30 RunCompleted 1") {
		t.Fatalf("the only worker did not survive the panic:\n%s", got)
	}
}
