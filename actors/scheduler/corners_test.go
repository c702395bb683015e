package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/scheduler/schedulertest"
	"github.com/cronactor/cronactor/actors/worker"
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
