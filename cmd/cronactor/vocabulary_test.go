package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/events/taskstate"
	"github.com/cronactor/cronactor/internal/bench"
	"github.com/cronactor/cronactor/projections/audit"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// decided is a representative event and when it was decided.
type decided struct {
	at time.Time
	ev events.Event
}

// representative is one task's stream holding an event of every
// registered type, in an order a task could record them.
func representative() (uuid.UUID, []decided) {
	id := uuid.MustParse("7a5c0000-0000-4000-8000-000000000001")
	run := func(n int) uuid.UUID { return uuid.NewSHA1(id, []byte(strconv.Itoa(n))) }
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	ptr := func(t time.Time) *time.Time { return &t }
	minute := events.Duration(time.Minute)
	sched := events.Schedule{Interval: minute}
	return id, []decided{
		{at(0), events.TaskCreated{TaskID: id, Name: "A", Owner: "o", Kind: "noop", Schedule: sched,
			Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Second), NextRun: at(time.Minute)}},
		{at(10 * time.Second), events.TaskUpdated{Schedule: sched, Tolerance: events.Duration(5 * time.Second),
			Timebox: events.Duration(30 * time.Second), NextRun: at(time.Minute)}},
		{at(time.Minute), events.RunEnqueued{RunID: run(1), Run: 1, Due: at(time.Minute), Slot: at(time.Minute), NextRun: at(2 * time.Minute)}},
		{at(61 * time.Second), events.RunStarted{RunID: run(1), Run: 1, Deadline: at(91 * time.Second)}},
		{at(70 * time.Second), events.CheckpointSaved{RunID: run(1), Run: 1, Checkpoint: json.RawMessage(`{"n":1}`)}},
		{at(80 * time.Second), events.RunCompleted{RunID: run(1), Run: 1}},
		{at(2 * time.Minute), events.RunEnqueued{RunID: run(2), Run: 2, Due: at(2 * time.Minute), Slot: at(2 * time.Minute), NextRun: at(3 * time.Minute)}},
		{at(121 * time.Second), events.RunStarted{RunID: run(2), Run: 2, Deadline: at(151 * time.Second)}},
		{at(125 * time.Second), events.RunFailed{RunID: run(2), Run: 2, Error: "HTTP 500"}},
		{at(3 * time.Minute), events.RunEnqueued{RunID: run(3), Run: 3, Due: at(3 * time.Minute), Slot: at(3 * time.Minute), NextRun: at(4 * time.Minute)}},
		{at(3 * time.Minute), events.RunDropped{RunID: run(3), Run: 3, Reason: events.DropTooSoon, Detail: "too soon",
			LastRun: ptr(at(121 * time.Second)), SinceLastStart: events.Duration(50 * time.Second), Needed: events.Duration(55 * time.Second)}},
		{at(4 * time.Minute), events.RunEnqueued{RunID: run(4), Run: 4, Due: at(4 * time.Minute), Slot: at(4 * time.Minute), NextRun: at(5 * time.Minute)}},
		{at(241 * time.Second), events.RunStarted{RunID: run(4), Run: 4, Deadline: at(271 * time.Second)}},
		{at(271 * time.Second), events.RunForcedEnd{RunID: run(4), Run: 4, Deadline: at(271 * time.Second), Reason: events.ForcedTimebox, Detail: "timebox 30s ended"}},
		{at(6 * time.Minute), events.SlotsMissed{Due: at(5 * time.Minute), Slot: at(5 * time.Minute), Missed: 1, MissedAfter: minute,
			NextRun: at(7 * time.Minute), Detail: "1 slot missed"}},
		{at(370 * time.Second), events.TaskPaused{}},
		{at(380 * time.Second), events.TaskResumed{NextRun: at(7 * time.Minute)}},
		{at(390 * time.Second), events.TaskCompacted{ /* State: the fold's, filled in below */ Events: 17, FromVersion: 0, ToVersion: 16,
			FromAt: at(0), ToAt: at(380 * time.Second), Retention: events.Duration(time.Hour)}},
		{at(400 * time.Second), events.TaskFinished{Runs: 4, Reason: "max_runs"}},
		{at(410 * time.Second), events.TaskDeleted{Reason: "owner deleted"}},
	}
}

