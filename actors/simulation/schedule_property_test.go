package simulation_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/simulation"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/task/schedule"
	"github.com/cronactor/cronactor/events"
)

// randomScheduleScenario draws cron and at tasks with random windows,
// max_runs, jitter, queue delays and durations, on random ticks.
func randomScheduleScenario(t *testing.T, rng *rand.Rand) (*simulation.Scenario, time.Duration) {
	secs := func(lo, hi int) time.Duration { return time.Duration(lo+rng.Intn(hi-lo+1)) * time.Second }
	sc := &simulation.Scenario{Tick: []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second}[rng.Intn(4)],
		Until: secs(120, 400)}
	crons := [][]string{{"*/7 * * * * *"}, {"*/15 * * * * *"}, {"0,20,25 * * * * *"}, {"*/3 * * * * *"},
		{"10-50/10 * * * * *", "5 * * * * *"}, {"* * * * *"}}
	maxDelay := time.Duration(0)
	for i := range 1 + rng.Intn(3) {
		ts := simulation.TaskScript{Name: fmt.Sprintf("S%d", i), CreateAt: secs(0, 30)}
		if rng.Intn(4) == 0 {
			for range 1 + rng.Intn(5) {
				ts.At = append(ts.At, ts.CreateAt+secs(1, 300))
			}
		} else {
			ts.Cron = crons[rng.Intn(len(crons))]
		}
		if rng.Intn(3) == 0 {
			ts.MaxRuns = 1 + rng.Intn(6)
		}
		if rng.Intn(3) == 0 {
			ts.Jitter = secs(1, 4)
		}
		if rng.Intn(4) == 0 {
			ts.StartAt, ts.HasStartAt = ts.CreateAt+secs(0, 60), true
		}
		if rng.Intn(4) == 0 {
			ts.EndAt, ts.HasEndAt = ts.CreateAt+secs(90, 300), true
		}
		if rng.Intn(3) == 0 {
			ts.MaxWaiting = 1 + rng.Intn(2) // else the default, 3 (R18)
		}
		spec := rules.Spec{Name: ts.Name, Owner: simulation.Owner, Kind: simulation.Kind,
			Schedule: events.Schedule{Cron: ts.Cron}, Window: events.Window{MaxRuns: ts.MaxRuns, Jitter: events.Duration(ts.Jitter)}}
		for _, a := range ts.At {
			spec.Schedule.At = append(spec.Schedule.At, simulation.Epoch.Add(a))
		}
		if ts.HasStartAt {
			spec.Window.StartAt = events.TimePtr(simulation.Epoch.Add(ts.StartAt))
		}
		if ts.HasEndAt {
			spec.Window.EndAt = events.TimePtr(simulation.Epoch.Add(ts.EndAt))
		}
		prepared, err := rules.Prepare(spec, simulation.Epoch.Add(ts.CreateAt))
		if err != nil {
			continue // a window with no slot: the scheduler refuses it
		}
		ts.Tolerance, ts.Timebox = prepared.Tolerance, prepared.Timebox
		for range rng.Intn(10) {
			r := simulation.RunScript{StartDelay: secs(0, 20), Duration: time.Duration(rng.Int63n(int64(2 * ts.Timebox))).Truncate(time.Millisecond)}
			if rng.Intn(6) == 0 {
				r.Fail = "scripted failure"
			}
			maxDelay = max(maxDelay, r.StartDelay)
			ts.Runs = append(ts.Runs, r)
		}
		sc.Tasks = append(sc.Tasks, ts)
	}
	if len(sc.Tasks) == 0 {
		return randomScheduleScenario(t, rng)
	}
	return sc, maxDelay
}

