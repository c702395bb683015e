package rules_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
)

// TestPolicyInvariants drives tasks with random run policies through random
// commands (ticks, starts, outcomes of every kind, heartbeat timeouts,
// triggers, pauses and resumes) and checks, on every decision, the
// invariants of R12–R16:
//   - no two runs of the task are running at once (R12);
//   - two scheduled first attempts never start closer than their spacing −
//     tolerance (R3, as retries and triggers are not held to it and do not
//     move lastRun);
//   - a retry chain never exceeds max_attempts, and a retry never falls due
//     after the next slot in force at the failure (R13);
//   - every enqueued run — slot, retry or trigger — ends in exactly one
//     outcome once the task is left to drain (R9).
func TestPolicyInvariants(t *testing.T) {
	seen := map[string]int{}
	for seed := uint64(1); seed <= 200; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { policyRun(t, rand.New(rand.NewPCG(seed, 14)), seen) })
	}
	// The runs must reach every case the invariants are about, or they
	// prove nothing.
	for _, k := range []string{"drop overlap", "drop too_late", "drop too_soon", "drop paused", "retry 2", "retry 3",
		"manual", "SlotsMissed", "forced heartbeat_timeout", "retry of a forced end", "no retry"} {
		if seen[k] == 0 {
			t.Errorf("no run reached %q: %v", k, seen)
		}
	}
}

// kind names what an event is an instance of, for TestPolicyInvariants'
// coverage.
func kind(e events.Event) []string {
	switch e := e.(type) {
	case events.RunDropped:
		return []string{"drop " + e.Reason}
	case events.RunForcedEnd:
		if e.RetryAt != nil {
			return []string{"forced " + e.Reason, "retry of a forced end"}
		}
		return []string{"forced " + e.Reason}
	case events.RunFailed:
		if e.NoRetry != "" {
			return []string{"no retry"}
		}
	case events.RunEnqueued:
		if e.Trigger != "" {
			return []string{e.Trigger}
		}
		if e.RetryOf != nil {
			return []string{fmt.Sprint("retry ", e.Attempt)}
		}
	case events.SlotsMissed:
		return []string{"SlotsMissed"}
	}
	return nil
}

