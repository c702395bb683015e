package simulation_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/simulation"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// withPolicies adds random run policies (R12–R16) to a random scenario's
// tasks: retries, the missed-run policy, start deadlines, heartbeat
// timeouts, manual triggers while the task is active, and fatal failures
// and heartbeats in the run scripts. Every value is within the scheduler's
// limits (docs/policies.md).
func withPolicies(sc *simulation.Scenario, rng *rand.Rand) {
	secs := func(lo, hi int) time.Duration { return time.Duration(lo+rng.Intn(hi-lo+1)) * time.Second }
	for i := range sc.Tasks {
		t := &sc.Tasks[i]
		if rng.Intn(3) > 0 {
			initial := secs(1, 10)
			t.Retry = &scheduler.RetryPolicy{MaxAttempts: 1 + rng.Intn(4), InitialBackoff: initial,
				MaxBackoff: initial + secs(0, 30), Multiplier: []float64{1, 1.5, 2, 3}[rng.Intn(4)]}
		}
		if rng.Intn(3) == 0 {
			t.MissedRunPolicy = events.MissedSkip
		}
		if rng.Intn(4) == 0 {
			t.MissedAfter = secs(1, 60)
		}
		if rng.Intn(3) == 0 {
			t.StartDeadline = max(time.Duration(rng.Int63n(int64(t.Timebox))).Truncate(time.Second), time.Second)
		}
		if rng.Intn(3) == 0 {
			t.HeartbeatTimeout = max(time.Duration(rng.Int63n(int64(t.Timebox))).Truncate(time.Second), time.Second)
		}
		for j := range t.Runs {
			r := &t.Runs[j]
			if r.Fail != "" && rng.Intn(3) == 0 {
				r.Fatal = true
			}
			if rng.Intn(3) == 0 {
				r.HeartbeatEvery = secs(1, 10)
			}
		}
		// Triggers only while the task is active: a paused, finished or
		// deleted task refuses them, and so does one at its bound of
		// waiting runs (R18), which a trigger's task is given room to
		// avoid; a refusal stops the scenario.
		if len(t.At) > 0 || t.MaxRuns > 0 || t.HasEndAt || rng.Intn(3) == 0 {
			continue
		}
		t.MaxWaiting = 100
		at := t.CreateAt
		for range rng.Intn(4) {
			at += secs(0, 90)
			if at > sc.Until || (t.HasDelete && at >= t.DeleteAt) || paused(*t, at) {
				break
			}
			t.TriggerAt = append(t.TriggerAt, at)
		}
	}
}

// paused says the task is paused at an action at instant at: the pause
// comes before a trigger at the same instant, the resume too.
func paused(t simulation.TaskScript, at time.Duration) bool {
	for k, p := range t.PauseAt {
		if at >= p && (k >= len(t.ResumeAt) || at < t.ResumeAt[k]) {
			return true
		}
	}
	return false
}

