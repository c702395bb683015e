package audit_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/events/taskstate"
	"github.com/cronactor/cronactor/projections/audit"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

var t0 = time.Date(2026, 1, 5, 2, 0, 0, 0, time.UTC)

// counting counts the events a store's reads return.
type counting struct {
	events.Store
	read atomic.Int64
}

func (c *counting) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	recs, err := c.Store.ReadStream(ctx, stream, from, limit)
	c.read.Add(int64(len(recs)))
	return recs, err
}

// longTask writes a task of cycles runs (enqueued, started, completed,
// now and then failed, or dropped while the task is paused for a while)
// into a real in-memory store.
func longTask(t *testing.T, cycles int) (events.Store, uuid.UUID) {
	t.Helper()
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	id := uuid.New()
	stream := events.TaskStream(id)
	now := t0
	var batch []events.Proposed
	add := func(e events.Event) {
		p, err := events.Propose(e, uuid.Nil, now)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, p)
	}
	flush := func() {
		if _, err := st.Append(context.Background(), stream, events.AnyVersion, batch...); err != nil {
			t.Fatal(err)
		}
		batch = batch[:0]
	}
	add(events.TaskCreated{TaskID: id, Name: "A", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
		Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Second), NextRun: now.Add(time.Minute)})
	for n := 1; n <= cycles; n++ {
		now = now.Add(time.Minute)
		rid := events.RunID(id, n)
		add(events.RunEnqueued{RunID: rid, Run: n, Due: now, NextRun: now.Add(time.Minute), Slot: now})
		if n%97 == 0 {
			now = now.Add(time.Second)
			add(events.TaskPaused{})
			now = now.Add(time.Second)
			add(events.RunDropped{RunID: rid, Run: n, Reason: events.DropPaused, Detail: "the task was paused"})
			now = now.Add(10 * time.Minute)
			add(events.TaskResumed{NextRun: now.Add(time.Minute)})
			continue
		}
		now = now.Add(time.Second)
		add(events.RunStarted{RunID: rid, Run: n, Deadline: now.Add(30 * time.Second)})
		now = now.Add(3 * time.Second)
		if n%13 == 0 {
			add(events.RunFailed{RunID: rid, Run: n, Error: "boom"})
		} else {
			add(events.RunCompleted{RunID: rid, Run: n})
		}
		if len(batch) > 900 {
			flush()
		}
	}
	flush()
	return st, id
}

