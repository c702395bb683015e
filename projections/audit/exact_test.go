package audit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/events/taskstate"
	"github.com/cronactor/cronactor/projections/audit"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// randomStream writes a random task stream of about n events into a real
// in-memory store: runs enqueued (on schedule, as retries, by hand),
// started, completed, failed with and without a retry, forced to end,
// dropped, checkpointed; pauses (by hand and after failures), resumes,
// rare spec updates, missed slots, deletions and new incarnations, and now
// and then a TaskCompacted carrying the state at its cut (the events
// before it are kept). Each event is decided against the task's state as
// the one fold leaves it, as the actor decides.
func randomStream(t *testing.T, rnd *rand.Rand, n int) (events.Store, uuid.UUID) {
	t.Helper()
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	id := uuid.New()
	stream := events.TaskStream(id)
	ctx := context.Background()
	var (
		s       taskstate.State
		now     = t0
		version uint64
		batch   []events.Proposed
		pending []events.Event
	)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		if _, err := st.Append(ctx, stream, events.AnyVersion, batch...); err != nil {
			t.Fatal(err)
		}
		batch = batch[:0]
	}
	add := func(e events.Event) {
		p, err := events.Propose(e, uuid.Nil, now)
		if err != nil {
			t.Fatalf("%T: %v", e, err)
		}
		batch = append(batch, p)
		pending = append(pending, e)
		s = taskstate.Evolve(s, events.Metadata{ID: p.ID, Stream: stream, Version: version, At: now}, e)
		version++
		if len(batch) == 500 {
			flush()
		}
	}
	sec := func(k int) time.Duration { return time.Duration(k) * time.Second }
	iv := sec(30 + rnd.IntN(90))
	retry := &events.Retry{MaxAttempts: 2 + rnd.IntN(3), InitialBackoff: events.Duration(sec(5)), MaxBackoff: events.Duration(sec(60)), Multiplier: 2}
	create := func() {
		add(events.TaskCreated{TaskID: id, Name: "A", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(iv)},
			Tolerance: events.Duration(sec(1 + rnd.IntN(5))), Timebox: events.Duration(sec(20)), NextRun: now.Add(iv),
			MaxWaiting: 1 + rnd.IntN(3), Policy: events.Policy{Retry: retry}})
	}
	create()
	runID := func() (uuid.UUID, int) { k := s.Runs + 1; return events.RunID(id, k), k }
	for int(version) < n {
		now = now.Add(time.Duration(rnd.Int64N(int64(iv))))
		waiting, running := s.Waiting(), s.Running()
		switch k := rnd.IntN(1000); {
		case s.Status == taskstate.StatusDeleted:
			if k < 100 {
				now = now.Add(iv)
				create()
			}
		case k < 250 && s.Status == taskstate.StatusActive && len(waiting) < s.Spec.WaitingBound():
			rid, r := runID()
			missed := 0
			if rnd.IntN(10) == 0 {
				missed = 1 + rnd.IntN(3)
			}
			add(events.RunEnqueued{RunID: rid, Run: r, Due: now, NextRun: now.Add(iv), Slot: now, Missed: missed})
		case k < 300 && s.Status == taskstate.StatusActive && len(s.Retries) > 0 && rnd.IntN(4) == 0:
			// A retry is enqueued late now and then: the failure that
			// promised it may lie far back.
			p := s.Retries[0]
			rid, r := runID()
			of := p.Of
			add(events.RunEnqueued{RunID: rid, Run: r, Due: p.At, NextRun: s.NextRun, Slot: p.Slot, Attempt: p.Attempt, RetryOf: &of})
		case k < 310 && s.Status == taskstate.StatusActive:
			rid, r := runID()
			add(events.RunEnqueued{RunID: rid, Run: r, Due: now, NextRun: s.NextRun, Slot: now, Trigger: events.TriggerManual})
		case k < 560 && len(waiting) > 0 && len(running) == 0:
			// The newest waiting run mostly: an old one may wait long.
			w := waiting[len(waiting)-1]
			if rnd.IntN(5) == 0 {
				w = waiting[0]
			}
			if s.Status == taskstate.StatusPaused {
				add(events.RunDropped{RunID: w.ID, Run: w.Number, Reason: events.DropPaused})
			} else {
				add(events.RunStarted{RunID: w.ID, Run: w.Number, Deadline: now.Add(sec(20))})
			}
		case k < 580 && len(waiting) > 0 && s.Status == taskstate.StatusActive:
			w := waiting[rnd.IntN(len(waiting))]
			add(events.RunDropped{RunID: w.ID, Run: w.Number, Reason: events.DropTooSoon})
		case k < 800 && len(running) > 0:
			r := running[0]
			switch rnd.IntN(10) {
			case 0, 1:
				e := events.RunFailed{RunID: r.ID, Run: r.Number, Error: "boom"}
				if r.Attempt < retry.MaxAttempts {
					at := now.Add(sec(5 * r.Attempt))
					e.RetryAt, e.Backoff = &at, events.Duration(sec(5*r.Attempt))
				} else {
					e.NoRetry = "attempts exhausted"
				}
				add(e)
			case 2:
				add(events.RunForcedEnd{RunID: r.ID, Run: r.Number, Deadline: r.Deadline, Reason: events.ForcedTimebox})
			case 3:
				add(events.CheckpointSaved{RunID: r.ID, Run: r.Number, Checkpoint: []byte(fmt.Sprintf(`{"k":%d}`, k))})
			default:
				add(events.RunCompleted{RunID: r.ID, Run: r.Number, Checkpoint: []byte(fmt.Sprintf(`{"v":%d}`, version))})
			}
		case k < 808 && s.Status == taskstate.StatusActive:
			if rnd.IntN(2) == 0 {
				add(events.TaskPaused{Reason: events.PauseFailures, Failures: 3})
			} else {
				add(events.TaskPaused{})
			}
		case k < 830 && s.Status == taskstate.StatusPaused:
			now = now.Add(iv)
			add(events.TaskResumed{NextRun: now.Add(iv)})
		case k < 832 && s.Status != taskstate.StatusDeleted:
			// Rare: the rows long after it show the spec it set.
			iv = sec(30 + rnd.IntN(90))
			add(events.TaskUpdated{Schedule: events.Schedule{Interval: events.Duration(iv)}, Tolerance: events.Duration(sec(rnd.IntN(8))),
				Timebox: events.Duration(sec(10 + rnd.IntN(30))), Priority: rnd.IntN(4), NextRun: now.Add(iv),
				MaxWaiting: 1 + rnd.IntN(3), Policy: events.Policy{Retry: retry}})
		case k < 840 && s.Status == taskstate.StatusActive:
			add(events.SlotsMissed{Due: s.NextRun, Slot: s.NextRun, Missed: 1 + rnd.IntN(3), MissedAfter: events.Duration(iv),
				NextRun: now.Add(iv), Detail: "missed while down"})
		case k < 842 && s.Status != taskstate.StatusDeleted:
			add(events.TaskDeleted{Reason: "test"})
		case k < 846:
			b, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			add(events.TaskCompacted{State: b, Events: int(version), ToVersion: s.Version, FromAt: s.FirstAt, ToAt: s.UpdatedAt,
				Retention: events.Duration(time.Hour)})
		}
	}
	flush()
	return st, id
}

