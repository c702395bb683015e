package history_test

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// genStream writes a long, plausible stream of one interval task: runs
// enqueued, started, completed, failed and dropped, manual triggers,
// pauses with their waiting runs dropped, and updates. Every run ends
// within a few events of its enqueue.
func genStream(t *testing.T, seed uint64, cycles int) []events.Recorded {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	id := uuid.NewSHA1(uuid.NameSpaceOID, []byte{byte(seed)})
	stream := events.TaskStream(id)
	var recs []events.Recorded
	now := t0
	add := func(e events.Event) {
		p, err := events.Propose(e, uuid.Nil, now)
		if err != nil {
			t.Fatal(err)
		}
		v := uint64(len(recs))
		recs = append(recs, events.Recorded{Metadata: events.Metadata{ID: uuid.New(), Stream: stream, Version: v,
			Position: events.Position{Commit: v + 1, Prepare: v + 1}, At: p.At}, Type: p.Type, Schema: p.Schema, Data: p.Data})
	}
	tol := 5 * time.Second
	add(events.TaskCreated{TaskID: id, Name: "A", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
		Tolerance: events.Duration(tol), Timebox: events.Duration(30 * time.Second), NextRun: now.Add(time.Minute)})
	run := 0
	for c := 0; c < cycles; c++ {
		now = now.Add(time.Minute)
		run++
		rid := events.RunID(id, run)
		switch k := rng.IntN(20); {
		case k == 0: // paused: the waiting run is dropped, then resumed
			add(events.RunEnqueued{RunID: rid, Run: run, Due: now, NextRun: now.Add(time.Minute), Slot: now})
			now = now.Add(time.Second)
			add(events.TaskPaused{})
			now = now.Add(time.Second)
			add(events.RunDropped{RunID: rid, Run: run, Reason: events.DropPaused, Detail: "the task was paused"})
			now = now.Add(3 * time.Minute)
			add(events.TaskResumed{NextRun: now.Add(time.Minute)})
		case k == 1 && seed%4 == 0: // updated (in a quarter of the streams): another tolerance
			tol = time.Duration(1+rng.IntN(9)) * time.Second
			add(events.TaskUpdated{Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(tol),
				Timebox: events.Duration(30 * time.Second), NextRun: now.Add(time.Minute)})
		case k == 2: // a manual trigger
			add(events.RunEnqueued{RunID: rid, Run: run, Due: now, Slot: now, Trigger: events.TriggerManual})
			now = now.Add(time.Second)
			add(events.RunStarted{RunID: rid, Run: run, Deadline: now.Add(30 * time.Second)})
			add(events.RunCompleted{RunID: rid, Run: run})
		case k == 3: // two waiting at once, the second dropped too soon
			add(events.RunEnqueued{RunID: rid, Run: run, Due: now, NextRun: now.Add(time.Minute), Slot: now})
			now = now.Add(time.Minute)
			run++
			r2 := events.RunID(id, run)
			add(events.RunEnqueued{RunID: r2, Run: run, Due: now, NextRun: now.Add(time.Minute), Slot: now})
			add(events.RunStarted{RunID: rid, Run: run - 1, Deadline: now.Add(30 * time.Second)})
			now = now.Add(2 * time.Second)
			add(events.RunCompleted{RunID: rid, Run: run - 1})
			add(events.RunDropped{RunID: r2, Run: run, Reason: events.DropTooSoon})
		default:
			add(events.RunEnqueued{RunID: rid, Run: run, Due: now, NextRun: now.Add(time.Minute), Slot: now})
			now = now.Add(time.Duration(rng.IntN(3)) * time.Second)
			add(events.RunStarted{RunID: rid, Run: run, Deadline: now.Add(30 * time.Second)})
			now = now.Add(time.Duration(1+rng.IntN(20)) * time.Second)
			if rng.IntN(8) == 0 {
				add(events.RunFailed{RunID: rid, Run: run, Error: "boom"})
			} else {
				add(events.RunCompleted{RunID: rid, Run: run})
			}
		}
	}
	return recs
}

