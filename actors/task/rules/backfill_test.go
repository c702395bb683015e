package rules_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/taskstate"
)

// slotsOf lists the slots of the backfill runs among evs.
func slotsOf(evs []events.Event) []time.Time {
	var out []time.Time
	for _, e := range evs {
		if r, ok := e.(events.RunEnqueued); ok && r.Trigger == events.TriggerBackfill {
			out = append(out, r.Slot)
		}
	}
	return out
}

func at(secs ...int) []time.Time {
	var out []time.Time
	for _, s := range secs {
		out = append(out, t0.Add(time.Duration(s)*time.Second))
	}
	return out
}

// A backfill of five past slots of a task with max_waiting 3 (the
// default) records the request and enqueues the first three, in slot
// order; each run leaving the queue (started, or dropped overlap under
// skip) makes room for the next. No run moves nextRun or lastRun, and the
// slots waiting survive a replay of the log and the binary form.
func TestBackfillEnqueuesInSlotOrderAsRoomFrees(t *testing.T) {
	f := newFold(t, events.Policy{})
	next := f.s.NextRun
	evs := f.at(600).must(rules.Backfill{From: t0.Add(time.Minute), To: t0.Add(6 * time.Minute)})
	if got := types(evs); !reflect.DeepEqual(got, []string{"BackfillRequested", "RunEnqueued", "RunEnqueued", "RunEnqueued"}) {
		t.Fatalf("recorded %v", got)
	}
	if req := evs[0].(events.BackfillRequested); !reflect.DeepEqual(req.Slots, at(60, 120, 180, 240, 300)) {
		t.Fatalf("slots %v", req.Slots)
	}
	if got := slotsOf(evs); !reflect.DeepEqual(got, at(60, 120, 180)) {
		t.Fatalf("enqueued slots %v, want the first three", got)
	}
	for _, e := range evs[1:] {
		if r := e.(events.RunEnqueued); !r.Due.Equal(f.now) || r.Attempt != 1 || !r.NextRun.Equal(next) {
			t.Fatalf("run %+v: want due now, attempt 1, nextRun kept", r)
		}
	}
	if !reflect.DeepEqual(f.s.Backfill, at(240, 300)) {
		t.Fatalf("waiting %v", f.s.Backfill)
	}
	// The state survives a restart: the binary form, and a replay.
	b, _ := f.s.MarshalBinary()
	var back taskstate.State
	if err := back.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(back.Backfill, f.s.Backfill) {
		t.Fatalf("binary form: %v %v", back.Backfill, err)
	}

	a1 := f.run(1)
	evs = f.at(601).must(rules.RequestStart{RunID: a1.ID})
	if got := types(evs); !reflect.DeepEqual(got, []string{"RunStarted", "RunEnqueued"}) || !reflect.DeepEqual(slotsOf(evs), at(240)) {
		t.Fatalf("A1 starting: %v %v", got, slotsOf(evs))
	}
	if !f.s.LastRun.IsZero() || !f.s.NextRun.Equal(next) || f.s.Scheduled != 0 {
		t.Fatalf("a backfill run moved lastRun %v, nextRun %v or the count %d", f.s.LastRun, f.s.NextRun, f.s.Scheduled)
	}
	evs = f.at(602).must(rules.RequestStart{RunID: f.run(2).ID})
	if d, ok := evs[0].(events.RunDropped); !ok || d.Reason != events.DropOverlap || !reflect.DeepEqual(slotsOf(evs), at(300)) {
		t.Fatalf("A2 asking while A1 runs (skip): %v", evs)
	}
	if f.s.Backfill != nil {
		t.Fatalf("still waiting: %v", f.s.Backfill)
	}
	// R3 does not hold a backfill run: A3 starts 1 s after A1 ended.
	f.at(603).must(rules.Complete{RunID: a1.ID})
	if evs := f.at(604).must(rules.RequestStart{RunID: f.run(3).ID}); !reflect.DeepEqual(types(evs), []string{"RunStarted"}) {
		t.Fatalf("A3: %v", types(evs))
	}
}

// Under buffer_one the backfill run held records nothing (Buffer), so it
// makes no room: the slots waiting stay waiting until a run leaves.
func TestBackfillHeldRunMakesNoRoom(t *testing.T) {
	f := newFold(t, events.Policy{Overlap: events.OverlapBufferOne})
	f.s.Spec.MaxWaiting = 1
	f.at(600).must(rules.Backfill{From: t0.Add(time.Minute), To: t0.Add(4 * time.Minute)})
	a1 := f.run(1)
	f.at(601).must(rules.RequestStart{RunID: a1.ID})
	a2 := f.run(2)
	ask := rules.RequestStart{RunID: a2.ID}
	if evs := f.at(602).must(ask); len(evs) != 0 {
		t.Fatalf("held A2: %v", types(evs))
	}
	if effs := rules.Effects(ask, f.s, nil); !reflect.DeepEqual(effs, []rules.Effect{rules.Buffer{RunID: a2.ID}}) {
		t.Fatalf("effects %#v", effs)
	}
	f.at(610).must(rules.Complete{RunID: a1.ID})
	evs := f.at(611).must(rules.RequestStart{RunID: a2.ID, Buffered: a2.ID})
	if !reflect.DeepEqual(types(evs), []string{"RunStarted", "RunEnqueued"}) || !reflect.DeepEqual(slotsOf(evs), at(180)) {
		t.Fatalf("A2 once A1 ended: %v %v", types(evs), slotsOf(evs))
	}
}

