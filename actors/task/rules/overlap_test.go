package rules_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// fold is one task decided and evolved as its actor does, for the tests of
// overlap and pause_after_failures.
type fold struct {
	t   *testing.T
	s   rules.State
	now time.Time
}

func newFold(t *testing.T, p events.Policy) *fold {
	spec := rules.Defaults(rules.Spec{Name: "A", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)}})
	spec.Timebox, spec.Policy = time.Minute, p
	f := &fold{t: t, now: t0}
	f.must(rules.Create{TaskID: id, Spec: spec, FirstRun: t0.Add(time.Minute)})
	return f
}

// at moves the clock to t0 + secs.
func (f *fold) at(secs int) *fold { f.now = t0.Add(time.Duration(secs) * time.Second); return f }

func (f *fold) decide(cmd rules.Command) ([]events.Event, error) {
	evs, err := rules.Decide(f.s, cmd, f.now)
	for i, e := range evs {
		f.s = rules.Evolve(f.s, events.Metadata{Version: f.s.Version + uint64(i) + 1, At: f.now}, e)
	}
	return evs, err
}

func (f *fold) must(cmd rules.Command) []events.Event {
	f.t.Helper()
	evs, err := f.decide(cmd)
	if err != nil {
		f.t.Fatalf("%T: %v", cmd, err)
	}
	return evs
}

// run returns open run n.
func (f *fold) run(n int) rules.Run {
	f.t.Helper()
	for _, r := range f.s.Open {
		if r.Number == n {
			return r
		}
	}
	f.t.Fatalf("no open run %d: %+v", n, f.s.Open)
	return rules.Run{}
}

func types(evs []events.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.EventType())
	}
	return out
}

// Under buffer_one the first run asking while another runs records
// nothing and is held (Effects: Buffer); a second asking meanwhile is
// dropped overlap; the held one, asking again once the running run has its
// outcome, starts.
func TestBufferOne(t *testing.T) {
	f := newFold(t, events.Policy{Overlap: events.OverlapBufferOne})
	f.at(60).must(rules.Tick{})
	a1 := f.run(1)
	f.at(61).must(rules.RequestStart{RunID: a1.ID})
	f.at(62).must(rules.Trigger{})
	a2 := f.run(2)
	ask := rules.RequestStart{RunID: a2.ID}
	if evs := f.must(ask); len(evs) != 0 {
		t.Fatalf("A2 asking while A1 runs: %v, want nothing recorded", types(evs))
	}
	if effs := rules.Effects(ask, f.s, nil); !reflect.DeepEqual(effs, []rules.Effect{rules.Buffer{RunID: a2.ID}}) {
		t.Fatalf("effects %#v, want Buffer of A2", effs)
	}
	f.at(63).must(rules.Trigger{})
	a3 := f.run(3)
	evs := f.must(rules.RequestStart{RunID: a3.ID, Buffered: a2.ID})
	if d, ok := evs[0].(events.RunDropped); len(evs) != 1 || !ok || d.Reason != events.DropOverlap {
		t.Fatalf("A3 asking while A2 waits: %v, want dropped overlap", evs)
	}
	// The held run asking again while A1 still runs is held again, not
	// dropped: it is the one that waits.
	if evs := f.must(rules.RequestStart{RunID: a2.ID, Buffered: a2.ID}); len(evs) != 0 {
		t.Fatalf("A2 asking again while held: %v", types(evs))
	}
	f.at(70).must(rules.Complete{RunID: a1.ID})
	ask = rules.RequestStart{RunID: a2.ID, Buffered: a2.ID}
	if evs := f.must(ask); !reflect.DeepEqual(types(evs), []string{"RunStarted"}) {
		t.Fatalf("A2 once A1 ended: %v, want RunStarted", types(evs))
	}
	if rules.Buffers(&f.s, a2.ID) {
		t.Fatal("a started run still counts as held")
	}
}

