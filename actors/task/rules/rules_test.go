package rules_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

var (
	t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	id = uuid.MustParse("aaaaaaaa-0000-0000-0000-000000000001")
)

// at turns "MM:SS" into a time after t0.
func at(mmss string) time.Time {
	d, err := time.ParseDuration(strings.Replace(mmss, ":", "m", 1) + "s")
	if err != nil {
		panic(err)
	}
	return t0.Add(d)
}

// task drives a State through Decide and Evolve like the actor does.
type task struct {
	t *testing.T
	s rules.State
	v uint64
}

func (k *task) do(cmd rules.Command, now time.Time) []events.Event {
	k.t.Helper()
	evs, err := rules.Decide(k.s, cmd, now)
	if err != nil {
		k.t.Fatalf("%T at %s: %v", cmd, now.Format("04:05"), err)
	}
	for _, e := range evs {
		k.s = rules.Evolve(k.s, events.Metadata{At: now, Version: k.v}, e)
		k.v++
	}
	return evs
}

func (k *task) reject(cmd rules.Command, now time.Time, want error) {
	k.t.Helper()
	evs, err := rules.Decide(k.s, cmd, now)
	if !errors.Is(err, want) {
		k.t.Fatalf("%T: events %v, err %v; want %v", cmd, evs, err, want)
	}
}

func spec(interval, tolerance, timebox time.Duration) rules.Spec {
	return rules.Spec{Name: "A", Owner: "channel/pop3/42", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(interval)}, Tolerance: tolerance, Timebox: timebox}
}

func newTask(t *testing.T, sp rules.Spec, first time.Time) *task {
	k := &task{t: t}
	k.do(rules.Create{TaskID: id, Spec: sp, FirstRun: first}, t0)
	return k
}

func one[T events.Event](t *testing.T, evs []events.Event) T {
	t.Helper()
	if len(evs) != 1 {
		t.Fatalf("got %d events %v, want one %T", len(evs), evs, *new(T))
	}
	e, ok := evs[0].(T)
	if !ok {
		t.Fatalf("got %T (%+v), want %T", evs[0], evs[0], *new(T))
	}
	return e
}

func (k *task) wantTimes(next, last string) {
	k.t.Helper()
	if !k.s.NextRun.Equal(at(next)) {
		k.t.Fatalf("nextRun = %s, want %s", k.s.NextRun.Sub(t0), next)
	}
	if last == "-" {
		if !k.s.LastRun.IsZero() {
			k.t.Fatalf("lastRun = %s, want unset", k.s.LastRun.Sub(t0))
		}
	} else if !k.s.LastRun.Equal(at(last)) {
		k.t.Fatalf("lastRun = %s, want %s", k.s.LastRun.Sub(t0), last)
	}
}

// TestWorkedExample is the table of DESIGN §2, row by row.
func TestWorkedExample(t *testing.T) {
	k := newTask(t, spec(time.Minute, 5*time.Second, 0), at("00:30"))
	k.wantTimes("00:30", "-")
	if evs := k.do(rules.Tick{}, at("00:00")); len(evs) != 0 {
		t.Fatalf("tick before due enqueued %v", evs)
	}
	a1 := one[events.RunEnqueued](t, k.do(rules.Tick{}, at("00:30")))
	if a1.Run != 1 || a1.Missed != 0 || !a1.Due.Equal(at("00:30")) {
		t.Fatalf("A1 = %+v", a1)
	}
	k.wantTimes("01:30", "-")
	st := one[events.RunStarted](t, k.do(rules.RequestStart{RunID: a1.RunID}, at("00:35")))
	if !st.Deadline.Equal(at("01:05")) {
		t.Fatalf("deadline %s, want 01:05 (timebox defaults to interval/2)", st.Deadline.Sub(t0))
	}
	k.wantTimes("01:30", "00:35")
	one[events.RunCompleted](t, k.do(rules.Complete{RunID: a1.RunID}, at("00:45")))
	k.wantTimes("01:30", "00:35")
	if evs := k.do(rules.Tick{}, at("01:00")); len(evs) != 0 {
		t.Fatalf("tick at 01:00 enqueued %v", evs)
	}
	a2 := one[events.RunEnqueued](t, k.do(rules.Tick{}, at("01:30")))
	k.wantTimes("02:30", "00:35")
	one[events.RunStarted](t, k.do(rules.RequestStart{RunID: a2.RunID}, at("01:32")))
	k.wantTimes("02:30", "01:32")
	if len(k.s.Open) != 1 || k.s.Runs != 2 {
		t.Fatalf("open runs %v, runs %d", k.s.Open, k.s.Runs)
	}
}

