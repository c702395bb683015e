package scheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/scheduler/schedulertest"
)

// A Schedule value makes the same task as the flat fields it stands for.
func TestScheduleValueIsTheFlatFields(t *testing.T) {
	h := schedulertest.New(t, schedulertest.WithHandler("k", schedulertest.Script()))
	launch := schedulertest.DefaultStart.Add(48 * time.Hour)
	for _, c := range []struct {
		name  string
		value scheduler.Schedule
		flat  scheduler.TaskSpec
	}{
		{"every", scheduler.Every(time.Minute), scheduler.TaskSpec{Interval: time.Minute}},
		{"every, no tolerance", scheduler.Every(time.Minute).WithTolerance(0), scheduler.TaskSpec{Interval: time.Minute, ToleranceSet: true}},
		{"cron", scheduler.Cron("0 9 * * MON-FRI", "0 12 * * SAT").In("Europe/Berlin").OnDSTGap("skip").OnDSTOverlap("both"),
			scheduler.TaskSpec{Cron: []string{"0 9 * * MON-FRI", "0 12 * * SAT"}, Timezone: "Europe/Berlin", DSTGap: "skip", DSTOverlap: "both"}},
		{"at", scheduler.At(launch).WithTolerance(time.Second), scheduler.TaskSpec{At: []time.Time{launch}, Tolerance: time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			byValue := h.Create(scheduler.TaskSpec{Owner: "value", Name: c.name, Kind: "k", Schedule: c.value})
			c.flat.Owner, c.flat.Name, c.flat.Kind = "flat", c.name, "k"
			flat := h.Create(c.flat)
			if !byValue.Schedule().Equal(flat.Schedule()) || byValue.NextRun != flat.NextRun ||
				byValue.Tolerance != flat.Tolerance || byValue.Timebox != flat.Timebox {
				t.Fatalf("by value %+v\nflat     %+v", byValue, flat)
			}
			again := h.Create(scheduler.TaskSpec{Owner: "again", Name: c.name, Kind: "k", Schedule: flat.Schedule()})
			if !again.Schedule().Equal(flat.Schedule()) {
				t.Fatalf("Task.Schedule does not make the task again: %+v, want %+v", again.Schedule(), flat.Schedule())
			}
		})
	}
	if got := h.Task(scheduler.TaskID("value", "every, no tolerance")).Tolerance; got != 0 {
		t.Fatalf("WithTolerance(0): tolerance %s", got)
	}
	if got := h.Task(scheduler.TaskID("value", "every")).Tolerance; got != 5*time.Second {
		t.Fatalf("Every without tolerance: %s, want the default 5s", got)
	}
}

func TestScheduleValueRefusals(t *testing.T) {
	h := schedulertest.New(t, schedulertest.WithHandler("k", schedulertest.Script()))
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		spec  scheduler.TaskSpec
		field string
	}{
		{"both", scheduler.TaskSpec{Schedule: scheduler.Every(time.Minute), Interval: time.Minute}, "schedule"},
		{"both zones", scheduler.TaskSpec{Schedule: scheduler.Cron("@daily"), Timezone: "UTC"}, "schedule"},
		{"both tolerances", scheduler.TaskSpec{Schedule: scheduler.Every(time.Minute).WithTolerance(0), Tolerance: time.Second}, "tolerance"},
		{"no expression", scheduler.TaskSpec{Schedule: scheduler.Cron()}, "cron"},
		{"no instant", scheduler.TaskSpec{Schedule: scheduler.At()}, "at"},
		{"tolerance alone", scheduler.TaskSpec{Schedule: scheduler.Schedule{}.WithTolerance(0)}, "schedule"},
	} {
		c.spec.Owner, c.spec.Name, c.spec.Kind = "o", c.name, "k"
		_, _, err := h.Scheduler().CreateTask(ctx, c.spec)
		var fe *scheduler.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v, want a FieldError for %s", c.name, err, c.field)
		}
	}
	task := h.Create(scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "k", Schedule: scheduler.Every(time.Minute)})
	sc := scheduler.Cron("@daily")
	_, err := h.Scheduler().UpdateTask(ctx, task.ID, scheduler.TaskUpdate{Schedule: &sc, Interval: new(time.Hour)})
	var fe *scheduler.FieldError
	if !errors.As(err, &fe) || fe.Field != "schedule" {
		t.Errorf("update with both: %v", err)
	}
}

// An update's Schedule replaces the schedule as written; the same schedule
// with another tolerance changes only the tolerance.
func TestUpdateWithScheduleValue(t *testing.T) {
	h := schedulertest.New(t, schedulertest.WithHandler("k", schedulertest.Script()))
	ctx := context.Background()
	task := h.Create(scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "k", Schedule: scheduler.Cron("0 9 * * *").In("Europe/Berlin")})

	daily := scheduler.Cron("0 6 * * *") // in UTC: the zone goes with the rest of the schedule
	task, err := h.Scheduler().UpdateTask(ctx, task.ID, scheduler.TaskUpdate{Schedule: &daily})
	if err != nil {
		t.Fatal(err)
	}
	if task.Timezone != "" || task.Cron[0] != "0 6 * * *" || !task.NextRun.Equal(schedulertest.DefaultStart.Add(6*time.Hour)) {
		t.Fatalf("after the update: %+v", task)
	}
	exact := task.Schedule().WithTolerance(0)
	after, err := h.Scheduler().UpdateTask(ctx, task.ID, scheduler.TaskUpdate{Schedule: &exact})
	if err != nil {
		t.Fatal(err)
	}
	if after.Tolerance != 0 || !after.NextRun.Equal(task.NextRun) || after.Version != task.Version+1 {
		t.Fatalf("tolerance only: %+v (before %+v)", after, task)
	}
}