// Under cancel_other the running run is forced to end (replaced, no
// retry, no failed slot) and the asking run starts in the same decision;
// a run too late to start (R14) replaces nothing.
func TestCancelOther(t *testing.T) {
	f := newFold(t, events.Policy{Overlap: events.OverlapCancelOther, StartDeadline: events.Duration(10 * time.Second),
		Retry:              &events.Retry{MaxAttempts: 3, InitialBackoff: events.Duration(time.Second), MaxBackoff: events.Duration(time.Second), Multiplier: 1},
		PauseAfterFailures: 1})
	f.at(60).must(rules.Tick{})
	a1 := f.run(1)
	f.at(61).must(rules.RequestStart{RunID: a1.ID})
	f.at(62).must(rules.Trigger{})
	a2 := f.run(2)
	// Asked 20 s after it fell due, start_deadline 10 s: too late, and A1
	// runs on.
	evs := f.at(82).must(rules.RequestStart{RunID: a2.ID})
	if d, ok := evs[0].(events.RunDropped); len(evs) != 1 || !ok || d.Reason != events.DropTooLate {
		t.Fatalf("late A2: %v, want dropped too_late only", evs)
	}
	f.at(83).must(rules.Trigger{})
	a3 := f.run(3)
	evs = f.at(84).must(rules.RequestStart{RunID: a3.ID})
	if !reflect.DeepEqual(types(evs), []string{"RunForcedEnd", "RunStarted"}) {
		t.Fatalf("A3 asking while A1 runs: %v", types(evs))
	}
	fe := evs[0].(events.RunForcedEnd)
	if fe.RunID != a1.ID || fe.Reason != events.ForcedReplaced || fe.RetryAt != nil || fe.NoRetry == "" {
		t.Fatalf("forced end %+v, want A1 replaced, not retried, saying why", fe)
	}
	if f.s.Failures != 0 || f.s.Status != rules.StatusActive {
		t.Fatalf("a replaced run counted as a failed slot: failures %d, status %s", f.s.Failures, f.s.Status)
	}
	if got := len(f.s.Running()); got != 1 {
		t.Fatalf("%d runs running, want 1", got)
	}
	// The replacement is decided only from RequestStart: a ForceEnd command
	// cannot claim it.
	if _, err := f.decide(rules.ForceEnd{RunID: a3.ID, Reason: events.ForcedReplaced}); !errors.Is(err, rules.ErrUnknownForceKind) {
		t.Fatalf("ForceEnd replaced: %v, want ErrUnknownForceKind", err)
	}
}

// pause_after_failures 2: a slot counts once its last attempt failed; a
// success and a resume set the count back; a manual run neither counts
// nor resets; the second failed slot in a row pauses the task in the same
// decision, with reason failures and the count.
func TestPauseAfterFailures(t *testing.T) {
	f := newFold(t, events.Policy{PauseAfterFailures: 2,
		Retry: &events.Retry{MaxAttempts: 2, InitialBackoff: events.Duration(time.Second), MaxBackoff: events.Duration(time.Second), Multiplier: 1}})
	slot := func(at int, fail ...bool) []events.Event {
		t.Helper()
		f.at(at).must(rules.Tick{})
		r := f.s.Waiting()[0]
		f.must(rules.RequestStart{RunID: r.ID})
		if !fail[0] {
			return f.at(at + 1).must(rules.Complete{RunID: r.ID})
		}
		evs := f.at(at + 1).must(rules.Fail{RunID: r.ID, Error: "boom"})
		if len(fail) > 1 && evs[0].(events.RunFailed).RetryAt != nil {
			f.at(at + 2).must(rules.Tick{})
			r = f.s.Waiting()[0]
			f.must(rules.RequestStart{RunID: r.ID})
			return f.at(at + 3).must(rules.Fail{RunID: r.ID, Error: "boom"})
		}
		return evs
	}
	slot(60, true) // attempt 1 fails, a retry is promised: the slot is still open
	if f.s.Failures != 0 {
		t.Fatalf("a failure with a retry promised counted: %d", f.s.Failures)
	}
	f.at(62).must(rules.Tick{})
	r := f.s.Waiting()[0]
	f.must(rules.RequestStart{RunID: r.ID})
	f.at(63).must(rules.Fail{RunID: r.ID, Error: "boom"})
	if f.s.Failures != 1 {
		t.Fatalf("after the slot's last attempt failed: %d failures, want 1", f.s.Failures)
	}
	slot(120, false)
	if f.s.Failures != 0 {
		t.Fatalf("a success left %d failures", f.s.Failures)
	}
	slot(180, true, true)
	// A manual run failing is no slot.
	f.at(200).must(rules.Trigger{})
	m := f.s.Waiting()[0]
	f.must(rules.RequestStart{RunID: m.ID})
	f.at(201).must(rules.Fail{RunID: m.ID, Error: "boom", Fatal: true})
	if f.s.Failures != 1 || f.s.Status != rules.StatusActive {
		t.Fatalf("after a failed manual run: %d failures, status %s", f.s.Failures, f.s.Status)
	}
	evs := slot(240, true, true)
	want := events.TaskPaused{Reason: events.PauseFailures, Failures: 2}
	if len(evs) != 2 || evs[1] != want {
		t.Fatalf("second failed slot in a row: %v, want the failure and %+v", evs, want)
	}
	if f.s.Status != rules.StatusPaused || f.s.PauseReason != events.PauseFailures {
		t.Fatalf("status %s, reason %q", f.s.Status, f.s.PauseReason)
	}
	f.at(300).must(rules.Resume{})
	if f.s.Failures != 0 || f.s.PauseReason != "" {
		t.Fatalf("resume left %d failures, reason %q", f.s.Failures, f.s.PauseReason)
	}
	// A user's pause has no reason.
	if evs := f.must(rules.Pause{}); evs[0] != (events.TaskPaused{}) {
		t.Fatalf("a user's pause: %+v", evs[0])
	}
}