func TestTooSoonIsDroppedWithItsNumbers(t *testing.T) {
	k := newTask(t, spec(time.Minute, 5*time.Second, 10*time.Second), at("00:30"))
	a1 := one[events.RunEnqueued](t, k.do(rules.Tick{}, at("00:30")))
	a2 := one[events.RunEnqueued](t, k.do(rules.Tick{}, at("01:30"))) // R2: two waiting
	if len(k.s.Waiting()) != 2 {
		t.Fatalf("waiting = %d, want 2", len(k.s.Waiting()))
	}
	k.do(rules.RequestStart{RunID: a1.RunID}, at("01:35"))
	k.do(rules.Complete{RunID: a1.RunID}, at("01:36"))
	d := one[events.RunDropped](t, k.do(rules.RequestStart{RunID: a2.RunID}, at("02:03")))
	if d.Reason != events.DropTooSoon || d.SinceLastStart.D() != 28*time.Second || d.Needed.D() != 55*time.Second ||
		!d.LastRun.Equal(at("01:35")) || !strings.Contains(d.Detail, "28s after the last start; needs 55s") {
		t.Fatalf("drop = %+v", d)
	}
	k.wantTimes("02:30", "01:35") // a drop moves nothing
	if len(k.s.Open) != 0 {
		t.Fatalf("dropped run still open: %v", k.s.Open)
	}
	// Exactly interval - tolerance after the last start is allowed.
	a3 := one[events.RunEnqueued](t, k.do(rules.Tick{}, at("02:30")))
	one[events.RunStarted](t, k.do(rules.RequestStart{RunID: a3.RunID}, at("02:30")))
}

func TestMissedSlotsMergeIntoOneRun(t *testing.T) {
	k := newTask(t, spec(time.Minute, 5*time.Second, 0), at("00:30"))
	e := one[events.RunEnqueued](t, k.do(rules.Tick{}, at("05:45")))
	if e.Missed != 5 || !e.Due.Equal(at("00:30")) || !e.NextRun.Equal(at("06:45")) {
		t.Fatalf("after downtime: %+v", e)
	}
	if evs := k.do(rules.Tick{}, at("06:00")); len(evs) != 0 {
		t.Fatalf("second tick enqueued %v", evs)
	}
}

func TestForcedEndKeepsLastRunAndHandsOnCheckpoint(t *testing.T) {
	k := newTask(t, spec(time.Minute, 5*time.Second, 30*time.Second), at("00:30"))
	a1 := one[events.RunEnqueued](t, k.do(rules.Tick{}, at("00:30")))
	k.do(rules.RequestStart{RunID: a1.RunID}, at("00:33"))
	k.reject(rules.ForceEnd{RunID: a1.RunID, Reason: events.ForcedTimebox}, at("01:02"), rules.ErrDeadlineNotDue)
	k.do(rules.SaveCheckpoint{RunID: a1.RunID, Checkpoint: json.RawMessage(`{"page":3}`)}, at("00:50"))
	f := one[events.RunForcedEnd](t, k.do(rules.ForceEnd{RunID: a1.RunID, Reason: events.ForcedTimebox}, at("01:03")))
	if string(f.Checkpoint) != `{"page":3}` || !f.Deadline.Equal(at("01:03")) {
		t.Fatalf("forced end = %+v", f)
	}
	k.wantTimes("01:30", "00:33")
	if string(k.s.Checkpoint) != `{"page":3}` {
		t.Fatalf("checkpoint for the next run = %s", k.s.Checkpoint)
	}
	// A completed run's own checkpoint wins over what it saved before.
	a2 := one[events.RunEnqueued](t, k.do(rules.Tick{}, at("01:30")))
	k.do(rules.RequestStart{RunID: a2.RunID}, at("01:30"))
	k.do(rules.SaveCheckpoint{RunID: a2.RunID, Checkpoint: json.RawMessage(`{"page":4}`)}, at("01:35"))
	k.do(rules.Complete{RunID: a2.RunID, Checkpoint: json.RawMessage(`{"page":9}`)}, at("01:40"))
	if string(k.s.Checkpoint) != `{"page":9}` {
		t.Fatalf("checkpoint = %s", k.s.Checkpoint)
	}
	// A run ending without one keeps what it saved.
	a3 := one[events.RunEnqueued](t, k.do(rules.Tick{}, at("02:30")))
	k.do(rules.RequestStart{RunID: a3.RunID}, at("02:30"))
	k.do(rules.SaveCheckpoint{RunID: a3.RunID, Checkpoint: json.RawMessage(`{"page":10}`)}, at("02:31"))
	k.do(rules.Fail{RunID: a3.RunID, Error: "boom"}, at("02:32"))
	if string(k.s.Checkpoint) != `{"page":10}` {
		t.Fatalf("checkpoint after failure = %s", k.s.Checkpoint)
	}
}