// A page folded from the TaskCreated and a look-back before it has the
// rows a fold of the whole stream has, for every page whose look-back
// holds the latest update before it (or that has none before it): the
// contract of paged audit reads (see Lookback).
func TestRowsFromLookbackMatchesTheWholeFold(t *testing.T) {
	const lookback, page = 12, 7
	total, skipped := 0, 0
	for seed := uint64(1); seed <= 20; seed++ {
		recs := genStream(t, seed, 150)
		whole, err := history.Rows(recs)
		if err != nil {
			t.Fatal(err)
		}
		// The latest event before lo that set the spec, lastRun and
		// nextRun: the look-back must hold each (documented on Lookback).
		lastUpdate, lastStart, lastNext := -1, -1, -1
		checked := 0
		for lo := 1; lo < len(recs); lo++ {
			switch r := whole[lo-1]; {
			case r.Event == "TaskUpdated":
				lastUpdate, lastNext = lo-1, lo-1
			case r.Event == "RunStarted" && r.Trigger == "" && r.Attempt <= 1:
				lastStart = lo - 1
			case r.Event == "RunEnqueued" && r.Trigger == "", r.Event == "TaskResumed":
				lastNext = lo - 1
			}
			start := max(lo-lookback, 0)
			if (lastUpdate >= 0 && lastUpdate < start) || (lastStart >= 0 && lastStart < start) || (lastNext >= 0 && lastNext < start) {
				skipped++
				continue // not exact, as documented
			}
			hi := min(lo+page, len(recs))
			got, err := history.RowsFrom(recs[0], recs[start:hi], lo-start)
			if err != nil {
				t.Fatalf("seed %d, page at %d: %v", seed, lo, err)
			}
			if !reflect.DeepEqual(got, whole[lo:hi]) {
				for i := range got {
					if !reflect.DeepEqual(got[i], whole[lo+i]) {
						t.Fatalf("seed %d, page at %d, row of version %d:\n got %+v\nwant %+v", seed, lo, lo+i, got[i], whole[lo+i])
					}
				}
				t.Fatalf("seed %d, page at %d: %d rows, want %d", seed, lo, len(got), hi-lo)
			}
			checked++
		}
		total += checked
	}
	if total < 3*(total+skipped)/4 {
		t.Fatalf("only %d of %d pages checked", total, total+skipped)
	}
}

// A page whose look-back starts inside a pause (past the TaskPaused)
// still shows the task paused until the TaskResumed: the status is
// inferred from the resume.
func TestRowsFromInfersAPauseFromTheResume(t *testing.T) {
	recs := genStream(t, 3, 0)
	id, _ := events.TaskIDFromStream(recs[0].Stream)
	stream := recs[0].Stream
	now := t0
	add := func(e events.Event) {
		now = now.Add(time.Minute)
		p, err := events.Propose(e, uuid.Nil, now)
		if err != nil {
			t.Fatal(err)
		}
		v := uint64(len(recs))
		recs = append(recs, events.Recorded{Metadata: events.Metadata{Stream: stream, Version: v, At: now,
			Position: events.Position{Commit: v + 1, Prepare: v + 1}}, Type: p.Type, Schema: p.Schema, Data: p.Data})
	}
	for n := 1; n <= 3; n++ {
		add(events.RunEnqueued{RunID: events.RunID(id, n), Run: n, Due: now, NextRun: now.Add(time.Minute), Slot: now})
	}
	add(events.TaskPaused{})
	for n := 1; n <= 3; n++ {
		add(events.RunDropped{RunID: events.RunID(id, n), Run: n, Reason: events.DropPaused})
	}
	add(events.TaskResumed{NextRun: now.Add(time.Minute)})
	whole, err := history.Rows(recs)
	if err != nil {
		t.Fatal(err)
	}
	lo := len(recs) - 3 // the page: the last drop and the resume; the look-back: one drop
	got, err := history.RowsFrom(recs[0], recs[lo-1:], 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if w := whole[lo+i]; r.Status != w.Status || r.Event != w.Event {
			t.Errorf("row %d (%s): status %s, want %s", lo+i, r.Event, r.Status, w.Status)
		}
	}
}