// A paused task enqueues no backfill run; its resume enqueues those it
// has room for. Deleting the task forgets the slots waiting.
func TestBackfillWaitsWhilePaused(t *testing.T) {
	f := newFold(t, events.Policy{})
	f.s.Spec.MaxWaiting = 1
	f.at(600).must(rules.Backfill{From: t0.Add(time.Minute), To: t0.Add(4 * time.Minute)})
	f.at(601).must(rules.Pause{})
	evs := f.at(602).must(rules.RequestStart{RunID: f.run(1).ID})
	if len(evs) != 1 || evs[0].(events.RunDropped).Reason != events.DropPaused {
		t.Fatalf("A1 while paused: %v", evs)
	}
	if evs := f.at(603).must(rules.Tick{}); len(slotsOf(evs)) != 0 {
		t.Fatalf("a tick of a paused task enqueued %v", slotsOf(evs))
	}
	evs = f.at(604).must(rules.Resume{})
	if !reflect.DeepEqual(slotsOf(evs), at(120)) {
		t.Fatalf("resume: %v %v", types(evs), slotsOf(evs))
	}
	f.at(605).must(rules.Delete{})
	if f.s.Backfill != nil {
		t.Fatalf("a deleted task keeps %v", f.s.Backfill)
	}
}

// A cron task's backfill slots are those its schedule has: in Berlin,
// 02:30 daily; 29 March 2026 has no 02:30 (shifted to 03:30 CEST) and 28
// March is excluded (worked out from the calendar, not our output).
func TestBackfillSlotsOfACronTask(t *testing.T) {
	spec := rules.Spec{Name: "A", Owner: "o", Kind: "noop", Schedule: events.Schedule{Cron: []string{"30 2 * * *"},
		Timezone: "Europe/Berlin", Exclude: []string{"2026-03-28"}}}
	now := time.Date(2026, 3, 26, 0, 0, 0, 0, time.UTC)
	evs, err := rules.Decide(rules.State{}, rules.Create{TaskID: id, Spec: rules.Defaults(spec)}, now)
	if err != nil {
		t.Fatal(err)
	}
	s := rules.Evolve(rules.State{}, events.Metadata{At: now}, evs[0])
	later := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	evs, err = rules.Decide(s, rules.Backfill{From: time.Date(2026, 3, 27, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 31, 0, 0, 0, 0, time.UTC)}, later)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Time{time.Date(2026, 3, 27, 1, 30, 0, 0, time.UTC), time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC),
		time.Date(2026, 3, 30, 0, 30, 0, 0, time.UTC)}
	if got := evs[0].(events.BackfillRequested).Slots; !reflect.DeepEqual(got, want) {
		t.Fatalf("slots %v, want %v", got, want)
	}
}

// Bad backfills record nothing and say why, naming the field.
func TestBackfillRejections(t *testing.T) {
	every := func(f *fold) { f.s.Spec.Schedule.Interval = events.Duration(time.Second) }
	for _, c := range []struct {
		name     string
		prep     func(*fold)
		from, to int // seconds after t0; now is t0 + 2 h
		is       error
		field    string
		contains string
	}{
		{"future", nil, 60, 7300, rules.ErrInvalidSpec, "to", "in the future"},
		{"reversed", nil, 600, 60, rules.ErrInvalidSpec, "to", "must be after from"},
		{"empty", nil, 600, 600, rules.ErrInvalidSpec, "to", "must be after from"},
		{"no slot", nil, 61, 119, rules.ErrInvalidSpec, "from", "no slot"},
		{"too many", every, 60, 1061, rules.ErrInvalidSpec, "to", "1001 slots, more than the limit of 1000"},
		{"paused", func(f *fold) { f.must(rules.Pause{}) }, 60, 600, rules.ErrCannotBackfill, "", "paused"},
		{"deleted", func(f *fold) { f.must(rules.Delete{}) }, 60, 600, rules.ErrCannotBackfill, "", "deleted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFold(t, events.Policy{})
			if c.prep != nil {
				c.prep(f)
			}
			evs, err := f.at(7200).decide(rules.Backfill{From: t0.Add(time.Duration(c.from) * time.Second), To: t0.Add(time.Duration(c.to) * time.Second)})
			if !errors.Is(err, c.is) || len(evs) != 0 || !strings.Contains(err.Error(), c.contains) {
				t.Fatalf("got %v, %v; want %v containing %q", types(evs), err, c.is, c.contains)
			}
			var fe *rules.FieldError
			if c.field != "" && (!errors.As(err, &fe) || fe.Field != c.field) {
				t.Fatalf("error %v names no field %q", err, c.field)
			}
		})
	}
}
