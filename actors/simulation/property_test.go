package simulation_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/simulation"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// randomScenario draws tasks with random intervals, tolerances, timeboxes,
// queue delays, durations, failures and pauses. maxDelay bounds every
// pick-up delay, so each run's outcome is due by enqueue + maxDelay +
// timebox.
func randomScenario(rng *rand.Rand) (*simulation.Scenario, time.Duration) {
	secs := func(lo, hi int) time.Duration { return time.Duration(lo+rng.Intn(hi-lo+1)) * time.Second }
	sc := &simulation.Scenario{Tick: []time.Duration{time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second}[rng.Intn(4)],
		Until: secs(180, 600)}
	maxDelay := time.Duration(0)
	for i := range 1 + rng.Intn(3) {
		iv := secs(2, 90)
		t := simulation.TaskScript{Name: fmt.Sprintf("T%d", i), Interval: iv,
			Tolerance: time.Duration(1+rng.Int63n(int64(iv/2)-1)) * time.Nanosecond, Timebox: time.Duration(1 + rng.Int63n(int64(iv)))}
		t.Tolerance = t.Tolerance.Truncate(time.Millisecond) + time.Millisecond
		if 2*t.Tolerance >= iv {
			t.Tolerance = iv/2 - time.Millisecond
		}
		if rng.Intn(6) == 0 {
			t.Tolerance = 0 // explicit zero: starts at least a whole interval apart
		}
		t.Timebox = max(t.Timebox.Truncate(time.Second), time.Second)
		t.CreateAt = secs(0, 60)
		t.FirstRun = t.CreateAt + secs(0, 120)
		for range rng.Intn(12) {
			r := simulation.RunScript{StartDelay: secs(0, 120), Duration: secs(0, int(2*t.Timebox/time.Second))}
			switch rng.Intn(8) {
			case 0:
				r.Fail = "scripted failure"
			case 1:
				r.Panic = "scripted panic"
			case 2:
				r.Checkpoint = fmt.Sprintf(`{"n":%d}`, rng.Intn(100))
			}
			maxDelay = max(maxDelay, r.StartDelay)
			t.Runs = append(t.Runs, r)
		}
		at := t.CreateAt
		for range rng.Intn(3) {
			at += secs(1, 120)
			t.PauseAt = append(t.PauseAt, at)
			at += secs(1, 120)
			t.ResumeAt = append(t.ResumeAt, at)
		}
		if rng.Intn(5) == 0 {
			t.HasDelete, t.DeleteAt = true, at+secs(1, 120)
		}
		if rng.Intn(3) == 0 {
			t.MaxWaiting = 1 + rng.Intn(4) // else the default, 3 (R18)
		}
		sc.Tasks = append(sc.Tasks, t)
	}
	return sc, maxDelay
}

type runFacts struct {
	enqueued   events.Recorded
	started    *events.Recorded
	deadline   time.Time
	outcomes   []events.Recorded
	hasEnqueue bool
}

// enqueue is the run's RunEnqueued.
func (f *runFacts) enqueue() events.RunEnqueued {
	e, _ := events.Decode(f.enqueued)
	enq, _ := e.(events.RunEnqueued)
	return enq
}

// attempt is the run's try of its slot (R13), trigger its trigger (R15).
func (f *runFacts) attempt() int    { return max(f.enqueue().Attempt, 1) }
func (f *runFacts) trigger() string { return f.enqueue().Trigger }