// readers are the ways a page is read: every one must give the whole
// fold's rows. A Reader without Marks folds each read from the stream's
// first event: it is read less (tries says how many reads of each kind).
func readers(st events.Store) map[string]*audit.Reader {
	return map[string]*audit.Reader{
		"no marks":       {Store: st},
		"marks every 64": {Store: st, Marks: audit.NewMarks(64, 0)},
		"few marks":      {Store: st, Marks: audit.NewMarks(64, 5)},
	}
}

func tries(rd *audit.Reader) int {
	if rd.Marks == nil {
		return 3
	}
	return 20
}

// checkPages pages the whole stream back from its end, with random page
// sizes, and forward again, and compares every row with the whole fold's.
func checkPages(t *testing.T, rnd *rand.Rand, name string, rd *audit.Reader, id uuid.UUID, whole []history.Row) {
	t.Helper()
	ctx := context.Background()
	var back []history.Row
	rg := audit.Range{Limit: 1 + rnd.IntN(400)}
	if rd.Marks == nil {
		rg.Limit = 1500 + rnd.IntN(1000)
	}
	for {
		p, err := rd.ReadPage(ctx, id, rg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !p.Exact {
			t.Fatalf("%s: a page that is not exact", name)
		}
		back = append(append([]history.Row(nil), p.Rows...), back...)
		if !p.Older() {
			break
		}
		rg = audit.Range{Limit: rg.Limit, Before: u64(p.Events[0].Version)}
	}
	equalRows(t, name+", paging back", back, whole)
	// Pages at random places, forward.
	for range tries(rd) {
		from := whole[0].Version + uint64(rnd.IntN(len(whole)))
		limit := 1 + rnd.IntN(300)
		p, err := rd.ReadPage(ctx, id, audit.Range{Limit: limit, After: &from})
		if err != nil {
			t.Fatal(err)
		}
		i := int(from-whole[0].Version) + 1
		equalRows(t, fmt.Sprintf("%s, %d after %d", name, limit, from), p.Rows, whole[i:min(i+limit, len(whole))])
	}
}

func equalRows(t *testing.T, what string, got, want []history.Row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	tf := history.Absolute()
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) || got[i].Text(tf) != want[i].Text(tf) {
			t.Fatalf("%s: the row of version %d:\n got %s %+v\nwant %s %+v", what, want[i].Version, got[i].Text(tf), got[i], want[i].Text(tf), want[i])
		}
	}
}