func TestProcessLost(t *testing.T) {
	k := newTask(t, spec(time.Minute, 5*time.Second, 20*time.Second), at("00:30"))
	a1 := one[events.RunEnqueued](t, k.do(rules.Tick{}, at("00:30")))
	k.do(rules.RequestStart{RunID: a1.RunID}, at("00:30"))
	f := one[events.RunForcedEnd](t, k.do(rules.ForceEnd{RunID: a1.RunID, Reason: events.ForcedProcessLost}, at("09:00")))
	if f.Reason != events.ForcedProcessLost || !strings.Contains(f.Detail, "process") {
		t.Fatalf("forced end = %+v", f)
	}
	k.reject(rules.ForceEnd{RunID: a1.RunID, Reason: events.ForcedProcessLost}, at("09:00"), rules.ErrUnknownRun)
}

func TestPauseResumeDelete(t *testing.T) {
	k := newTask(t, spec(time.Minute, 5*time.Second, 0), at("00:30"))
	a1 := one[events.RunEnqueued](t, k.do(rules.Tick{}, at("00:30")))
	one[events.TaskPaused](t, k.do(rules.Pause{}, at("00:31")))
	if evs := k.do(rules.Pause{}, at("00:31")); len(evs) != 0 {
		t.Fatalf("pausing twice recorded %v", evs)
	}
	d := one[events.RunDropped](t, k.do(rules.RequestStart{RunID: a1.RunID}, at("00:32")))
	if d.Reason != events.DropPaused {
		t.Fatalf("drop reason %q", d.Reason)
	}
	if evs := k.do(rules.Tick{}, at("05:00")); len(evs) != 0 {
		t.Fatalf("a paused task enqueued %v", evs)
	}
	r := one[events.TaskResumed](t, k.do(rules.Resume{}, at("05:10")))
	if !r.NextRun.Equal(at("05:10")) {
		t.Fatalf("resume set nextRun %s, want 05:10", r.NextRun.Sub(t0))
	}
	a2 := one[events.RunEnqueued](t, k.do(rules.Tick{}, at("05:30")))
	if a2.Missed != 0 {
		t.Fatalf("pause counted as missed: %d", a2.Missed)
	}
	one[events.TaskDeleted](t, k.do(rules.Delete{Reason: "owner deleted"}, at("05:31")))
	d = one[events.RunDropped](t, k.do(rules.RequestStart{RunID: a2.RunID}, at("05:32")))
	if d.Reason != events.DropDeleted {
		t.Fatalf("drop reason %q", d.Reason)
	}
	if evs := k.do(rules.Tick{}, at("09:00")); len(evs) != 0 {
		t.Fatalf("a deleted task enqueued %v", evs)
	}
	k.reject(rules.Pause{}, at("09:00"), rules.ErrTaskDeleted)
	k.reject(rules.Update{}, at("09:00"), rules.ErrTaskDeleted)
	if evs := k.do(rules.Delete{}, at("09:00")); len(evs) != 0 {
		t.Fatalf("deleting twice recorded %v", evs)
	}
	// Creating again after a delete revives the stream; run numbers go on.
	k.do(rules.Create{TaskID: id, Spec: spec(time.Minute, 0, 0), FirstRun: at("10:00")}, at("09:30"))
	a3 := one[events.RunEnqueued](t, k.do(rules.Tick{}, at("10:00")))
	if a3.Run != 3 || k.s.Status != rules.StatusActive {
		t.Fatalf("after re-create: run %d status %s", a3.Run, k.s.Status)
	}
}

func TestRejections(t *testing.T) {
	var empty rules.State
	if _, err := rules.Decide(empty, rules.Tick{}, t0); !errors.Is(err, rules.ErrNotCreated) {
		t.Fatalf("tick on nothing: %v", err)
	}
	k := newTask(t, spec(time.Minute, 5*time.Second, 0), at("00:30"))
	k.reject(rules.Create{TaskID: id, Spec: spec(time.Minute, 0, 0), FirstRun: t0}, t0, rules.ErrAlreadyExists)
	k.reject(rules.RequestStart{RunID: uuid.New()}, t0, rules.ErrUnknownRun)
	a1 := one[events.RunEnqueued](t, k.do(rules.Tick{}, at("00:30")))
	k.reject(rules.Complete{RunID: a1.RunID}, at("00:31"), rules.ErrRunNotStarted)
	k.reject(rules.SaveCheckpoint{RunID: a1.RunID, Checkpoint: json.RawMessage(`1`)}, at("00:31"), rules.ErrRunNotStarted)
	k.do(rules.RequestStart{RunID: a1.RunID}, at("00:31"))
	k.reject(rules.RequestStart{RunID: a1.RunID}, at("00:31"), rules.ErrRunNotWaiting)
	k.reject(rules.SaveCheckpoint{RunID: a1.RunID}, at("00:31"), rules.ErrEmptyCheckpoint)
	k.reject(rules.ForceEnd{RunID: a1.RunID, Reason: "bored"}, at("09:00"), rules.ErrUnknownForceKind)
}

