package rules_test

import (
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
)

// Decision 0030 §4: a backfill run is "not counted by pause_after_failures.
// Its retries follow R13." A backfill run whose retry fails must not pause
// the task, nor count as a failed slot.
func TestReviewBackfillRetryCountsForPause(t *testing.T) {
	f := newFold(t, events.Policy{PauseAfterFailures: 1,
		Retry: &events.Retry{MaxAttempts: 2, InitialBackoff: events.Duration(time.Second), MaxBackoff: events.Duration(time.Second), Multiplier: 1}})
	t.Logf("tick: %v", types(f.at(600).must(rules.Tick{})))
	t.Logf("nextRun %v", f.s.NextRun.Sub(t0))
	f.at(600).must(rules.Backfill{From: t0.Add(time.Minute), To: t0.Add(2 * time.Minute)})
	var bf rules.Run
	for _, r := range f.s.Open {
		if r.Trigger == events.TriggerBackfill {
			bf = r
		}
	}
	f.at(601).must(rules.RequestStart{RunID: bf.ID})
	evs := f.at(602).must(rules.Fail{RunID: bf.ID, Error: "boom"})
	t.Logf("first attempt fails: %v %+v status %v", types(evs), evs[0], f.s.Status)
	evs = f.at(604).must(rules.Tick{})
	t.Logf("tick: %v", types(evs))
	var retry rules.Run
	for _, r := range f.s.Open {
		t.Logf("open: n=%d attempt=%d trigger=%q started=%v", r.Number, r.Attempt, r.Trigger, r.Started)
		if r.Attempt == 2 {
			retry = r
		}
	}
	f.at(605).must(rules.RequestStart{RunID: retry.ID})
	evs = f.at(606).must(rules.Fail{RunID: retry.ID, Error: "boom"})
	t.Logf("retry fails: %v status %v failures %d", types(evs), f.s.Status, f.s.Failures)
	if f.s.Status == rules.StatusPaused || f.s.Failures != 0 {
		t.Fatalf("a backfill run's failed retry counted for pause_after_failures (1): %v, status %v, failures %d", types(evs), f.s.Status, f.s.Failures)
	}
}