func readAll(t *testing.T, st events.Store, id uuid.UUID) ([]events.Recorded, []history.Row) {
	t.Helper()
	recs, err := st.ReadStream(context.Background(), events.TaskStream(id), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := history.Rows(recs)
	if err != nil {
		t.Fatal(err)
	}
	return recs, rows
}

func u64(v uint64) *uint64 { return &v }

// Paging from the end with before, and from the start with after, gives
// the rows of the whole fold, page by page; each page reads the look-back
// and the page, not the stream.
func TestPagesMatchTheWholeFold(t *testing.T) {
	st, id := longTask(t, 1200)
	recs, whole := readAll(t, st, id)
	ctx := context.Background()
	c := &counting{Store: st}
	const limit = 700
	// The first read folds the stream once and leaves its Marks; every
	// later page folds from the Mark before it.
	rd := &audit.Reader{Store: c, Marks: audit.NewMarks(0, 0)}

	var back []history.Row
	rg := audit.Range{Limit: limit}
	pages := 0
	for {
		c.read.Store(0)
		p, err := rd.ReadPage(ctx, id, rg)
		if err != nil {
			t.Fatal(err)
		}
		if n := c.read.Load(); pages > 0 && n > int64(audit.DefaultMarkEvery+limit+64) {
			t.Fatalf("a page of %d read %d events", limit, n)
		}
		if p.Head != uint64(len(recs)-1) {
			t.Fatalf("head %d, want %d", p.Head, len(recs)-1)
		}
		if pages == 0 && p.Newer() {
			t.Fatal("the latest page says newer events follow")
		}
		back = append(append([]history.Row(nil), p.Rows...), back...)
		pages++
		if !p.Older() {
			break
		}
		rg.Before = u64(p.Events[0].Version)
	}
	if pages != (len(recs)+limit-1)/limit {
		t.Fatalf("%d pages for %d events", pages, len(recs))
	}
	sameRows(t, "paging back", back, whole)

	// Without Marks, every page folds from the stream's first event.
	var fwd []history.Row
	p, err := audit.ReadPage(ctx, c, id, audit.Range{Limit: limit, Before: u64(limit)})
	if err != nil {
		t.Fatal(err)
	}
	fwd = append(fwd, p.Rows...)
	for p.Newer() {
		if p, err = audit.ReadPage(ctx, c, id, audit.Range{Limit: limit, After: u64(p.Events[len(p.Events)-1].Version)}); err != nil {
			t.Fatal(err)
		}
		fwd = append(fwd, p.Rows...)
	}
	sameRows(t, "paging forward", fwd, whole)
}

func sameRows(t *testing.T, what string, got, want []history.Row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	tf := history.Absolute()
	for i := range got {
		g, w := got[i], want[i]
		if g.Text(tf) != w.Text(tf) || g.Status != w.Status || !same(g.NextRun, w.NextRun) || !same(g.LastRun, w.LastRun) ||
			g.Version != w.Version || g.Waiting != w.Waiting {
			t.Fatalf("%s: row %d:\n got %+v\nwant %+v", what, i, g, w)
		}
	}
}

func same(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }

// An explanation read around the time asked about says what the fold of
// the whole stream says, at times in runs, in pauses, before the task
// existed and after its last event, and reads a bounded part of the stream.
func TestExplainAroundMatchesTheWholeFold(t *testing.T) {
	st, id := longTask(t, 1200)
	recs, _ := readAll(t, st, id)
	ctx := context.Background()
	c := &counting{Store: st}
	rd := &audit.Reader{Store: c, Marks: audit.NewMarks(0, 0)}
	if _, err := rd.ReadPage(ctx, id, audit.Range{Limit: 1}); err != nil { // leaves the Marks
		t.Fatal(err)
	}
	last := recs[len(recs)-1].At
	times := []time.Time{t0.Add(-time.Hour), t0, t0.Add(30 * time.Second)}
	for _, f := range []float64{0.1, 0.5, 0.9, 0.999} {
		times = append(times, t0.Add(time.Duration(f*float64(last.Sub(t0)))).Truncate(time.Second))
	}
	// Inside the pause of run 97*20 and right at its resume.
	pauses := 0
	for _, r := range recs {
		if r.Type == "TaskPaused" && pauses < 3 {
			times = append(times, r.At.Add(time.Minute))
		}
		if r.Type == "TaskResumed" && pauses < 3 {
			times = append(times, r.At)
			pauses++
		}
	}
	times = append(times, last, last.Add(time.Hour))
	for _, at := range times {
		// 10h holds more decisions than the look-back.
		for _, window := range []time.Duration{0, 5 * time.Minute, 10 * time.Hour} {
			want, err := history.Explain(recs, at, window)
			if err != nil {
				t.Fatal(err)
			}
			c.read.Store(0)
			got, err := rd.Explain(ctx, id, at, window)
			if err != nil {
				t.Fatal(err)
			}
			if n := c.read.Load(); window < time.Hour && n > int64(2*audit.DefaultMarkEvery+400) {
				t.Errorf("explain at %s read %d events", at, n)
			}
			var gw, ww strings.Builder
			got.Write(&gw, history.Absolute())
			want.Write(&ww, history.Absolute())
			if gw.String() != ww.String() || got.Status != want.Status || len(got.Queued) != len(want.Queued) || len(got.Running) != len(want.Running) {
				t.Fatalf("explain at %s, window %s:\n got %s\nwant %s", at, window, gw.String(), ww.String())
			}
			if want.Status == history.StatusPaused && !got.Since.Equal(want.Since) {
				t.Errorf("explain at %s: paused since %s, want %s", at, got.Since, want.Since)
			}
		}
	}
}

// A task with no events is not found.
func TestUnknownTask(t *testing.T) {
	st, _ := longTask(t, 1)
	if _, err := audit.ReadPage(context.Background(), st, uuid.New(), audit.Range{Limit: 10}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("page of an unknown task: %v", err)
	}
	if _, err := audit.Explain(context.Background(), st, uuid.New(), t0, 0); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("explain of an unknown task: %v", err)
	}
}