// explainCase is a time explained and the whole fold's explanation.
type explainCase struct {
	at     time.Time
	window time.Duration
	want   history.Explanation
	text   string
}

// explainCases are random times (at events, between them, before the first
// and after the last) with the default window and random ones, and the
// whole fold's explanations.
func explainCases(t *testing.T, rnd *rand.Rand, recs []events.Recorded) []explainCase {
	t.Helper()
	first, last := recs[0].At, recs[len(recs)-1].At
	times := []time.Time{first.Add(-time.Minute), first, last, last.Add(time.Hour)}
	for range 12 {
		r := recs[rnd.IntN(len(recs))]
		times = append(times, r.At, r.At.Add(time.Duration(rnd.Int64N(int64(time.Minute)))))
	}
	var cs []explainCase
	for _, at := range times {
		for _, window := range []time.Duration{0, time.Duration(rnd.Int64N(int64(10 * time.Minute)))} {
			want, err := history.Explain(recs, at, window)
			if err != nil {
				t.Fatal(err)
			}
			var w strings.Builder
			if err := want.Write(&w, history.Absolute()); err != nil {
				t.Fatal(err)
			}
			cs = append(cs, explainCase{at: at, window: window, want: want, text: w.String()})
		}
	}
	return cs
}

// checkExplain compares rd's explanations with the whole fold's (a Reader
// without Marks is asked a few only: each folds from the stream's start).
func checkExplain(t *testing.T, rnd *rand.Rand, name string, rd *audit.Reader, id uuid.UUID, cs []explainCase) {
	t.Helper()
	if rd.Marks == nil {
		rnd.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		cs = cs[:tries(rd)]
	}
	for _, c := range cs {
		got, err := rd.Explain(context.Background(), id, c.at, c.window)
		if err != nil {
			t.Fatalf("%s: explain %s: %v", name, c.at, err)
		}
		var gw strings.Builder
		if err := got.Write(&gw, history.Absolute()); err != nil {
			t.Fatal(err)
		}
		if gw.String() != c.text || !reflect.DeepEqual(got, c.want) {
			t.Fatalf("%s: explain %s, window %s:\n got %s%+v\nwant %s%+v", name, c.at, c.window, gw.String(), got, c.text, c.want)
		}
	}
}

// Every page and every explanation of a long random stream, read from the
// end or anywhere in it, is what the fold of the whole stream gives —
// with or without Marks, with Marks dropped for want of room, and after
// history retention removed the events before a TaskCompacted.
func TestPagesAndExplanationsAreTheWholeFold(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 32))
			st, id := randomStream(t, rnd, 1500+rnd.IntN(1000))
			recs, whole := readAll(t, st, id)
			cs := explainCases(t, rnd, recs)
			for name, rd := range readers(st) {
				checkPages(t, rnd, name, rd, id, whole)
				checkExplain(t, rnd, name, rd, id, slices.Clone(cs))
			}
			// Retention: remove the events before the latest TaskCompacted;
			// the whole fold is then the fold of what remains.
			cut := uint64(0)
			for _, r := range recs {
				if r.Type == "TaskCompacted" {
					cut = r.Version
				}
			}
			if cut == 0 {
				return
			}
			marked := &audit.Reader{Store: st, Marks: audit.NewMarks(64, 0)}
			if _, err := marked.ReadPage(context.Background(), id, audit.Range{Limit: 1}); err != nil { // Marks of the whole stream
				t.Fatal(err)
			}
			if err := st.(events.Truncater).TruncateBefore(context.Background(), events.TaskStream(id), cut); err != nil {
				t.Fatal(err)
			}
			recs, whole = readAll(t, st, id)
			if recs[0].Version != cut {
				t.Fatalf("after retention the stream begins at %d, want %d", recs[0].Version, cut)
			}
			cs = explainCases(t, rnd, recs)
			rds := readers(st)
			rds["marks of the stream before retention"] = marked
			for name, rd := range rds {
				checkPages(t, rnd, "after retention, "+name, rd, id, whole)
				checkExplain(t, rnd, "after retention, "+name, rd, id, slices.Clone(cs))
			}
		})
	}
}

