package taskstate_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/taskstate"
	"github.com/google/uuid"
)

// A stream written before schedules (schema 1 bodies) replays to the state
// it always had: an interval task whose slots are its nextRuns, with every
// open run's slot its due time, and none of the cron fields set.
func TestSchemaOneStreamReplays(t *testing.T) {
	id := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	run := events.RunID(id, 1).String()
	bodies := []struct {
		typ, body string
		at        time.Duration
	}{
		{"TaskCreated", `{"task_id":"` + id.String() + `","name":"poll","owner":"o","kind":"noop","schedule":{"interval":"1m0s"},"tolerance":"5s","timebox":"30s","priority":0,"next_run":"2026-11-22T00:00:30Z"}`, 0},
		{"RunEnqueued", `{"run_id":"` + run + `","run":1,"due":"2026-11-22T00:00:30Z","next_run":"2026-11-22T00:01:30Z","missed":0,"priority":0}`, 30 * time.Second},
		{"TaskPaused", `{}`, 40 * time.Second},
		{"TaskResumed", `{"next_run":"2026-11-22T00:05:00Z"}`, 5 * time.Minute},
	}
	var recs []events.Recorded
	for i, b := range bodies {
		recs = append(recs, events.Recorded{Metadata: events.Metadata{Stream: events.TaskStream(id), Version: uint64(i), At: t0.Add(b.at)},
			Type: b.typ, Schema: 1, Data: []byte(b.body)})
	}
	s, err := taskstate.Replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	next := t0.Add(5 * time.Minute)
	if s.Status != taskstate.StatusActive || !s.NextRun.Equal(next) || !s.NextSlot.Equal(next) || s.NextSpacing != 0 ||
		s.Scheduled != 1 || s.Runs != 1 || !s.Spec.Schedule.IsInterval() || s.Interval() != time.Minute {
		t.Fatalf("state %+v", s)
	}
	if r := s.Open[0]; !r.Slot.Equal(r.Due) || r.Spacing != 0 || s.Spacing(r) != time.Minute {
		t.Fatalf("open run %+v", r)
	}
}

// policyFold drives a task through Evolve, one event per call.
type policyFold struct {
	t *testing.T
	s taskstate.State
	v uint64
}

func (f *policyFold) apply(at time.Time, e events.Event) taskstate.State {
	f.t.Helper()
	f.s = taskstate.Evolve(f.s, events.Metadata{Version: f.v, At: at}, e)
	f.v++
	return f.s
}

