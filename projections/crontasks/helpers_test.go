package crontasks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

var t0 = time.Date(2026, 1, 5, 2, 0, 0, 0, time.UTC)

func sec(n int) events.Duration { return events.Duration(time.Duration(n) * time.Second) }

func memStore(t testing.TB) *embedded.Store {
	t.Helper()
	s, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func openView(t testing.TB, cfg crontasks.Config) *crontasks.View {
	t.Helper()
	v, err := crontasks.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

func appendEv(t testing.TB, s events.Store, task uuid.UUID, at time.Time, evs ...events.Event) events.AppendResult {
	t.Helper()
	var ps []events.Proposed
	for _, ev := range evs {
		p, err := events.Propose(ev, uuid.Nil, at)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	res, err := s.Append(context.Background(), events.TaskStream(task), events.AnyVersion, ps...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// history writes a random but plausible history of n events over a few
// tasks and owners into s; deterministic for a seed.
type history struct {
	rng   *rand.Rand
	tasks []*taskGen
	now   time.Time
}

type taskGen struct {
	id      uuid.UUID
	owner   string
	runs    int
	queued  []int
	running []int
	deleted bool
	paused  bool
}

func newHistory(seed uint64) *history {
	return &history{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), now: t0}
}

// next returns the task and the events of one append.
func (h *history) next() (uuid.UUID, time.Time, []events.Event) {
	h.now = h.now.Add(time.Duration(h.rng.IntN(20)) * time.Second)
	if len(h.tasks) == 0 || h.rng.IntN(12) == 0 {
		var id uuid.UUID
		for i := range id {
			id[i] = byte(h.rng.IntN(256))
		}
		id[6] = id[6]&0x0f | 0x40
		id[8] = id[8]&0x3f | 0x80
		g := &taskGen{id: id, owner: []string{"channel/pop3/1", "channel/pop3/2", "user/7"}[h.rng.IntN(3)]}
		h.tasks = append(h.tasks, g)
		return id, h.now, []events.Event{events.TaskCreated{TaskID: id, Name: "t" + id.String()[:4], Owner: g.owner,
			Kind: "noop", Payload: json.RawMessage(`{"n":1}`), Schedule: events.Schedule{Interval: sec(60)},
			Tolerance: sec(5), Timebox: sec(30), Priority: h.rng.IntN(3), NextRun: h.now.Add(30 * time.Second)}}
	}
	g := h.tasks[h.rng.IntN(len(h.tasks))]
	next := h.now.Add(time.Minute)
	switch k := h.rng.IntN(20); {
	case g.deleted:
		return g.id, h.now, []events.Event{events.TaskDeleted{Reason: "again"}}
	case k == 0:
		g.deleted = true
		return g.id, h.now, []events.Event{events.TaskDeleted{Reason: "owner " + g.owner + " deleted"}}
	case k == 1:
		g.paused = !g.paused
		if g.paused {
			return g.id, h.now, []events.Event{events.TaskPaused{}}
		}
		return g.id, h.now, []events.Event{events.TaskResumed{NextRun: next}}
	case k == 2:
		return g.id, h.now, []events.Event{events.TaskUpdated{Schedule: events.Schedule{Interval: sec(90)},
			Tolerance: sec(5), Timebox: sec(40), Priority: 1, NextRun: next}}
	case k < 8:
		g.runs++
		g.queued = append(g.queued, g.runs)
		evs := []events.Event{events.RunEnqueued{RunID: events.RunID(g.id, g.runs), Run: g.runs, Due: h.now,
			NextRun: next, Missed: h.rng.IntN(2) * h.rng.IntN(4)}}
		return g.id, h.now, evs
	case k < 13 && len(g.queued) > 0:
		n := g.queued[0]
		g.queued = g.queued[1:]
		if h.rng.IntN(4) == 0 {
			return g.id, h.now, []events.Event{events.RunDropped{RunID: events.RunID(g.id, n), Run: n,
				Reason: events.DropTooSoon, Detail: "started 28s after the last start; needs 55s"}}
		}
		g.running = append(g.running, n)
		return g.id, h.now, []events.Event{events.RunStarted{RunID: events.RunID(g.id, n), Run: n, Deadline: h.now.Add(30 * time.Second)}}
	case len(g.running) > 0:
		n := g.running[0]
		g.running = g.running[1:]
		id := events.RunID(g.id, n)
		cp := json.RawMessage(fmt.Sprintf(`{"offset":%d}`, h.rng.IntN(1000)))
		switch h.rng.IntN(4) {
		case 0:
			return g.id, h.now, []events.Event{events.RunFailed{RunID: id, Run: n, Error: "boom"}}
		case 1:
			return g.id, h.now, []events.Event{events.RunForcedEnd{RunID: id, Run: n, Deadline: h.now,
				Reason: events.ForcedTimebox, Detail: "still running at its timebox", Checkpoint: cp}}
		default:
			return g.id, h.now, []events.Event{events.CheckpointSaved{RunID: id, Run: n, Checkpoint: cp},
				events.RunCompleted{RunID: id, Run: n, Checkpoint: cp}}
		}
	}
	return g.id, h.now, []events.Event{events.TaskUpdated{Schedule: events.Schedule{Interval: sec(60)},
		Tolerance: sec(5), Timebox: sec(30), NextRun: next}}
}

// write appends n appends of the history to s.
func (h *history) write(t testing.TB, s events.Store, n int) events.AppendResult {
	var last events.AppendResult
	for range n {
		id, at, evs := h.next()
		last = appendEv(t, s, id, at, evs...)
	}
	return last
}

func readAll(t testing.TB, s events.Store) []events.Recorded {
	t.Helper()
	recs, err := s.ReadAll(context.Background(), events.Start, 0)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// reference folds recs with the pure fold and returns the rows as JSON, by
// id.
func reference(t testing.TB, recs []events.Recorded) []string {
	t.Helper()
	rows, err := crontasks.Fold(recs)
	if err != nil {
		t.Fatal(err)
	}
	var ids []uuid.UUID
	for id := range rows {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	var out []string
	for _, id := range ids {
		b, err := json.Marshal(rows[id])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func viewRows(t testing.TB, v *crontasks.View) []string {
	t.Helper()
	all, err := v.All()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range all {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func sameRows(t testing.TB, what string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: row %d differs:\n got %s\nwant %s", what, i, got[i], want[i])
		}
	}
}