func policyRun(t *testing.T, rnd *rand.Rand, seen map[string]int) {
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	iv := sec(20 + rnd.IntN(100))
	spec := rules.Spec{Name: "A", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(iv)},
		MaxWaiting: 1 + rnd.IntN(3)}
	spec = rules.Defaults(spec)
	p := &spec.Policy
	if rnd.IntN(4) > 0 {
		ib := sec(1 + rnd.IntN(20))
		p.Retry = &events.Retry{MaxAttempts: 1 + rnd.IntN(5), InitialBackoff: events.Duration(ib),
			MaxBackoff: events.Duration(ib + sec(rnd.IntN(40))), Multiplier: 1 + rnd.Float64()*2}
	}
	if rnd.IntN(2) == 0 {
		p.MissedRunPolicy = events.MissedSkip
	}
	if rnd.IntN(2) == 0 {
		p.StartDeadline = events.Duration(sec(1 + rnd.IntN(int(spec.Timebox/time.Second))))
	}
	if rnd.IntN(2) == 0 {
		p.HeartbeatTimeout = events.Duration(sec(1 + rnd.IntN(int(spec.Timebox/time.Second))))
	}
	var (
		s         rules.State
		now       = t0
		outcomes  = map[int]int{} // run number → outcomes recorded
		enqueued  = map[int]bool{}
		lastFirst time.Time
	)
	decide := func(cmd rules.Command) []events.Event {
		t.Helper()
		evs, err := rules.Decide(s, cmd, now)
		if err != nil {
			return nil
		}
		for i, e := range evs {
			switch e := e.(type) {
			case events.RunEnqueued:
				enqueued[e.Run] = true
				if e.RetryOf != nil && (p.Retry == nil || e.Attempt > p.Retry.MaxAttempts) {
					t.Fatalf("%s: retry run %d is attempt %d, max_attempts %+v", now.Sub(t0), e.Run, e.Attempt, p.Retry)
				}
			case events.RunStarted:
				r, _ := s.Run(e.RunID)
				if r.First() {
					if !lastFirst.IsZero() && now.Sub(lastFirst) < iv-spec.Tolerance {
						t.Fatalf("%s: scheduled run %d starts %s after the last, spacing %s tolerance %s", now.Sub(t0), e.Run, now.Sub(lastFirst), iv, spec.Tolerance)
					}
					lastFirst = now
				}
			case events.RunFailed:
				checkRetry(t, s, e.Run, e.RetryAt, now)
				outcomes[e.Run]++
			case events.RunForcedEnd:
				checkRetry(t, s, e.Run, e.RetryAt, now)
				outcomes[e.Run]++
			case events.RunCompleted:
				outcomes[e.Run]++
			case events.RunDropped:
				outcomes[e.Run]++
			}
			for _, k := range kind(e) {
				seen[k]++
			}
			s = rules.Evolve(s, events.Metadata{Version: s.Version + uint64(i) + 1, At: now}, e)
		}
		running := 0
		for _, r := range s.Open {
			if r.Started && s.Current(r) {
				running++
			}
		}
		if running > 1 {
			t.Fatalf("%s: %d runs running at once: %+v", now.Sub(t0), running, s.Open)
		}
		return evs
	}
	decide(rules.Create{TaskID: id, Spec: spec, FirstRun: t0.Add(iv)})
	beats := map[int]time.Time{}
	for step := 0; step < 300; step++ {
		now = now.Add(time.Duration(rnd.Int64N(int64(iv))))
		switch k := rnd.IntN(20); {
		case k < 6:
			decide(rules.Tick{})
		case k < 10:
			if w := s.Waiting(); len(w) > 0 {
				r := w[rnd.IntN(len(w))]
				decide(rules.RequestStart{RunID: r.ID})
				beats[r.Number] = now
			}
		case k < 15:
			if rs := s.Running(); len(rs) > 0 {
				r := rs[rnd.IntN(len(rs))]
				switch rnd.IntN(5) {
				case 0:
					decide(rules.Complete{RunID: r.ID})
				case 1:
					decide(rules.Fail{RunID: r.ID, Error: "boom", Fatal: rnd.IntN(4) == 0})
				case 2:
					decide(rules.ForceEnd{RunID: r.ID, Reason: events.ForcedTimebox})
				case 3:
					decide(rules.ForceEnd{RunID: r.ID, Reason: events.ForcedHeartbeat, LastHeartbeat: beats[r.Number]})
				case 4:
					if len(decide(rules.Heartbeat{RunID: r.ID})) == 0 {
						beats[r.Number] = now
					}
				}
			}
		case k < 17:
			decide(rules.Trigger{})
		case k < 18:
			decide(rules.Pause{})
		case k < 19:
			decide(rules.Resume{})
		default:
			now = now.Add(time.Duration(rnd.Int64N(int64(10 * iv)))) // a downtime
			decide(rules.Tick{})
		}
	}
	// Drain: resumed, every run ends; no more ticks.
	decide(rules.Resume{})
	for len(s.Open) > 0 {
		now = now.Add(time.Second)
		r := s.Open[0]
		if !r.Started {
			decide(rules.RequestStart{RunID: r.ID})
			continue
		}
		now = now.Add(spec.Timebox)
		decide(rules.ForceEnd{RunID: r.ID, Reason: events.ForcedTimebox})
	}
	for n := range enqueued {
		if outcomes[n] != 1 {
			t.Fatalf("run %d has %d outcomes", n, outcomes[n])
		}
	}
	for n := range outcomes {
		if !enqueued[n] {
			t.Fatalf("run %d has an outcome but was never enqueued", n)
		}
	}
}

// checkRetry: a failure of run n gives a retry only within max_attempts
// and no later than the next slot in force at the failure (R13).
func checkRetry(t *testing.T, s rules.State, n int, at *time.Time, now time.Time) {
	t.Helper()
	if at == nil {
		return
	}
	var r rules.Run
	for _, o := range s.Open {
		if o.Number == n {
			r = o
		}
	}
	p := s.Spec.Policy.Retry
	switch {
	case p == nil || r.Attempt >= p.MaxAttempts:
		t.Fatalf("%s: run %d (attempt %d) gets a retry, policy %+v", now.Sub(t0), n, r.Attempt, p)
	case !s.NextRun.IsZero() && at.After(s.NextRun):
		t.Fatalf("%s: run %d's retry falls due at %s, after the next slot at %s", now.Sub(t0), n, at.Sub(t0), s.NextRun.Sub(t0))
	case at.Before(now):
		t.Fatalf("%s: run %d's retry falls due before the failure, at %s", now.Sub(t0), n, at.Sub(t0))
	}
}
