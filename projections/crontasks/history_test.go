package crontasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func memStore(t testing.TB) *embedded.Store {
	t.Helper()
	s, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// simTask is what the history generator knows of one task.
type simTask struct {
	id      uuid.UUID
	version events.ExpectedVersion
	created bool
	status  string
	runs    int
	queued  []int // enqueued, not started or dropped
	running []int
}

// history writes a random but well-formed history of many tasks to a real
// store: creations, enqueues, starts, outcomes of every kind, pauses,
// resumes, updates and deletions, interleaved across tasks.
type history struct {
	t     testing.TB
	store events.Store
	rng   *rand.Rand
	now   time.Time
	tasks []*simTask
}

func newHistory(t testing.TB, store events.Store, seed uint64, tasks int) *history {
	h := &history{t: t, store: store, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b9)), now: t0}
	for i := range tasks {
		h.tasks = append(h.tasks, &simTask{id: uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "%d/%d", seed, i)), version: events.NoStream})
	}
	return h
}

func (h *history) append(st *simTask, evs ...events.Event) {
	h.t.Helper()
	var ps []events.Proposed
	for _, e := range evs {
		h.now = h.now.Add(time.Duration(h.rng.IntN(4000)) * time.Millisecond)
		p, err := events.Propose(e, uuid.Nil, h.now)
		if err != nil {
			h.t.Fatal(err)
		}
		ps = append(ps, p)
	}
	res, err := h.store.Append(context.Background(), events.TaskStream(st.id), st.version, ps...)
	if err != nil {
		h.t.Fatal(err)
	}
	st.version = events.Exactly(res.Version)
}

func (h *history) owner(i int) string { return fmt.Sprintf("channel/pop3/%d", i%5) }