// TestEveryEventTypeHasARuleInEveryConsumer feeds an event of every type
// the registry holds (events.Default.Types()) through every consumer of the
// event vocabulary: the codecs (JSON, with the fast decoder where a type
// has one; the API's wire form; the task state's binary form), the task's
// fold (taskstate), its effects (rules), the cron_tasks view (crontasks),
// the history rows and texts and explain's decisions (projections/history,
// through projections/audit's reads), the daemon's metrics and bench lag.
// It fails for a registered type with no representative event here, and
// for a consumer with no rule for a type: an error, a fallback text, or a
// hook (taskstate.Folds, rules.HasEffectRule, metrics.count,
// bench.LagHandles) saying so. A new event type is done when it passes.
// It lives here, in the one package that sees every consumer.
func TestEveryEventTypeHasARuleInEveryConsumer(t *testing.T) {
	id, stream := representative()
	have := map[string]bool{}
	for _, d := range stream {
		have[d.ev.EventType()] = true
	}
	for _, typ := range events.Default.Types() {
		if !have[typ] {
			t.Errorf("no representative %s event in this test: add one, and a rule for it in every consumer", typ)
		}
	}

	store, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	ctx := context.Background()
	m := newMetrics()
	var (
		st  taskstate.State
		row *crontasks.Task
		tr  history.Tracker
	)
	for _, d := range stream {
		typ := d.ev.EventType()
		if c, ok := d.ev.(events.TaskCompacted); ok {
			b, err := st.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			c.State = b
			d.ev = c
		}
		// JSON: encoded, stored and decoded back to the same event, the
		// fast decoder and encoding/json agreeing.
		p, err := events.Propose(d.ev, uuid.Nil, d.at)
		if err != nil {
			t.Fatalf("%s: encode: %v", typ, err)
		}
		if _, err := store.Append(ctx, events.TaskStream(id), events.AnyVersion, p); err != nil {
			t.Fatalf("%s: append: %v", typ, err)
		}
		all, err := store.ReadAll(ctx, events.Start, len(stream)+1)
		if err != nil {
			t.Fatal(err)
		}
		r := all[len(all)-1]
		ev, err := events.Decode(r)
		if err != nil {
			t.Fatalf("%s: decode: %v", typ, err)
		}
		slow := reflect.New(reflect.TypeOf(d.ev))
		if err := json.Unmarshal(r.Data, slow.Interface()); err != nil {
			t.Fatalf("%s: encoding/json: %v", typ, err)
		}
		if !sameJSON(t, ev, d.ev) || !reflect.DeepEqual(ev, slow.Elem().Interface()) {
			t.Errorf("%s: decoded %+v, encoding/json %+v; wrote %+v", typ, ev, slow.Elem().Interface(), d.ev)
		}
		// The API's wire form (GET /v1/tasks/{id}/events) round trip.
		wire, err := history.ToJSON(r)
		if err != nil {
			t.Errorf("%s: wire form: %v", typ, err)
		} else if back, err := history.FromJSON(wire); err != nil || back.Type != typ || !bytes.Equal(back.Data, r.Data) {
			t.Errorf("%s: wire form read back: %+v, %v", typ, back, err)
		}

		// The task's fold, and its binary form after the event.
		if !taskstate.Folds(ev) {
			t.Errorf("%s: taskstate has no rule to fold it", typ)
		}
		st.Apply(r.Metadata, ev)
		b, err := st.MarshalBinary()
		if err != nil {
			t.Fatalf("%s: state binary: %v", typ, err)
		}
		var back taskstate.State
		if err := back.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(back, st) {
			t.Errorf("%s: the state's binary form does not read back (%v):\n got %+v\nwant %+v", typ, err, back, st)
		}

		// The effects a task actor carries out.
		if !rules.HasEffectRule(ev) {
			t.Errorf("%s: rules.AppendEffects has no rule for it", typ)
		}
		_ = rules.AppendEffects(nil, nil, &st, []events.Event{ev})

		// The cron_tasks view's row.
		if row, err = crontasks.Evolve(row, r.Metadata, ev); err != nil {
			t.Errorf("%s: crontasks.Evolve: %v", typ, err)
		}

		// The history row and its text.
		hr, err := tr.ApplyEvent(r.Metadata, ev)
		if err != nil {
			t.Errorf("%s: history: %v", typ, err)
		} else if text := hr.Text(history.Absolute()); text == fmt.Sprintf("%s%d %s", hr.Task, hr.Run, typ) {
			t.Errorf("%s: history renders it with no words of its own: %q", typ, text)
		}

		if !m.count(ev) {
			t.Errorf("%s: the daemon's metrics have no rule for it", typ)
		}
		if !bench.LagHandles(typ) {
			t.Errorf("%s: bench lag has no rule for it", typ)
		}
	}

	// The audit reads (a page and an explanation) over the stored stream.
	page, err := audit.ReadPage(ctx, store, id, audit.Range{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	paged := map[string]bool{}
	for _, r := range page.Rows {
		paged[r.Event] = true
		if text := r.Text(history.Absolute()); text == fmt.Sprintf("%s%d %s", r.Task, r.Run, r.Event) {
			t.Errorf("%s: the audit page renders it with no words of its own: %q", r.Event, text)
		}
	}
	ex, err := audit.Explain(ctx, store, id, stream[len(stream)/2].at, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	explained := map[string]bool{}
	for _, d := range ex.Decisions {
		explained[d.Row.Event] = true
		if text := d.Text(history.Absolute()); text == fmt.Sprintf("%s%d: %s", d.Row.Task, d.Row.Run, d.Row.Event) {
			t.Errorf("%s: explain gives it no words of its own: %q", d.Row.Event, text)
		}
	}
	for typ := range have {
		if !paged[typ] {
			t.Errorf("%s: not on the audit page", typ)
		}
		if !explained[typ] {
			t.Errorf("%s: not among explain's decisions", typ)
		}
	}
}

// sameJSON reports whether a and b encode to the same JSON.
func sameJSON(t *testing.T, a, b events.Event) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}
