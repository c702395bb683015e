package rules_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// TestOverlapAndPauseInvariants drives tasks under each overlap choice
// (DESIGN §8.4), some with pause_after_failures, through random ticks,
// asks to start, outcomes, triggers, pauses and resumes. The test plays
// the actor's part of buffer_one as the actor does it: it keeps the run an
// Effects Buffer names, passes it in the next RequestStart, and asks for
// it again as soon as no run is running. On every decision:
//   - under every choice but allow, no two runs of the task run at once;
//   - under buffer_one, at most one run waits held, and a held run asked
//     for again once nothing runs is never held again;
//   - under cancel_other, a run that starts while another ran comes with
//     that run's forced end, reason replaced, in the same decision;
//   - the task pauses itself (TaskPaused, reason failures, with the count)
//     exactly when the slots failed in a row, counted here from the events
//     on their own, reach pause_after_failures, and never otherwise;
//   - every enqueued run ends in exactly one outcome once drained (R9): a
//     held run is not lost;
//   - with backfills in the mix (DESIGN §8.4): every slot a backfill asked
//     for gets exactly one run, in the order asked, once drained (each run
//     then has its one outcome: it ran, or was dropped for the documented
//     reasons, overlap under skip or buffer_one among them), and no
//     backfill run moves nextRun or lastRun.
func TestOverlapAndPauseInvariants(t *testing.T) {
	seen := map[string]int{}
	for _, policy := range []string{"", events.OverlapSkip, events.OverlapBufferOne, events.OverlapCancelOther, events.OverlapAllow} {
		for seed := uint64(1); seed <= 60; seed++ {
			t.Run(fmt.Sprintf("%s/%d", policy, seed), func(t *testing.T) {
				overlapRun(t, rand.New(rand.NewPCG(seed, 36)), policy, seen)
			})
		}
	}
	for _, k := range []string{"held", "held dropped overlap", "released start", "replaced", "two running under allow",
		"drop overlap", "paused failures", "resume resets", "backfill", "backfill waits", "backfill started", "backfill dropped overlap"} {
		if seen[k] == 0 {
			t.Errorf("no run reached %q: %v", k, seen)
		}
	}
}