// R13, R15, R14: retries and triggers move neither nextRun, nor the count
// of scheduled runs, nor lastRun; a failure's RetryAt is kept as a pending
// retry until the retry is enqueued; SlotsMissed moves nextRun.
func TestRetriesTriggersAndSkipsFold(t *testing.T) {
	id := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	r1, r2, r3 := events.RunID(id, 1), events.RunID(id, 2), events.RunID(id, 3)
	f := &policyFold{t: t}
	f.apply(sec(0), events.TaskCreated{TaskID: id, Name: "a", Owner: "o", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Timebox: events.Duration(30 * time.Second), NextRun: sec(60),
		Policy: events.Policy{Retry: &events.Retry{MaxAttempts: 3, InitialBackoff: events.Duration(time.Second),
			MaxBackoff: events.Duration(time.Minute), Multiplier: 2}}})
	f.apply(sec(60), events.RunEnqueued{RunID: r1, Run: 1, Due: sec(60), Slot: sec(60), NextRun: sec(120)})
	f.apply(sec(61), events.RunStarted{RunID: r1, Run: 1, Deadline: sec(91)})
	retryAt := sec(63)
	s := f.apply(sec(62), events.RunFailed{RunID: r1, Run: 1, Error: "boom", RetryAt: &retryAt, Backoff: events.Duration(time.Second)})
	if len(s.Open) != 0 || len(s.Retries) != 1 {
		t.Fatalf("after the failure: %+v", s)
	}
	want := taskstate.PendingRetry{Of: r1, Run: 1, Attempt: 2, Slot: sec(60), At: retryAt}
	if s.Retries[0] != want {
		t.Fatalf("pending retry %+v, want %+v", s.Retries[0], want)
	}
	if at, ok := s.NextRetry(); !ok || !at.Equal(retryAt) {
		t.Fatalf("NextRetry = %v %v", at, ok)
	}
	s = f.apply(sec(63), events.RunEnqueued{RunID: r2, Run: 2, Due: retryAt, Slot: sec(60), NextRun: sec(120), Attempt: 2, RetryOf: &r1})
	if len(s.Retries) != 0 || s.Scheduled != 1 || !s.NextRun.Equal(sec(120)) || s.Runs != 2 {
		t.Fatalf("after the retry's enqueue: %+v", s)
	}
	if r := s.Open[0]; r.Attempt != 2 || r.RetryOf != r1 || !r.Slot.Equal(sec(60)) || r.First() {
		t.Fatalf("retry run %+v", r)
	}
	s = f.apply(sec(64), events.RunStarted{RunID: r2, Run: 2, Deadline: sec(94)})
	if !s.LastRun.Equal(sec(61)) {
		t.Fatalf("a retry's start moved lastRun to %v", s.LastRun)
	}
	s = f.apply(sec(65), events.RunCompleted{RunID: r2, Run: 2})
	s = f.apply(sec(70), events.RunEnqueued{RunID: r3, Run: 3, Due: sec(70), Slot: sec(70), NextRun: sec(120), Attempt: 1, Trigger: events.TriggerManual})
	if s.Scheduled != 1 || !s.NextRun.Equal(sec(120)) || s.Open[0].Trigger != events.TriggerManual || s.Open[0].First() {
		t.Fatalf("after a trigger: %+v", s)
	}
	s = f.apply(sec(71), events.RunStarted{RunID: r3, Run: 3, Deadline: sec(101)})
	if !s.LastRun.Equal(sec(61)) {
		t.Fatalf("a trigger's start moved lastRun to %v", s.LastRun)
	}
	s = f.apply(sec(72), events.RunCompleted{RunID: r3, Run: 3})
	s = f.apply(sec(500), events.SlotsMissed{Due: sec(120), Slot: sec(120), Missed: 7, NextRun: sec(560)})
	if !s.NextRun.Equal(sec(560)) || !s.NextSlot.Equal(sec(560)) || s.Scheduled != 1 || s.Runs != 3 {
		t.Fatalf("after SlotsMissed: %+v", s)
	}
}

// What pausing, resuming, updating, deleting and re-creating do to the
// pending retries (see the package doc).
func TestPendingRetriesLifecycle(t *testing.T) {
	id := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	retry := &events.Retry{MaxAttempts: 3, InitialBackoff: events.Duration(time.Second), MaxBackoff: events.Duration(time.Minute), Multiplier: 2}
	created := events.TaskCreated{TaskID: id, Name: "a", Owner: "o", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Timebox: events.Duration(30 * time.Second), NextRun: sec(60),
		Policy: events.Policy{Retry: retry}}
	// failed leaves a task with a retry of run 1 pending, due at 70.
	failed := func() *policyFold {
		f := &policyFold{t: t}
		r1 := events.RunID(id, 1)
		f.apply(sec(0), created)
		f.apply(sec(60), events.RunEnqueued{RunID: r1, Run: 1, Due: sec(60), Slot: sec(60), NextRun: sec(120)})
		f.apply(sec(60), events.RunStarted{RunID: r1, Run: 1, Deadline: sec(90)})
		at := sec(70)
		if s := f.apply(sec(65), events.RunForcedEnd{RunID: r1, Run: 1, Reason: events.ForcedHeartbeat, RetryAt: &at}); len(s.Retries) != 1 {
			t.Fatalf("a forced end's retry is not pending: %+v", s)
		}
		return f
	}
	update := events.TaskUpdated{Schedule: created.Schedule, Timebox: created.Timebox, Policy: created.Policy}
	for _, tc := range []struct {
		name string
		then func(f *policyFold) taskstate.State
		kept bool
	}{
		{"a pause keeps it", func(f *policyFold) taskstate.State { return f.apply(sec(66), events.TaskPaused{}) }, true},
		{"a resume before the next slot keeps it", func(f *policyFold) taskstate.State {
			f.apply(sec(66), events.TaskPaused{})
			return f.apply(sec(100), events.TaskResumed{NextRun: sec(120)})
		}, true},
		{"a resume after the next slot drops it", func(f *policyFold) taskstate.State {
			f.apply(sec(66), events.TaskPaused{})
			return f.apply(sec(200), events.TaskResumed{NextRun: sec(200)})
		}, false},
		{"a delete drops it", func(f *policyFold) taskstate.State { return f.apply(sec(66), events.TaskDeleted{}) }, false},
		{"a new incarnation drops it", func(f *policyFold) taskstate.State {
			f.apply(sec(66), events.TaskDeleted{})
			return f.apply(sec(67), created)
		}, false},
		{"an update that keeps the policy keeps it", func(f *policyFold) taskstate.State {
			u := update
			u.Priority = 3
			return f.apply(sec(66), u)
		}, true},
		{"an update to fewer attempts drops it", func(f *policyFold) taskstate.State {
			u := update
			u.Policy.Retry = &events.Retry{MaxAttempts: 1}
			return f.apply(sec(66), u)
		}, false},
		{"an update removing the retry policy drops it", func(f *policyFold) taskstate.State {
			u := update
			u.Policy.Retry = nil
			return f.apply(sec(66), u)
		}, false},
		{"an update moving nextRun before it drops it", func(f *policyFold) taskstate.State {
			u := update
			u.NextRun = sec(68)
			return f.apply(sec(66), u)
		}, false},
		{"a scheduled run keeps it", func(f *policyFold) taskstate.State {
			r2 := events.RunID(id, 2)
			return f.apply(sec(66), events.RunEnqueued{RunID: r2, Run: 2, Due: sec(66), Slot: sec(66), NextRun: sec(126)})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.then(failed())
			if kept := len(s.Retries) == 1; kept != tc.kept {
				t.Fatalf("pending retries %+v, want kept %v", s.Retries, tc.kept)
			}
		})
	}
}