// checkPolicies checks the run policies on a finished simulation (beyond
// checkInvariants): a retry is of a failed or forced-ended run whose
// outcome named its retry time, of the same slot, with the next attempt,
// never past max_attempts, enqueued at or after that time, and that time
// is not after the task's next slot (R13); a failure with attempts left
// that is not fatal either names its retry or says why none is made, one
// that is fatal or the last attempt names none; a retry or a trigger moves
// neither nextRun nor lastRun (R13, R15); a too_late drop asks after slot +
// start_deadline, a heartbeat_timeout forced end comes at least
// heartbeat_timeout after the start (R14, R16). It returns what it saw.
func checkPolicies(t *testing.T, sc *simulation.Scenario, res *simulation.Result) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for i, id := range res.IDs {
		task := sc.Tasks[i]
		maxAttempts := 1
		if task.Retry != nil {
			maxAttempts = task.Retry.MaxAttempts
		}
		var st rules.State
		type facts struct {
			enq      events.RunEnqueued
			startAt  time.Time
			retryAt  *time.Time
			outcome  string
			retried  int
			noRetry  string
			fatal    bool
			failedAt time.Time
		}
		runs := map[uuid.UUID]*facts{}
		var lastFirst time.Time // the start of the latest scheduled first attempt
		for _, r := range res.Log {
			if tid, _ := events.TaskIDFromStream(r.Stream); tid != id {
				continue
			}
			e, err := events.Decode(r)
			if err != nil {
				t.Fatal(err)
			}
			prev := st
			st = rules.Evolve(st, r.Metadata, e)
			at := r.At.Sub(res.Start)
			retryOutcome := func(runID uuid.UUID, kind string, retryAt *time.Time, noRetry string, fatal bool) {
				f := runs[runID]
				if f == nil {
					t.Errorf("%s: %s at %s of a run never enqueued", task.Name, kind, at)
					return
				}
				f.outcome, f.retryAt, f.noRetry, f.fatal, f.failedAt = kind, retryAt, noRetry, fatal, r.At
				attempt := max(f.enq.Attempt, 1)
				switch {
				case retryAt != nil && (fatal || attempt >= maxAttempts):
					t.Errorf("%s run %d (attempt %d of %d, fatal %v) %s at %s names a retry at %s", task.Name, f.enq.Run, attempt, maxAttempts, fatal, kind, at, retryAt.Sub(res.Start))
				case retryAt != nil && !prev.NextRun.IsZero() && retryAt.After(prev.NextRun):
					t.Errorf("%s run %d %s at %s: retry at %s after the next slot %s", task.Name, f.enq.Run, kind, at, retryAt.Sub(res.Start), prev.NextRun.Sub(res.Start))
				case retryAt != nil && retryAt.Before(r.At):
					t.Errorf("%s run %d %s at %s: retry at %s, before the failure", task.Name, f.enq.Run, kind, at, retryAt.Sub(res.Start))
				case retryAt == nil && noRetry == "" && !fatal && attempt < maxAttempts && prev.Status == rules.StatusActive:
					t.Errorf("%s run %d (attempt %d of %d) %s at %s: neither a retry nor why not", task.Name, f.enq.Run, attempt, maxAttempts, kind, at)
				}
				if retryAt != nil {
					seen["retry"]++
				}
				if noRetry != "" {
					seen["no_retry"]++
				}
			}
			switch e := e.(type) {
			case events.RunEnqueued:
				runs[e.RunID] = &facts{enq: e}
				if e.Trigger == events.TriggerManual || e.Attempt > 1 {
					if !st.NextRun.Equal(prev.NextRun) || !st.LastRun.Equal(prev.LastRun) {
						t.Errorf("%s run %d (attempt %d, trigger %q) enqueued at %s moved nextRun %s → %s or lastRun %s → %s",
							task.Name, e.Run, e.Attempt, e.Trigger, at, prev.NextRun, st.NextRun, prev.LastRun, st.LastRun)
					}
				}
				if e.Trigger != "" {
					seen["trigger"]++
					if e.Attempt > 1 || e.RetryOf != nil {
						t.Errorf("%s run %d: a trigger that retries", task.Name, e.Run)
					}
				}
				if e.Attempt <= 1 {
					if e.RetryOf != nil {
						t.Errorf("%s run %d: retry_of on a first attempt", task.Name, e.Run)
					}
					break
				}
				seen["attempt"]++
				if e.Attempt > maxAttempts {
					t.Errorf("%s run %d: attempt %d beyond max_attempts %d", task.Name, e.Run, e.Attempt, maxAttempts)
				}
				if e.RetryOf == nil {
					t.Errorf("%s run %d: attempt %d retries nothing", task.Name, e.Run, e.Attempt)
					break
				}
				of := runs[*e.RetryOf]
				switch {
				case of == nil:
					t.Errorf("%s run %d retries a run never enqueued", task.Name, e.Run)
				case of.retryAt == nil:
					t.Errorf("%s run %d retries run %d, whose %q named no retry", task.Name, e.Run, of.enq.Run, of.outcome)
				case r.At.Before(*of.retryAt):
					t.Errorf("%s run %d enqueued at %s, before its retry time %s", task.Name, e.Run, at, of.retryAt.Sub(res.Start))
				case max(of.enq.Attempt, 1)+1 != e.Attempt:
					t.Errorf("%s run %d: attempt %d retries attempt %d", task.Name, e.Run, e.Attempt, max(of.enq.Attempt, 1))
				case !of.enq.Slot.Equal(e.Slot):
					t.Errorf("%s run %d: a retry for slot %s of a run of slot %s", task.Name, e.Run, e.Slot, of.enq.Slot)
				}
				if of != nil {
					if of.retried++; of.retried > 1 {
						t.Errorf("%s run %d retried %d times", task.Name, of.enq.Run, of.retried)
					}
				}
			case events.RunStarted:
				if f := runs[e.RunID]; f != nil {
					f.startAt = r.At
					if f.enq.Attempt <= 1 && f.enq.Trigger == "" {
						// R11 for cron and at tasks (checkInvariants checks
						// interval tasks): the run's spacing less the
						// tolerance since the last scheduled first attempt.
						if sp := f.enq.Spacing.D(); task.Interval == 0 && sp > 0 && !lastFirst.IsZero() && r.At.Sub(lastFirst) < sp-task.Tolerance {
							t.Errorf("%s run %d started %s after the last first attempt; spacing %s, tolerance %s", task.Name, e.Run, r.At.Sub(lastFirst), sp, task.Tolerance)
						}
						lastFirst = r.At
					}
					if (f.enq.Attempt > 1 || f.enq.Trigger != "") && !st.LastRun.Equal(prev.LastRun) {
						t.Errorf("%s run %d (attempt %d, trigger %q) started at %s and moved lastRun", task.Name, e.Run, f.enq.Attempt, f.enq.Trigger, at)
					}
				}
			case events.RunFailed:
				retryOutcome(e.RunID, "RunFailed", e.RetryAt, e.NoRetry, e.Fatal)
				if e.Fatal {
					seen["fatal"]++
				}
			case events.RunForcedEnd:
				retryOutcome(e.RunID, "RunForcedEnd/"+e.Reason, e.RetryAt, e.NoRetry, false)
				seen[e.Reason]++
				if f := runs[e.RunID]; f != nil && e.Reason == events.ForcedHeartbeat {
					if task.HeartbeatTimeout == 0 || r.At.Sub(f.startAt) < task.HeartbeatTimeout {
						t.Errorf("%s run %d forced to end for its heartbeat at %s, started at %s; heartbeat_timeout %s",
							task.Name, e.Run, at, f.startAt.Sub(res.Start), task.HeartbeatTimeout)
					}
				}
			case events.RunDropped:
				seen[e.Reason]++
				if f := runs[e.RunID]; f != nil && e.Reason == events.DropTooLate {
					if task.StartDeadline == 0 || !r.At.After(f.enq.Slot.Add(task.StartDeadline)) {
						t.Errorf("%s run %d dropped too_late at %s; slot %s, start_deadline %s", task.Name, e.Run, at, f.enq.Slot.Sub(res.Start), task.StartDeadline)
					}
				}
			default:
				if r.Type == "SlotsMissed" {
					seen["skip"]++
					if task.MissedRunPolicy != events.MissedSkip {
						t.Errorf("%s skipped slots at %s, but its missed_run_policy is %q", task.Name, at, task.MissedRunPolicy)
					}
				}
			}
		}
	}
	return seen
}