// checkInvariants checks the rules on a finished simulation: scheduled
// first attempts never start closer than interval - tolerance (R3; retries
// and manual triggers are not checked against, R13, R15), no two runs of a
// task ever running at once (R12), at most one outcome per run and exactly
// one once it is due, whether it came from a slot, a retry or a trigger
// (R9), never more runs of a task waiting than its max_waiting, and only
// late runs enqueued for a backlog (R18), and replaying each stream gives
// the state the live actor held.
func checkInvariants(t *testing.T, sc *simulation.Scenario, res *simulation.Result, maxDelay time.Duration) map[uuid.UUID]map[int]*runFacts {
	t.Helper()
	until := simulation.Epoch.Add(sc.Until)
	states := map[uuid.UUID]rules.State{}
	facts := map[uuid.UUID]map[int]*runFacts{}
	lastStart := map[uuid.UUID]time.Time{}
	running := map[uuid.UUID]map[int]bool{} // task → runs started without an outcome yet
	spec := map[uuid.UUID]simulation.TaskScript{}
	for i, id := range res.IDs {
		spec[id] = sc.Tasks[i]
		facts[id] = map[int]*runFacts{}
	}
	for _, r := range res.Log {
		id, err := events.TaskIDFromStream(r.Stream)
		if err != nil {
			t.Fatal(err)
		}
		e, err := events.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		states[id] = rules.Evolve(states[id], r.Metadata, e)
		run := func(n int) *runFacts {
			f := facts[id][n]
			if f == nil {
				f = &runFacts{}
				facts[id][n] = f
			}
			return f
		}
		switch e := e.(type) {
		case events.RunEnqueued:
			if st := states[id]; len(st.Waiting()) > st.Spec.WaitingBound() {
				t.Errorf("%s has %d runs waiting after run %d was enqueued at %s; max_waiting is %d",
					spec[id].Name, len(st.Waiting()), e.Run, r.At.Sub(simulation.Epoch), st.Spec.WaitingBound())
			}
			if e.Reason == events.EnqueueBacklog && !e.Due.Before(r.At) {
				t.Errorf("%s run %d enqueued at %s for a backlog, but it was due only then", spec[id].Name, e.Run, r.At.Sub(simulation.Epoch))
			}
			f := run(e.Run)
			if f.hasEnqueue {
				t.Errorf("%s run %d enqueued twice", spec[id].Name, e.Run)
			}
			f.enqueued, f.hasEnqueue = r, true
		case events.RunStarted:
			task := spec[id]
			f := run(e.Run)
			if first := f.hasEnqueue && f.attempt() == 1 && f.trigger() == ""; first {
				if prev, ok := lastStart[id]; ok && task.Interval > 0 && r.At.Sub(prev) < task.Interval-task.Tolerance {
					t.Errorf("%s run %d started %s after the previous start, under %s - %s", task.Name, e.Run, r.At.Sub(prev), task.Interval, task.Tolerance)
				}
				lastStart[id] = r.At
			}
			if running[id] == nil {
				running[id] = map[int]bool{}
			}
			for other := range running[id] {
				t.Errorf("%s run %d started at %s while run %d was running (R12)", task.Name, e.Run, r.At.Sub(simulation.Epoch), other)
			}
			running[id][e.Run] = true
			rr := r
			if f.started != nil {
				t.Errorf("%s run %d started twice", task.Name, e.Run)
			}
			f.started, f.deadline = &rr, e.Deadline
		case events.RunCompleted:
			run(e.Run).outcomes = append(run(e.Run).outcomes, r)
			delete(running[id], e.Run)
		case events.RunFailed:
			run(e.Run).outcomes = append(run(e.Run).outcomes, r)
			delete(running[id], e.Run)
		case events.RunDropped:
			run(e.Run).outcomes = append(run(e.Run).outcomes, r)
		case events.RunForcedEnd:
			run(e.Run).outcomes = append(run(e.Run).outcomes, r)
			delete(running[id], e.Run)
		}
	}
	for id, runs := range facts {
		task := spec[id]
		for n, f := range runs {
			if !f.hasEnqueue {
				t.Errorf("%s run %d has events but was never enqueued", task.Name, n)
				continue
			}
			if len(f.outcomes) > 1 {
				t.Errorf("%s run %d has %d outcomes", task.Name, n, len(f.outcomes))
			}
			due := f.enqueued.At.Add(maxDelay + task.Timebox)
			if len(f.outcomes) == 0 && !due.After(until) {
				t.Errorf("%s run %d enqueued at %s has no outcome by %s", task.Name, n, f.enqueued.At.Sub(simulation.Epoch), sc.Until)
			}
		}
	}
	for i, live := range res.Live {
		st := states[res.IDs[i]]
		if live.ID != res.IDs[i] {
			continue // never created in this scenario's span
		}
		if !live.NextRun.Equal(st.NextRun) || !live.LastRun.Equal(st.LastRun) || live.Status != st.Status.String() ||
			live.Runs != st.Runs || !bytes.Equal(live.Checkpoint, st.Checkpoint) || live.Version != st.Version {
			t.Errorf("%s: replayed state differs from the live one:\nlive   %+v\nreplay %+v", res.Tasks[i], live, st)
		}
	}
	return facts
}

// Many random scenarios keep the scheduling rules.
func TestPropertyRandomScenarios(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 10
	}
	seen := map[string]int{}
	for seed := range n {
		rng := rand.New(rand.NewSource(int64(seed)))
		sc, maxDelay := randomScenario(rng)
		res, err := simulation.Run(context.Background(), sc, simulation.Options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkInvariants(t, sc, res, maxDelay) })
		tally(seen, res)
	}
	// The random scenarios must reach every outcome, or the checks above
	// prove little.
	for _, kind := range []string{"RunStarted", "RunCompleted", "RunFailed", "RunDropped/too_soon", "RunDropped/paused",
		"RunForcedEnd/timebox_exceeded", "TaskPaused", "TaskResumed", "RunEnqueued/backlog"} {
		if seen[kind] == 0 {
			t.Errorf("no %s in %d random scenarios: %v", kind, n, seen)
		}
	}
}

// tally counts event types (with the reason of drops and forced ends).
func tally(seen map[string]int, res *simulation.Result) {
	for _, r := range res.Log {
		e, err := events.Decode(r)
		if err != nil {
			continue
		}
		key := r.Type
		switch e := e.(type) {
		case events.RunDropped:
			key += "/" + e.Reason
		case events.RunForcedEnd:
			key += "/" + e.Reason
		case events.RunEnqueued:
			if e.Reason != "" {
				key += "/" + e.Reason
			}
		}
		seen[key]++
	}
}
