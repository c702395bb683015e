package scheduler_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/scheduler/schedulertest"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
)

func noopHandler() worker.Handler { return noop()["noop"] }

// TestCreateTaskSpecConflict: a create of an existing owner and name with
// the same spec returns the task (created false); with another spec it
// returns the task and an error matching ErrSpecConflict, and records
// nothing.
func TestCreateTaskSpecConflict(t *testing.T) {
	h := schedulertest.New(t, schedulertest.WithHandler("noop", noopHandler()))
	s, ctx := h.Scheduler(), context.Background()
	spec := scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "noop", Schedule: scheduler.Every(time.Hour)}
	first := h.Create(spec)
	again, created, err := s.CreateTask(ctx, spec)
	if err != nil || created || again.ID != first.ID {
		t.Fatalf("same spec: %v, created %v, id %s (want %s)", err, created, again.ID, first.ID)
	}
	other := spec
	other.Schedule = scheduler.Every(2 * time.Hour)
	got, created, err := s.CreateTask(ctx, other)
	if !errors.Is(err, scheduler.ErrSpecConflict) {
		t.Fatalf("other spec: err %v, want ErrSpecConflict", err)
	}
	var sc *scheduler.SpecConflictError
	if !errors.As(err, &sc) || sc.ID != first.ID || sc.Owner != "o" || sc.Name != "n" {
		t.Fatalf("other spec: %#v, want the existing task named", err)
	}
	if errors.Is(err, scheduler.ErrInvalidSpec) {
		t.Error("a conflict reads as an invalid spec")
	}
	if created || got.ID != first.ID || got.Interval != time.Hour {
		t.Errorf("other spec: created %v, task %s every %s; want the existing task, every 1h", created, got.ID, got.Interval)
	}
	if now := h.Task(first.ID); now.Version != first.Version || now.Interval != time.Hour {
		t.Errorf("the conflict changed the task: version %d → %d, interval %s", first.Version, now.Version, now.Interval)
	}
}

// TestConfigErrorIsNotASpecError: New refuses a Config with a
// *ConfigError naming the field, which matches ErrInvalidConfig and not
// the task-spec errors (ErrInvalidSpec, *FieldError).
func TestConfigErrorIsNotASpecError(t *testing.T) {
	for field, cfg := range map[string]scheduler.Config{
		"Store":   {},
		"Workers": {Store: memStore(t), Workers: -1},
		"Queues":  {Store: memStore(t), Queues: map[string]int{"q": 0}},
	} {
		_, err := scheduler.New(cfg)
		var ce *scheduler.ConfigError
		if !errors.As(err, &ce) || ce.Field != field || !errors.Is(err, scheduler.ErrInvalidConfig) {
			t.Errorf("%s: %v, want a ConfigError for %s matching ErrInvalidConfig", field, err, field)
		}
		var fe *scheduler.FieldError
		if errors.Is(err, scheduler.ErrInvalidSpec) || errors.As(err, &fe) {
			t.Errorf("%s: %v reads as a task-spec error", field, err)
		}
	}
}

// TestUnpin: TaskPID keeps a resting task's actor in memory; Unpin lets it
// rest again (the actor leaves), and TaskPID pins it anew.
func TestUnpin(t *testing.T) {
	h := schedulertest.New(t, schedulertest.WithHandler("noop", noopHandler()))
	s, ctx := h.Scheduler(), context.Background()
	tk := h.Create(scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "noop", Schedule: scheduler.Every(time.Hour)})
	h.Clock().Quiesce()
	if a := s.Stats().Actors; a != 0 {
		t.Fatalf("a resting task has %d actors before TaskPID", a)
	}
	for round := range 2 {
		if _, err := s.TaskPID(ctx, tk.ID); err != nil {
			t.Fatal(err)
		}
		h.Advance(2 * time.Hour) // runs come and go: a pinned actor stays
		if a := s.Stats().Actors; a != 1 {
			t.Fatalf("round %d: %d actors after TaskPID and a run, want the pinned one", round, a)
		}
		if err := s.Unpin(ctx, tk.ID); err != nil {
			t.Fatal(err)
		}
		h.Clock().Quiesce()
		if a := s.Stats().Actors; a != 0 {
			t.Fatalf("round %d: %d actors after Unpin, want 0 (the task rests)", round, a)
		}
	}
	if err := s.Unpin(ctx, tk.ID); err != nil {
		t.Errorf("Unpin of a task not pinned: %v", err)
	}
	if err := s.Unpin(ctx, scheduler.TaskID("o", "nobody")); !errors.Is(err, scheduler.ErrTaskNotFound) {
		t.Errorf("Unpin of an unknown task: %v, want ErrTaskNotFound", err)
	}
}

