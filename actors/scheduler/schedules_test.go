package scheduler_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
)

func noop() map[string]worker.Handler {
	return map[string]worker.Handler{"noop": worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) {
		return nil, nil
	})}
}

// TestCronTaskEndToEnd: a 6-field cron every 3 s on a 30 s tick merges
// the slots between ticks into one run and counts them missed (R10, R8);
// the runs start at the ticks; max_runs finishes the task in the decision
// that enqueues its last run, and the finished task enqueues nothing more.
func TestCronTaskEndToEnd(t *testing.T) {
	clk := clock.NewVirtual(t0)
	e := newEnv(t, memStore(t), clk, nil, noop())
	defer stopNow(e.s)
	ctx := context.Background()
	task, created, err := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "c", Owner: "o", Kind: "noop",
		Cron: []string{"*/3 * * * * *"}, MaxRuns: 3})
	if err != nil || !created {
		t.Fatal(created, err)
	}
	if task.Tolerance != 300*time.Millisecond || task.Timebox != 1500*time.Millisecond || !task.NextRun.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("defaults: %+v", task)
	}
	up, err := e.s.Upcoming(ctx, task.ID, 10)
	if err != nil || len(up) != 3 || !up[2].Equal(t0.Add(9*time.Second)) {
		t.Fatalf("upcoming %v %v", up, err)
	}
	clk.RunUntil(t0.Add(3 * time.Minute))
	got := trail(t, e.store, task.ID)
	want := `00:00 TaskCreated
00:30 RunEnqueued 1 next=00:33 missed=9
00:30 RunStarted 1
00:30 RunCompleted 1 
01:00 RunEnqueued 2 next=01:03 missed=9
01:00 RunStarted 2
01:00 RunCompleted 2 
01:30 RunEnqueued 3 next=00:00 missed=9
01:30 TaskFinished
01:30 RunStarted 3
01:30 RunCompleted 3 
`
	if got != strings.ReplaceAll(want, "next=00:00", "next="+mmss(time.Time{})) {
		t.Fatalf("trail:\n%s", got)
	}
	task, _ = e.s.Task(ctx, task.ID)
	if task.Status != "finished" || !task.NextRun.IsZero() {
		t.Fatalf("after: %+v", task)
	}
	if up, _ := e.s.Upcoming(ctx, task.ID, 5); len(up) != 0 {
		t.Fatalf("a finished task has upcoming slots %v", up)
	}
}

// TestCreateRejectsBadSchedules: every rejection names the field and
// records nothing.
func TestCreateRejectsBadSchedules(t *testing.T) {
	clk := clock.NewVirtual(t0)
	e := newEnv(t, memStore(t), clk, nil, noop())
	defer stopNow(e.s)
	for _, c := range []struct {
		spec  scheduler.TaskSpec
		field string
		msg   string
	}{
		{scheduler.TaskSpec{Cron: []string{"0 24 * * *"}}, "cron", "field 2 (hour): 24 is above 23"},
		{scheduler.TaskSpec{Cron: []string{"0 0 30 2 *"}}, "cron", "never"},
		{scheduler.TaskSpec{Cron: []string{"CRON_TZ=Europe/Berlin 0 0 * * *"}}, "cron", "timezone"},
		{scheduler.TaskSpec{Cron: []string{"0 0 * * *"}, Timezone: "Nowhere/City"}, "timezone", "unknown"},
		{scheduler.TaskSpec{At: []time.Time{t0.Add(-time.Hour)}}, "at", "past"},
		{scheduler.TaskSpec{Cron: []string{"@daily"}, StartAt: t0.Add(48 * time.Hour), EndAt: t0.Add(24 * time.Hour)}, "end_at", "before start_at"},
		{scheduler.TaskSpec{Interval: time.Minute, Cron: []string{"@daily"}}, "schedule", "exactly one"},
		{scheduler.TaskSpec{Cron: []string{"@daily"}, DSTGap: "later"}, "dst_gap", "shift or skip"},
	} {
		c.spec.Name, c.spec.Owner, c.spec.Kind = "bad", "o", "noop"
		_, _, err := e.s.CreateTask(context.Background(), c.spec)
		var fe *scheduler.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(fe.Message, c.msg) || !errors.Is(err, scheduler.ErrInvalidSpec) {
			t.Errorf("%+v: %v", c.spec, err)
		}
	}
	if head := e.store.Head(); head != (events.Position{}) {
		t.Fatalf("something was recorded: head %v", head)
	}
}

// TestUpdateReschedules: a PATCH of the schedule is an event and nextRun
// is recomputed from the new schedule as of the update.
func TestUpdateReschedules(t *testing.T) {
	clk := clock.NewVirtual(t0)
	e := newEnv(t, memStore(t), clk, nil, noop())
	defer stopNow(e.s)
	ctx := context.Background()
	task, _, err := e.s.CreateTask(ctx, scheduler.TaskSpec{Name: "u", Owner: "o", Kind: "noop", Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ny := "America/New_York"
	task, err = e.s.UpdateTask(ctx, task.ID, scheduler.TaskUpdate{Cron: []string{"30 2 * * *"}, Timezone: &ny})
	if err != nil {
		t.Fatal(err)
	}
	// t0 is 2026-01-01 00:00 UTC = 2025-12-31 19:00 EST: next 02:30 EST = 07:30Z.
	if !task.NextRun.Equal(t0.Add(7*time.Hour+30*time.Minute)) || task.Interval != 0 || task.Timezone != ny || task.Timebox != 11*time.Hour+30*time.Minute { // half of the 23 h spring-forward day
		t.Fatalf("after update: %+v", task)
	}
	up, _ := e.s.Upcoming(ctx, task.ID, 1)
	if len(up) != 1 || up[0].Format(time.RFC3339) != "2026-01-01T02:30:00-05:00" {
		t.Fatalf("upcoming %v", up)
	}
	recs, _ := e.store.ReadStream(ctx, events.TaskStream(task.ID), 0, 0)
	if last := recs[len(recs)-1]; last.Type != "TaskUpdated" {
		t.Fatalf("last event %s", last.Type)
	}
}