// Random scenarios with run policies keep every rule: the invariants of
// every scenario (checkInvariants: one outcome per run however it came to
// be, R12, first attempts spaced, R18, replay) and the policies' own
// (checkPolicies).
func TestPropertyRandomPolicies(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 12
	}
	seen := map[string]int{}
	for seed := range n {
		rng := rand.New(rand.NewSource(int64(5000 + seed)))
		var sc *simulation.Scenario
		var maxDelay time.Duration
		if seed%4 == 3 {
			sc, maxDelay = randomScheduleScenario(t, rng)
		} else {
			sc, maxDelay = randomScenario(rng)
		}
		withPolicies(sc, rng)
		res, err := simulation.Run(context.Background(), sc, simulation.Options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			checkInvariants(t, sc, res, maxDelay)
			for k, v := range checkPolicies(t, sc, res) {
				seen[k] += v
			}
		})
		tally(seen, res)
	}
	// The random scenarios must reach every policy, or the checks above
	// prove little.
	t.Logf("seen: %v", seen)
	for _, kind := range []string{"retry", "no_retry", "attempt", "trigger", "fatal", "skip",
		"RunDropped/overlap", "RunDropped/too_late", "RunForcedEnd/heartbeat_timeout"} {
		if seen[kind] == 0 {
			t.Errorf("no %s in %d random scenarios: %v", kind, n, seen)
		}
	}
}