// TestTaskUpdateFieldsOptional: every TaskUpdate field is optional the same
// way, nil unset: an explicit zero is a value (a zero tolerance is set; a
// zero interval, timebox or next run is refused), not "unset".
func TestTaskUpdateFieldsOptional(t *testing.T) {
	h := schedulertest.New(t, schedulertest.WithHandler("noop", noopHandler()))
	s, ctx := h.Scheduler(), context.Background()
	tk := h.Create(scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "noop", Schedule: scheduler.Every(time.Hour).WithTolerance(time.Minute)})
	got, err := s.UpdateTask(ctx, tk.ID, scheduler.TaskUpdate{Tolerance: new(time.Duration(0))})
	if err != nil || got.Tolerance != 0 {
		t.Fatalf("tolerance set to 0: %v, tolerance %s", err, got.Tolerance)
	}
	for name, u := range map[string]scheduler.TaskUpdate{
		"interval 0": {Interval: new(time.Duration(0))},
		"timebox 0":  {Timebox: new(time.Duration(0))},
		"next run 0": {NextRun: new(time.Time{})},
	} {
		if _, err := s.UpdateTask(ctx, tk.ID, u); !errors.Is(err, scheduler.ErrInvalidSpec) {
			t.Errorf("%s: %v, want ErrInvalidSpec (a zero given is not unset)", name, err)
		}
	}
	after := h.Task(tk.ID)
	if after.Interval != time.Hour || after.Version != got.Version {
		t.Errorf("refused updates changed the task: interval %s, version %d → %d", after.Interval, got.Version, after.Version)
	}
	next := after.NextRun.Add(30 * time.Minute)
	moved, err := s.UpdateTask(ctx, tk.ID, scheduler.TaskUpdate{NextRun: &next, Interval: new(2 * time.Hour)})
	if err != nil || !moved.NextRun.Equal(next) || moved.Interval != 2*time.Hour {
		t.Errorf("next run and interval: %v, next %s (want %s), interval %s", err, moved.NextRun, next, moved.Interval)
	}
}

// TestSecondSchedulerOnSnapshotsRefused: a second scheduler on a store
// whose snapshots a running one uses is refused at Start, with a clear
// error; without snapshots it starts; once the first stopped, a new one
// takes the snapshots.
func TestSecondSchedulerOnSnapshotsRefused(t *testing.T) {
	st := memStore(t)
	start := func(every int) (*scheduler.Scheduler, error) {
		s, err := scheduler.New(scheduler.Config{Store: st, Clock: clock.NewVirtual(t0), SnapshotEvery: every})
		if err != nil {
			t.Fatal(err)
		}
		return s, s.Start(context.Background())
	}
	first, err := start(0)
	if err != nil {
		t.Fatal(err)
	}
	second, err := start(0)
	if !errors.Is(err, scheduler.ErrSnapshotsInUse) {
		t.Fatalf("a second scheduler on the same snapshots: %v, want ErrSnapshotsInUse", err)
	}
	if _, err := second.Task(context.Background(), scheduler.TaskID("o", "n")); !errors.Is(err, scheduler.ErrNotStarted) {
		t.Errorf("the refused scheduler answers: %v", err)
	}
	off, err := start(-1)
	if err != nil {
		t.Fatalf("without snapshots: %v", err)
	}
	for _, s := range []*scheduler.Scheduler{off, first} {
		if err := s.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	third, err := start(0)
	if err != nil {
		t.Fatalf("after the first stopped: %v", err)
	}
	if err := third.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// heldStore holds its first append until released, and completes it
// whatever the caller's context says: a write that is recorded although
// its caller stopped waiting.
type heldStore struct {
	events.Store
	held    atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (h *heldStore) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	if h.held.CompareAndSwap(false, true) {
		close(h.entered)
		<-h.release
	}
	return h.Store.Append(context.WithoutCancel(ctx), stream, expected, evs...)
}

// TestOwnerIndexFollowsTheTasksEvents: a create whose caller stopped
// waiting before the append was answered is still recorded; the owners'
// index follows the task's events, not the caller's reply, so Tasks lists
// the task and DeleteOwner deletes it.
func TestOwnerIndexFollowsTheTasksEvents(t *testing.T) {
	st := &heldStore{Store: memStore(t), entered: make(chan struct{}), release: make(chan struct{})}
	h := schedulertest.New(t, schedulertest.WithStore(st), schedulertest.WithHandler("noop", noopHandler()))
	s := h.Scheduler()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "noop", Schedule: scheduler.Every(time.Hour)})
		done <- err
	}()
	<-st.entered
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the create's caller: %v, want context.Canceled", err)
	}
	close(st.release) // the append goes through now
	h.Clock().Quiesce()
	list, err := s.Tasks(context.Background())
	if err != nil || len(list) != 1 || list[0].Name != "n" {
		t.Fatalf("Tasks after the recorded create: %v, %+v", err, list)
	}
	d, err := s.DeleteOwner(context.Background(), "o")
	if err != nil || d.Deleted != 1 {
		t.Fatalf("DeleteOwner: %v, deleted %d, want 1", err, d.Deleted)
	}
	if list, err := s.Tasks(context.Background()); err != nil || len(list) != 0 {
		t.Fatalf("Tasks after DeleteOwner: %v, %+v", err, list)
	}
}