// A manual or backfill run is no slot, and neither are its retries
// (decision 0030: they follow R13, and do not count for
// pause_after_failures): a retry that fails after the first attempt
// failed neither counts nor pauses the task, and one that completes does
// not reset the slots' failures.
func TestPauseAfterFailuresSkipsRetriesOfUnscheduledRuns(t *testing.T) {
	for _, tc := range []struct {
		name    string
		trigger rules.Command
		last    func(id uuid.UUID) rules.Command
	}{
		{"manual fails", rules.Trigger{}, func(id uuid.UUID) rules.Command { return rules.Fail{RunID: id, Error: "boom"} }},
		{"manual completes", rules.Trigger{}, func(id uuid.UUID) rules.Command { return rules.Complete{RunID: id} }},
		{"backfill fails", rules.Backfill{From: t0.Add(time.Minute), To: t0.Add(90 * time.Second)},
			func(id uuid.UUID) rules.Command { return rules.Fail{RunID: id, Error: "boom"} }},
		{"backfill completes", rules.Backfill{From: t0.Add(time.Minute), To: t0.Add(90 * time.Second)},
			func(id uuid.UUID) rules.Command { return rules.Complete{RunID: id} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFold(t, events.Policy{PauseAfterFailures: 2,
				Retry: &events.Retry{MaxAttempts: 2, InitialBackoff: events.Duration(time.Second), MaxBackoff: events.Duration(time.Second), Multiplier: 1}})
			// The slot at 60 fails, its retry too: one failed slot.
			f.at(60).must(rules.Tick{})
			for at := 61; f.s.Failures == 0; at += 2 {
				r := f.s.Waiting()[0]
				f.at(at).must(rules.RequestStart{RunID: r.ID})
				f.must(rules.Fail{RunID: r.ID, Error: "boom"})
				f.at(at + 1).must(rules.Tick{})
			}
			if f.s.Failures != 1 {
				t.Fatalf("after a failed slot: %d failures", f.s.Failures)
			}
			f.at(90).must(tc.trigger)
			first := f.s.Waiting()[0]
			f.at(91).must(rules.RequestStart{RunID: first.ID})
			if evs := f.must(rules.Fail{RunID: first.ID, Error: "boom"}); evs[0].(events.RunFailed).RetryAt == nil {
				t.Fatalf("no retry promised: %+v", evs)
			}
			f.at(92).must(rules.Tick{})
			retry := f.s.Waiting()[0]
			if retry.Attempt != 2 || retry.RetryOf != first.ID {
				t.Fatalf("waiting: %+v, want the retry of %v", retry, first.ID)
			}
			f.at(93).must(rules.RequestStart{RunID: retry.ID})
			evs := f.must(tc.last(retry.ID))
			if f.s.Failures != 1 || f.s.Status != rules.StatusActive {
				t.Fatalf("after the retry of a %T run: %v, %d failures (want 1), status %s", tc.trigger, evs, f.s.Failures, f.s.Status)
			}
		})
	}
}