// A page and an explanation deep in a long stream show what was decided
// long before them: a spec set by an update more than history.Lookback
// events back (R3's numbers in a start's words) and a run enqueued by
// hand that far back and still waiting (the waiting count, the queue).
func TestDeepRowsShowWhatWasDecidedLongBefore(t *testing.T) {
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
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
	add(events.TaskCreated{TaskID: id, Name: "A", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
		Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Second), NextRun: now.Add(time.Minute), MaxWaiting: 3})
	now = now.Add(10 * time.Second)
	add(events.TaskUpdated{Schedule: events.Schedule{Interval: events.Duration(2 * time.Minute)}, Tolerance: events.Duration(10 * time.Second),
		Timebox: events.Duration(40 * time.Second), NextRun: now.Add(2 * time.Minute), MaxWaiting: 3})
	now = now.Add(10 * time.Second)
	add(events.RunEnqueued{RunID: events.RunID(id, 1), Run: 1, Due: now, NextRun: now.Add(2 * time.Minute), Slot: now, Trigger: events.TriggerManual})
	for n := 2; n <= 600; n++ {
		now = now.Add(2 * time.Minute)
		rid := events.RunID(id, n)
		add(events.RunEnqueued{RunID: rid, Run: n, Due: now, NextRun: now.Add(2 * time.Minute), Slot: now})
		add(events.RunStarted{RunID: rid, Run: n, Deadline: now.Add(40 * time.Second)})
		add(events.RunCompleted{RunID: rid, Run: n})
	}
	if _, err := st.Append(context.Background(), stream, events.NoStream, batch...); err != nil {
		t.Fatal(err)
	}
	recs, whole := readAll(t, st, id)
	p, err := audit.ReadPage(context.Background(), st, id, audit.Range{Limit: 30})
	if err != nil {
		t.Fatal(err)
	}
	equalRows(t, "the latest page", p.Rows, whole[len(whole)-30:])
	last := p.Rows[len(p.Rows)-2] // the last start
	if last.Event != "RunStarted" || last.Needed != 110*time.Second || last.Interval != 2*time.Minute || last.Timebox != 40*time.Second || last.Waiting != 1 {
		t.Fatalf("the last start: %+v; want R3's numbers of the updated spec (needs 1m50s) and the manual run waiting", last)
	}
	at := recs[len(recs)-1].At.Add(time.Second)
	want, err := history.Explain(recs, at, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err := audit.Explain(context.Background(), st, id, at, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || len(got.Queued) != 1 || got.Queued[0].Run != 1 || got.Window != 2*time.Minute {
		t.Fatalf("explain at the end:\n got %+v\nwant %+v", got, want)
	}
}

// Many first reads deep in a long stream at once fold it at most twice:
// the others wait their turn and then start from the Marks the first ones
// made.
func TestFirstReadsAtOnceFoldTheStreamAtMostTwice(t *testing.T) {
	st, id := longTask(t, 7000)
	recs, whole := readAll(t, st, id)
	c := &counting{Store: st}
	rd := &audit.Reader{Store: c, Marks: audit.NewMarks(0, 0)}
	const readers = 8
	errs := make(chan error, readers)
	pages := make(chan audit.Page, readers)
	for range readers {
		go func() {
			p, err := rd.ReadPage(context.Background(), id, audit.Range{Limit: 50})
			errs <- err
			pages <- p
		}()
	}
	for range readers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
		equalRows(t, "a first read", (<-pages).Rows, whole[len(whole)-50:])
	}
	if n, most := c.read.Load(), int64(2*len(recs)+readers*(audit.DefaultMarkEvery+50+64)); n > most {
		t.Fatalf("%d first reads at once read %d events of a stream of %d (at most %d)", readers, n, len(recs), most)
	}
}