// oneStreamFails fails every append to one stream.
type oneStreamFails struct {
	events.Store
	stream string
	fail   atomic.Bool
}

var errInjected = errors.New("injected append failure")

func (f *oneStreamFails) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	if f.fail.Load() && stream == f.stream {
		return events.AppendResult{}, errInjected
	}
	return f.Store.Append(ctx, stream, expected, evs...)
}

// TestDeleteOwnerPartial: DeleteOwner stops at the first task it cannot
// delete and says what it did: the tasks before it deleted (counted, their
// last position), the rest untouched; a second call deletes the rest.
func TestDeleteOwnerPartial(t *testing.T) {
	st := &oneStreamFails{Store: memStore(t)}
	h := schedulertest.New(t, schedulertest.WithStore(st), schedulertest.WithHandler("noop", noopHandler()))
	s, ctx := h.Scheduler(), context.Background()
	var tasks []scheduler.Task
	for _, name := range []string{"a", "b", "c"} {
		tasks = append(tasks, h.Create(scheduler.TaskSpec{Owner: "o", Name: name, Kind: "noop", Schedule: scheduler.Every(time.Hour)}))
	}
	slices.SortFunc(tasks, func(a, b scheduler.Task) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	st.stream = events.TaskStream(tasks[1].ID) // the second in the order of IDs
	st.fail.Store(true)
	d, err := s.DeleteOwner(ctx, "o")
	if !errors.Is(err, errInjected) {
		t.Fatalf("DeleteOwner: %v, want the store's error", err)
	}
	first := h.Task(tasks[0].ID)
	if d.Deleted != 1 || d.Position != first.Position || first.Status != "deleted" {
		t.Fatalf("partial result: deleted %d at %v; the first task %s at %v", d.Deleted, d.Position, first.Status, first.Position)
	}
	for _, tk := range tasks[1:] {
		if got := h.Task(tk.ID); got.Status != "active" {
			t.Errorf("task %s after the failure: %s, want untouched (active)", tk.Name, got.Status)
		}
	}
	st.fail.Store(false)
	d, err = s.DeleteOwner(ctx, "o")
	if err != nil || d.Deleted != 2 {
		t.Fatalf("the retry: %v, deleted %d, want the 2 left", err, d.Deleted)
	}
}

// TestTasksPageFromRecords: TasksPage lists the tasks not deleted by owner
// then name, in pages that follow each other through Next; resting tasks
// are read from their records, with no message to any actor (the clock
// counts every message sent: none is), and a task with an actor is asked.
func TestTasksPageFromRecords(t *testing.T) {
	clk := &tally{Virtual: clock.NewVirtual(t0)}
	s, err := scheduler.New(scheduler.Config{Store: memStore(t), Clock: clk, Tick: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register("noop", noopHandler()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer s.Stop(ctx)
	want := []string{"a/1", "a/2", "a/3", "b/1", "b/2", "c/1"}
	for _, n := range []string{"b/2", "a/3", "c/1", "a/1", "b/1", "a/2", "d/1"} {
		if _, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Owner: n[:1], Name: n[2:], Kind: "noop", Interval: time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DeleteTask(ctx, scheduler.TaskID("d", "1")); err != nil {
		t.Fatal(err)
	}
	pinned, err := s.TaskPID(ctx, scheduler.TaskID("b", "1"))
	if err != nil || pinned == nil {
		t.Fatal(err)
	}
	clk.Quiesce()
	before := clk.begins.Load()
	var got []string
	q := scheduler.TaskQuery{Limit: 4}
	for pages := 0; ; pages++ {
		p, err := s.TasksPage(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Tasks) > q.Limit {
			t.Fatalf("page %d: %d tasks, limit %d", pages, len(p.Tasks), q.Limit)
		}
		for _, tk := range p.Tasks {
			got = append(got, tk.Owner+"/"+tk.Name)
		}
		if p.Next == "" {
			break
		}
		q.After = p.Next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages listed %v, want %v", got, want)
	}
	// One message: the pinned task's actor was asked; the five resting
	// tasks were read from their records.
	if sent := clk.begins.Load() - before; sent != 1 {
		t.Errorf("the listing sent %d messages, want 1 (to the one task with an actor)", sent)
	}
	mine, err := s.TasksPage(ctx, scheduler.TaskQuery{Owner: "a"})
	if err != nil || len(mine.Tasks) != 3 || mine.Next != "" {
		t.Errorf("owner a: %v, %d tasks, next %q", err, len(mine.Tasks), mine.Next)
	}
	all, err := s.Tasks(ctx)
	if err != nil || len(all) != len(want) {
		t.Errorf("Tasks: %v, %d tasks", err, len(all))
	}
	if _, err := s.TasksPage(ctx, scheduler.TaskQuery{After: "!"}); !errors.Is(err, scheduler.ErrInvalidSpec) {
		t.Errorf("a bad cursor: %v", err)
	}
}