// Random cron and at scenarios keep R10 and R11: every enqueue is for a
// slot of the schedule, the slots passed over are the ones counted missed,
// nothing is enqueued after TaskFinished or past max_runs, two starts are
// never closer than the later run's spacing minus the tolerance, and R9,
// R18 (checkInvariants: never more runs waiting than max_waiting) and
// replay hold as for interval tasks — a run enqueued late for a backlog is
// for the slot kept meanwhile, with the slots passed over counted missed.
func TestPropertyRandomSchedules(t *testing.T) {
	n := 30
	if testing.Short() {
		n = 8
	}
	finished, missed, dropped, backlog := 0, 0, 0, 0
	for seed := range n {
		rng := rand.New(rand.NewSource(int64(1000 + seed)))
		sc, maxDelay := randomScheduleScenario(t, rng)
		res, err := simulation.Run(context.Background(), sc, simulation.Options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			checkInvariants(t, sc, res, maxDelay)
			for i, id := range res.IDs {
				task := sc.Tasks[i]
				spec := rules.Spec{Schedule: events.Schedule{Cron: task.Cron}, Window: events.Window{MaxRuns: task.MaxRuns}}
				for _, a := range task.At {
					spec.Schedule.At = append(spec.Schedule.At, simulation.Epoch.Add(a))
				}
				if task.HasStartAt {
					spec.Window.StartAt = events.TimePtr(simulation.Epoch.Add(task.StartAt))
				}
				if task.HasEndAt {
					spec.Window.EndAt = events.TimePtr(simulation.Epoch.Add(task.EndAt))
				}
				c, err := rules.Compiled(spec)
				if err != nil {
					t.Fatal(err)
				}
				var lastStart time.Time
				spacing := map[int]time.Duration{}
				enqueues, done := 0, false
				var prevSlot time.Time
				for _, r := range res.Log {
					if tid, _ := events.TaskIDFromStream(r.Stream); tid != id {
						continue
					}
					e, err := events.Decode(r)
					if err != nil {
						t.Fatal(err)
					}
					switch e := e.(type) {
					case events.RunEnqueued:
						enqueues++
						if done {
							t.Errorf("%s run %d enqueued after TaskFinished", task.Name, e.Run)
						}
						if task.MaxRuns > 0 && enqueues > task.MaxRuns {
							t.Errorf("%s: %d runs, max_runs %d", task.Name, enqueues, task.MaxRuns)
						}
						if c.Next(e.Slot.Add(-time.Nanosecond)) != e.Slot || !e.Slot.After(prevSlot) {
							t.Errorf("%s run %d: slot %s is not the schedule's next slot after %s", task.Name, e.Run, e.Slot, prevSlot)
						}
						count := 0
						for s := range c.Slots(e.Slot) {
							if s.After(r.At) {
								break
							}
							count++
						}
						if count != e.Missed {
							t.Errorf("%s run %d at %s: %d slots passed over after %s, %d counted missed", task.Name, e.Run, r.At, count, e.Slot, e.Missed)
						}
						missed += e.Missed
						if e.Reason == events.EnqueueBacklog {
							backlog++
						}
						prevSlot = e.Slot
						// R11, worked out here from the schedule: the time
						// from the slot before, between the jittered
						// instants; none for the first slot.
						want := time.Duration(0)
						if p := c.Prev(e.Slot); enqueues > 1 && !p.IsZero() {
							jit := func(x time.Time) time.Time { return x.Add(schedule.Jitter(id, x, task.Jitter)) }
							want = jit(e.Slot).Sub(jit(p))
						}
						if e.Spacing.D() != want {
							t.Errorf("%s run %d: spacing %s recorded, %s from the schedule", task.Name, e.Run, e.Spacing, want)
						}
						spacing[e.Run] = want
					case events.TaskFinished:
						done = true
						finished++
					case events.RunStarted:
						if !lastStart.IsZero() && spacing[e.Run] > 0 && r.At.Sub(lastStart) < spacing[e.Run]-task.Tolerance {
							t.Errorf("%s run %d started %s after the last start; spacing %s, tolerance %s", task.Name, e.Run, r.At.Sub(lastStart), spacing[e.Run], task.Tolerance)
						}
						lastStart = r.At
					case events.RunDropped:
						dropped++
					}
				}
			}
		})
	}
	if finished == 0 || missed == 0 || dropped == 0 || backlog == 0 {
		t.Errorf("the random scenarios finished %d tasks, missed %d slots, dropped %d runs and enqueued %d for a backlog: some rule went untested",
			finished, missed, dropped, backlog)
	}
}