// step appends one decision (sometimes two events in one append).
func (h *history) step() {
	i := h.rng.IntN(len(h.tasks))
	st := h.tasks[i]
	r := func(n int) uuid.UUID { return events.RunID(st.id, n) }
	cp := json.RawMessage(fmt.Sprintf(`{"n":%d}`, h.rng.IntN(1000)))
	if !st.created {
		st.created, st.status = true, crontasks.StatusActive
		h.append(st, events.TaskCreated{TaskID: st.id, Name: fmt.Sprintf("task-%d", i%7), Owner: h.owner(i), Kind: "noop",
			Payload: json.RawMessage(`{"i":` + fmt.Sprint(i) + `}`), Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
			Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Second), Priority: i % 3,
			NextRun: h.now.Add(time.Duration(h.rng.IntN(120)) * time.Second)})
		return
	}
	switch k := h.rng.IntN(100); {
	case st.status == crontasks.StatusDeleted:
		if len(st.queued) > 0 {
			n := st.queued[0]
			st.queued = st.queued[1:]
			h.append(st, events.RunDropped{RunID: r(n), Run: n, Reason: events.DropDeleted, Detail: "task deleted"})
		}
	case k < 30 && st.status == crontasks.StatusActive:
		st.runs++
		st.queued = append(st.queued, st.runs)
		e := events.RunEnqueued{RunID: r(st.runs), Run: st.runs, Due: h.now, NextRun: h.now.Add(time.Minute), Missed: h.rng.IntN(3) / 2}
		switch h.rng.IntN(8) {
		case 0: // a retry of the run before (R13)
			if st.runs > 1 {
				of := r(st.runs - 1)
				e.Attempt, e.RetryOf, e.Missed = 2, &of, 0
			}
		case 1: // a manual trigger (R15)
			e.Trigger, e.Missed = events.TriggerManual, 0
		}
		h.append(st, e)
	case k < 55 && len(st.queued) > 0:
		n := st.queued[0]
		st.queued = st.queued[1:]
		if h.rng.IntN(4) == 0 {
			lr := h.now
			h.append(st, events.RunDropped{RunID: r(n), Run: n, Reason: events.DropTooSoon, Detail: "started 28s after the last start; needs 55s",
				LastRun: &lr, SinceLastStart: events.Duration(28 * time.Second), Needed: events.Duration(55 * time.Second)})
			return
		}
		st.running = append(st.running, n)
		h.append(st, events.RunStarted{RunID: r(n), Run: n, Deadline: h.now.Add(30 * time.Second)})
	case k < 80 && len(st.running) > 0:
		n := st.running[0]
		st.running = st.running[1:]
		switch h.rng.IntN(5) {
		case 0:
			f := events.RunFailed{RunID: r(n), Run: n, Error: "boom"}
			if h.rng.IntN(2) == 0 {
				due := h.now.Add(time.Second)
				f.RetryAt, f.Backoff = &due, events.Duration(time.Second)
			}
			h.append(st, f)
		case 1:
			h.append(st, events.CheckpointSaved{RunID: r(n), Run: n, Checkpoint: cp},
				events.RunForcedEnd{RunID: r(n), Run: n, Deadline: h.now, Reason: events.ForcedTimebox, Detail: "still running", Checkpoint: cp})
		default:
			h.append(st, events.RunCompleted{RunID: r(n), Run: n, Checkpoint: cp})
		}
	case k < 85 && st.status == crontasks.StatusActive:
		st.status = crontasks.StatusPaused
		h.append(st, events.TaskPaused{})
	case k < 90 && st.status == crontasks.StatusPaused:
		st.status = crontasks.StatusActive
		h.append(st, events.TaskResumed{NextRun: h.now.Add(time.Minute)})
	case k < 94:
		h.append(st, events.TaskUpdated{Payload: json.RawMessage(`{"v":2}`), Schedule: events.Schedule{Interval: events.Duration(2 * time.Minute)},
			Tolerance: events.Duration(10 * time.Second), Timebox: events.Duration(time.Minute), Priority: 5, NextRun: h.now.Add(2 * time.Minute),
			Policy: events.Policy{Queue: "reports", Retry: &events.Retry{MaxAttempts: 3, InitialBackoff: events.Duration(time.Second),
				MaxBackoff: events.Duration(time.Minute), Multiplier: 2}, StartDeadline: events.Duration(20 * time.Second)}})
	case k < 96 && h.rng.IntN(10) == 0:
		st.status = crontasks.StatusDeleted
		h.append(st, events.TaskDeleted{Reason: "owner " + h.owner(i) + " deleted"})
	}
}

func (h *history) run(steps int) {
	for range steps {
		h.step()
	}
}

// replay is the reference: the rows folded with Evolve alone from the
// events of the log up to (and including) the first n, by id.
func replay(t testing.TB, recs []events.Recorded) []crontasks.Task {
	t.Helper()
	rows := map[uuid.UUID]*crontasks.Task{}
	for _, r := range recs {
		id, err := events.TaskIDFromStream(r.Stream)
		if err != nil {
			continue
		}
		ev, err := events.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		next, err := crontasks.Evolve(rows[id], r.Metadata, ev)
		if err != nil {
			t.Fatal(err)
		}
		rows[id] = next
	}
	out := make([]crontasks.Task, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i].ID[:]) < string(out[j].ID[:]) })
	return out
}

func readAll(t testing.TB, store events.Store) []events.Recorded {
	t.Helper()
	recs, err := store.ReadAll(context.Background(), events.Start, 0)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// dump pages through the whole view with a small page size, so cursors are
// exercised, and returns the rows by id.
func dump(t testing.TB, v *crontasks.View) []crontasks.Task {
	t.Helper()
	var out []crontasks.Task
	cursor := ""
	for {
		p, err := v.All(context.Background(), 7, cursor)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Tasks...)
		if p.Next == "" {
			return out
		}
		cursor = p.Next
	}
}

// sameRows compares rows through their JSON form (what the API serves).
func sameRows(t testing.TB, what string, got, want []crontasks.Task) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("%s: rows differ\ngot  %d rows: %.2000s\nwant %d rows: %.2000s", what, len(got), g, len(want), w)
	}
}