func overlapRun(t *testing.T, rnd *rand.Rand, policy string, seen map[string]int) {
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	iv := sec(20 + rnd.IntN(100))
	spec := rules.Defaults(rules.Spec{Name: "A", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(iv)},
		MaxWaiting: 1 + rnd.IntN(4)})
	// A timebox of the whole interval lets a slow run still run when the
	// next one may start (R3 would otherwise keep most runs apart).
	spec.Timebox = iv
	p := &spec.Policy
	p.Overlap = policy
	if rnd.IntN(2) == 0 {
		p.Retry = &events.Retry{MaxAttempts: 1 + rnd.IntN(3), InitialBackoff: events.Duration(sec(1)),
			MaxBackoff: events.Duration(sec(5)), Multiplier: 2}
	}
	if rnd.IntN(3) > 0 {
		p.PauseAfterFailures = 1 + rnd.IntN(3)
	}
	var (
		s        rules.State
		now      = t0
		outcomes = map[int]int{}
		enqueued = map[int]bool{}
		// origin is, by run, the trigger of its slot's first attempt
		// (decision 0030: a retry of a manual or backfill run is no slot).
		origin    = map[uuid.UUID]string{}
		held      uuid.UUID   // the run the "actor" holds (rules.Buffer)
		releasing uuid.UUID   // a held run being asked for again
		failures  int         // slots failed in a row, from the events alone
		asked     []time.Time // the slots backfills asked for, in order
		filled    []time.Time // the slots of the backfill runs enqueued, in order
	)
	var decide func(cmd rules.Command) []events.Event
	decide = func(cmd rules.Command) []events.Event {
		t.Helper()
		if rs, ok := cmd.(rules.RequestStart); ok {
			rs.Buffered = held
			cmd = rs
		}
		wasRunning := len(s.Running())
		active := s.Status == rules.StatusActive
		evs, err := rules.Decide(s, cmd, now)
		if err != nil {
			return nil
		}
		paused := false
		for i, e := range evs {
			switch e := e.(type) {
			case events.BackfillRequested:
				asked = append(asked, e.Slots...)
				seen["backfill"]++
			case events.RunEnqueued:
				enqueued[e.Run] = true
				origin[e.RunID] = e.Trigger
				if e.RetryOf != nil {
					origin[e.RunID] = origin[*e.RetryOf]
				}
				if e.Trigger == events.TriggerBackfill {
					filled = append(filled, e.Slot)
					if !e.NextRun.Equal(s.NextRun) {
						t.Fatalf("%s: backfill run %d moves nextRun %s → %s", now.Sub(t0), e.Run, s.NextRun, e.NextRun)
					}
				}
			case events.RunCompleted:
				outcomes[e.Run]++
				if r, _ := s.Run(e.RunID); origin[r.ID] == "" && s.Current(r) {
					failures = 0
				}
			case events.RunFailed:
				outcomes[e.Run]++
				if r, _ := s.Run(e.RunID); origin[r.ID] == "" && s.Current(r) && e.RetryAt == nil {
					failures++
				}
			case events.RunForcedEnd:
				outcomes[e.Run]++
				if e.Reason == events.ForcedReplaced {
					seen["replaced"]++
					if policy != events.OverlapCancelOther {
						t.Fatalf("%s: run %d replaced under overlap %q", now.Sub(t0), e.Run, policy)
					}
				} else if r, _ := s.Run(e.RunID); origin[r.ID] == "" && s.Current(r) && e.RetryAt == nil {
					failures++
				}
			case events.RunDropped:
				outcomes[e.Run]++
				if r, _ := s.Run(e.RunID); r.Trigger == events.TriggerBackfill && e.Reason == events.DropOverlap {
					seen["backfill dropped overlap"]++
				}
				if e.Reason == events.DropOverlap {
					seen["drop overlap"]++
					if policy == events.OverlapBufferOne {
						seen["held dropped overlap"]++
					}
				}
			case events.RunStarted:
				if wasRunning > 0 && policy == events.OverlapCancelOther {
					if i == 0 {
						t.Fatalf("%s: run %d starts beside a running run without replacing it", now.Sub(t0), e.Run)
					}
				}
				if e.RunID == releasing {
					seen["released start"]++
				}
				if r, _ := s.Run(e.RunID); r.Trigger == events.TriggerBackfill {
					seen["backfill started"]++
					defer func(last time.Time) {
						if !s.LastRun.Equal(last) {
							t.Fatalf("%s: backfill run %d moved lastRun %s → %s", now.Sub(t0), e.Run, last, s.LastRun)
						}
					}(s.LastRun)
				}
			case events.TaskPaused:
				if e.Reason == events.PauseFailures {
					paused = true
					seen["paused failures"]++
					if e.Failures != failures || failures < p.PauseAfterFailures || p.PauseAfterFailures == 0 || !active {
						t.Fatalf("%s: paused with %d failures; counted %d, pause_after_failures %d, active %v",
							now.Sub(t0), e.Failures, failures, p.PauseAfterFailures, active)
					}
				}
			case events.TaskResumed:
				if failures > 0 {
					seen["resume resets"]++
				}
				failures = 0
			}
			s = rules.Evolve(s, events.Metadata{Version: s.Version + uint64(i) + 1, At: now}, e)
		}
		if p.PauseAfterFailures > 0 && active && failures >= p.PauseAfterFailures && !paused {
			t.Fatalf("%s: %d slots failed in a row (pause_after_failures %d) and the task did not pause", now.Sub(t0), failures, p.PauseAfterFailures)
		}
		if len(s.Backfill) > 0 {
			seen["backfill waits"]++
		}
		if failures != s.Failures {
			t.Fatalf("%s: the state counts %d failed slots, the events %d", now.Sub(t0), s.Failures, failures)
		}
		running := len(s.Running())
		if running > 1 {
			if policy != events.OverlapAllow {
				t.Fatalf("%s: %d runs running at once under overlap %q: %+v", now.Sub(t0), running, policy, s.Open)
			}
			seen["two running under allow"]++
		}
		for _, eff := range rules.Effects(cmd, s, evs) {
			b, ok := eff.(rules.Buffer)
			if !ok {
				continue
			}
			if policy != events.OverlapBufferOne {
				t.Fatalf("%s: a run held under overlap %q", now.Sub(t0), policy)
			}
			if b.RunID == releasing {
				t.Fatalf("%s: run held again when asked for once nothing ran", now.Sub(t0))
			}
			if held != uuid.Nil && held != b.RunID {
				if r, ok := s.Run(held); ok && !r.Started {
					t.Fatalf("%s: two runs held at once", now.Sub(t0))
				}
			}
			held = b.RunID
			seen["held"]++
		}
		// The actor's release: a held run is asked for again as soon as no
		// run of the task is running.
		if r, ok := s.Run(held); held != uuid.Nil && (!ok || r.Started) {
			held = uuid.Nil
		} else if held != uuid.Nil && len(s.Running()) == 0 {
			releasing, held = held, uuid.Nil
			decide(rules.RequestStart{RunID: releasing})
			releasing = uuid.Nil
		}
		return evs
	}
	decide(rules.Create{TaskID: id, Spec: spec, FirstRun: t0.Add(iv)})
	for step := 0; step < 300; step++ {
		now = now.Add(time.Duration(rnd.Int64N(int64(iv / 2))))
		switch k := rnd.IntN(20); {
		case k < 5:
			decide(rules.Tick{})
		case k < 10:
			if w := s.Waiting(); len(w) > 0 {
				decide(rules.RequestStart{RunID: w[rnd.IntN(len(w))].ID})
			}
		case k < 15:
			if rs := s.Running(); len(rs) > 0 {
				r := rs[rnd.IntN(len(rs))]
				switch rnd.IntN(3) {
				case 0:
					decide(rules.Complete{RunID: r.ID})
				case 1:
					decide(rules.Fail{RunID: r.ID, Error: "boom"})
				case 2:
					if !now.Before(r.Deadline) {
						decide(rules.ForceEnd{RunID: r.ID, Reason: events.ForcedTimebox})
					}
				}
			}
		case k < 17:
			decide(rules.Trigger{})
		case k < 18:
			to := now.Add(-sec(rnd.IntN(60)))
			decide(rules.Backfill{From: to.Add(-time.Duration(1+rnd.IntN(6)) * iv), To: to})
		case k < 19:
			decide(rules.Pause{})
		default:
			decide(rules.Resume{})
		}
	}
	// Drain: resumed, every run ends; no more ticks.
	decide(rules.Resume{})
	for len(s.Open) > 0 {
		now = now.Add(time.Second)
		if rs := s.Running(); len(rs) > 0 {
			decide(rules.Complete{RunID: rs[0].ID})
			continue
		}
		decide(rules.RequestStart{RunID: s.Open[0].ID})
	}
	for n := range enqueued {
		if outcomes[n] != 1 {
			t.Fatalf("run %d has %d outcomes", n, outcomes[n])
		}
	}
	if len(s.Backfill) != 0 || fmt.Sprint(asked) != fmt.Sprint(filled) {
		t.Fatalf("backfills asked for slots %v; runs were enqueued for %v; %v still wait", asked, filled, s.Backfill)
	}
}