// A stream with the run policy replays through the codec to the state
// Evolve left: Policy on the spec, Attempt, RetryOf and Trigger on runs.
func TestPolicyStreamReplays(t *testing.T) {
	id := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	r1, r2 := events.RunID(id, 1), events.RunID(id, 2)
	at := t0.Add(65 * time.Second)
	pol := events.Policy{Queue: "reports", Retry: &events.Retry{MaxAttempts: 2, InitialBackoff: events.Duration(5 * time.Second),
		MaxBackoff: events.Duration(time.Minute), Multiplier: 1.5}, MissedRunPolicy: events.MissedSkip,
		StartDeadline: events.Duration(10 * time.Second), HeartbeatTimeout: events.Duration(20 * time.Second)}
	evs := []events.Event{
		events.TaskCreated{TaskID: id, Name: "a", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
			Timebox: events.Duration(30 * time.Second), NextRun: t0.Add(time.Minute), Policy: pol},
		events.RunEnqueued{RunID: r1, Run: 1, Due: t0.Add(time.Minute), Slot: t0.Add(time.Minute), NextRun: t0.Add(2 * time.Minute)},
		events.RunStarted{RunID: r1, Run: 1, Deadline: t0.Add(90 * time.Second)},
		events.RunFailed{RunID: r1, Run: 1, Error: "503", RetryAt: &at, Backoff: events.Duration(5 * time.Second)},
		events.RunEnqueued{RunID: r2, Run: 2, Due: at, Slot: t0.Add(time.Minute), NextRun: t0.Add(2 * time.Minute), Attempt: 2, RetryOf: &r1},
	}
	var live taskstate.State
	var recs []events.Recorded
	for i, e := range evs {
		p, err := events.Propose(e, uuid.Nil, t0)
		if err != nil {
			t.Fatal(err)
		}
		m := events.Metadata{Stream: events.TaskStream(id), Version: uint64(i), At: t0.Add(time.Duration(i) * time.Second)}
		recs = append(recs, events.Recorded{Metadata: m, Type: p.Type, Schema: p.Schema, Data: p.Data})
		live = taskstate.Evolve(live, m, e)
	}
	s, err := taskstate.Replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Spec.Policy.Equal(pol) || s.Spec.Policy.QueueName() != "reports" {
		t.Fatalf("policy %+v", s.Spec.Policy)
	}
	if len(s.Open) != 1 || s.Open[0].Attempt != 2 || s.Open[0].RetryOf != r1 || len(s.Retries) != 0 || s.Scheduled != 1 {
		t.Fatalf("replayed %+v", s)
	}
	if a, b := stateText(s), stateText(live); a != b {
		t.Fatalf("replay differs from the live fold:\n%s\n%s", a, b)
	}
}

// stateText prints a state whole, the retry policy by value.
func stateText(s taskstate.State) string {
	r := s.Spec.Policy.Retry
	s.Spec.Policy.Retry = nil
	if r != nil {
		return fmt.Sprintf("%+v retry %+v", s, *r)
	}
	return fmt.Sprintf("%+v", s)
}