func TestSpecValidation(t *testing.T) {
	cases := []struct {
		name  string
		spec  rules.Spec
		field string
	}{
		{"no name", rules.Spec{Owner: "o", Kind: "k", Schedule: events.Schedule{Interval: events.Duration(time.Minute)}}, "name"},
		{"no owner", rules.Spec{Name: "n", Kind: "k", Schedule: events.Schedule{Interval: events.Duration(time.Minute)}}, "owner"},
		{"no kind", rules.Spec{Name: "n", Owner: "o", Schedule: events.Schedule{Interval: events.Duration(time.Minute)}}, "kind"},
		{"short interval", spec(500*time.Millisecond, 0, 0), "interval"},
		{"negative tolerance", spec(time.Minute, -time.Second, 0), "tolerance"},
		{"tolerance half the interval", spec(time.Minute, 30*time.Second, 0), "tolerance"},
		{"negative timebox", spec(time.Minute, 0, -time.Second), "timebox"},
		{"timebox over interval", spec(time.Minute, 0, 61*time.Second), "timebox"},
		{"bad payload", func() rules.Spec { s := spec(time.Minute, 0, 0); s.Payload = json.RawMessage(`{`); return s }(), "payload"},
		{"big payload", func() rules.Spec {
			s := spec(time.Minute, 0, 0)
			s.Payload = json.RawMessage(`"` + strings.Repeat("x", 64<<10) + `"`)
			return s
		}(), "payload"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := rules.Decide(rules.State{}, rules.Create{TaskID: id, Spec: c.spec, FirstRun: t0}, t0)
			var fe *rules.FieldError
			if !errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, rules.ErrInvalidSpec) {
				t.Fatalf("err = %v, want a FieldError on %s", err, c.field)
			}
		})
	}
	d := rules.Defaults(spec(time.Second, 0, 0))
	if d.Tolerance != 100*time.Millisecond || d.Timebox != 500*time.Millisecond || rules.Validate(d) != nil {
		t.Fatalf("defaults for a 1s interval: %+v (%v)", d, rules.Validate(d))
	}
	if d := rules.Defaults(spec(time.Minute, 0, 0)); d.Tolerance != 5*time.Second || d.Timebox != 30*time.Second {
		t.Fatalf("defaults for 1m: %+v", d)
	}
}

func TestReplayEqualsLiveState(t *testing.T) {
	k := newTask(t, spec(time.Minute, 5*time.Second, 30*time.Second), at("00:30"))
	var recs []events.Recorded
	// Record what the live run decides, then replay the recorded stream.
	record := func(cmd rules.Command, now time.Time) {
		for _, e := range k.do(cmd, now) {
			p, err := events.Propose(e, uuid.Nil, now)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, events.Recorded{Metadata: events.Metadata{At: now, Version: uint64(len(recs))}, Type: p.Type, Schema: p.Schema, Data: p.Data})
		}
	}
	created, _ := events.Propose(events.TaskCreated{TaskID: id, Name: "A", Owner: "channel/pop3/42", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(30 * time.Second), NextRun: at("00:30")}, uuid.Nil, t0)
	recs = append(recs, events.Recorded{Metadata: events.Metadata{At: t0}, Type: created.Type, Schema: 1, Data: created.Data})
	record(rules.Tick{}, at("00:30"))
	a1 := k.s.Open[0].ID
	record(rules.RequestStart{RunID: a1}, at("00:35"))
	record(rules.SaveCheckpoint{RunID: a1, Checkpoint: json.RawMessage(`{"n":1}`)}, at("00:40"))
	record(rules.Tick{}, at("01:30"))
	record(rules.ForceEnd{RunID: a1, Reason: events.ForcedTimebox}, at("01:05"))
	record(rules.Pause{}, at("01:40"))
	got, err := rules.Replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	if !equalState(got, k.s) {
		t.Fatalf("replayed %+v\nlive     %+v", got, k.s)
	}
}

func equalState(a, b rules.State) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