// After history retention removed the events before a TaskCompacted, the
// pages stop at it: the oldest page begins with it and says nothing is
// older, a page asked for before it is empty, and the rows from it on are
// those of the whole stream (but for what its own row says was removed).
func TestPagesAfterRetention(t *testing.T) {
	st, id := longTask(t, 300)
	ctx := context.Background()
	stream := events.TaskStream(id)
	recs, _ := readAll(t, st, id)
	s, err := taskstate.Replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.MarshalBinary()
	p, err := events.Propose(events.TaskCompacted{State: b, Events: len(recs), ToVersion: s.Version, FromAt: s.FirstAt, ToAt: s.UpdatedAt}, uuid.Nil, s.UpdatedAt)
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Append(ctx, stream, events.Exactly(s.Version), p)
	if err != nil {
		t.Fatal(err)
	}
	cut := res.Version
	_, whole := readAll(t, st, id)
	if err := st.(events.Truncater).TruncateBefore(ctx, stream, cut); err != nil {
		t.Fatal(err)
	}
	page, err := audit.ReadPage(ctx, st, id, audit.Range{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 || page.Events[0].Type != "TaskCompacted" || page.Older() || page.Created.Version != cut {
		t.Fatalf("the page after retention: %d events, older %v, created at %d", len(page.Events), page.Older(), page.Created.Version)
	}
	if got, want := page.Rows[0], whole[cut]; got.Status != want.Status || !same(got.NextRun, want.NextRun) || !same(got.LastRun, want.LastRun) ||
		!strings.Contains(got.Detail, "removed") {
		t.Fatalf("the TaskCompacted row %+v, want the state of %+v", got, want)
	}
	older, err := audit.ReadPage(ctx, st, id, audit.Range{Limit: 50, Before: u64(cut)})
	if err != nil {
		t.Fatal(err)
	}
	if len(older.Events) != 0 || len(older.Rows) != 0 {
		t.Fatalf("a page before the cut has %d events", len(older.Events))
	}
}

// Explain reads a stream whose events before a TaskCompacted were removed:
// at a time after the cut it says what the whole stream says of the task's
// state; at a time before it, it answers from what is left, without error.
func TestExplainAfterRetention(t *testing.T) {
	st, id := longTask(t, 300)
	ctx := context.Background()
	stream := events.TaskStream(id)
	recs, _ := readAll(t, st, id)
	s, err := taskstate.Replay(recs)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.MarshalBinary()
	now := s.UpdatedAt.Add(time.Minute)
	var ps []events.Proposed
	add := func(e events.Event) {
		p, err := events.Propose(e, uuid.Nil, now)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
		now = now.Add(20 * time.Second)
	}
	add(events.TaskCompacted{State: b, Events: len(recs), ToVersion: s.Version, FromAt: s.FirstAt, ToAt: s.UpdatedAt})
	for n := 301; n <= 320; n++ {
		rid := events.RunID(id, n)
		add(events.RunEnqueued{RunID: rid, Run: n, Due: now, NextRun: now.Add(time.Minute), Slot: now})
		add(events.RunStarted{RunID: rid, Run: n, Deadline: now.Add(30 * time.Second)})
		add(events.RunCompleted{RunID: rid, Run: n})
	}
	if _, err := st.Append(ctx, stream, events.Exactly(s.Version), ps...); err != nil {
		t.Fatal(err)
	}
	whole, _ := readAll(t, st, id)
	cut := s.Version + 1
	if err := st.(events.Truncater).TruncateBefore(ctx, stream, cut); err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{whole[cut].At, whole[cut+5].At.Add(time.Second), whole[len(whole)-1].At, whole[len(whole)-1].At.Add(time.Hour)} {
		for _, window := range []time.Duration{0, 5 * time.Minute} {
			want, err := history.Explain(whole, at, window)
			if err != nil {
				t.Fatal(err)
			}
			got, err := audit.Explain(ctx, st, id, at, window)
			if err != nil {
				t.Fatalf("explain at %s after retention: %v", at, err)
			}
			if got.Status != want.Status || len(got.Queued) != len(want.Queued) || len(got.Running) != len(want.Running) {
				t.Fatalf("explain at %s, window %s: status %s, %d queued, %d running; want %s, %d, %d", at, window,
					got.Status, len(got.Queued), len(got.Running), want.Status, len(want.Queued), len(want.Running))
			}
		}
	}
	for _, at := range []time.Time{t0, whole[cut/2].At, whole[cut-1].At} {
		if _, err := audit.Explain(ctx, st, id, at, 0); err != nil {
			t.Fatalf("explain at %s, before the cut: %v", at, err)
		}
	}
}
