package crontasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

var (
	taskA = uuid.MustParse("a0000000-0000-4000-8000-000000000001")
	taskB = uuid.MustParse("b0000000-0000-4000-8000-000000000002")
)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func created(id uuid.UUID, name, owner string, next time.Time) events.TaskCreated {
	return events.TaskCreated{TaskID: id, Name: name, Owner: owner, Kind: "noop", Payload: json.RawMessage(`{"url":"x"}`),
		Schedule: events.Schedule{Interval: sec(60)}, Tolerance: sec(5), Timebox: sec(30), Priority: 2, NextRun: next}
}

func TestRowFieldsAndJSONNames(t *testing.T) {
	s := memStore(t)
	v := openView(t, crontasks.Config{})
	r := func(n int) uuid.UUID { return events.RunID(taskA, n) }
	appendEv(t, s, taskA, at(0), created(taskA, "A", "channel/pop3/42", at(30)))
	appendEv(t, s, taskA, at(30), events.RunEnqueued{RunID: r(1), Run: 1, Due: at(30), NextRun: at(90)})
	appendEv(t, s, taskA, at(35), events.RunStarted{RunID: r(1), Run: 1, Deadline: at(65)})
	appendEv(t, s, taskA, at(45), events.RunCompleted{RunID: r(1), Run: 1, Checkpoint: json.RawMessage(`{"uid":7}`)})
	appendEv(t, s, taskA, at(90), events.RunEnqueued{RunID: r(2), Run: 2, Due: at(90), NextRun: at(150)})
	appendEv(t, s, taskA, at(300), events.RunEnqueued{RunID: r(3), Run: 3, Due: at(150), NextRun: at(360), Missed: 2})
	appendEv(t, s, taskA, at(301), events.RunDropped{RunID: r(2), Run: 2, Reason: events.DropTooSoon, Detail: "started 266s after"})
	appendEv(t, s, taskA, at(302), events.RunStarted{RunID: r(3), Run: 3, Deadline: at(332)})
	appendEv(t, s, taskA, at(332), events.RunForcedEnd{RunID: r(3), Run: 3, Deadline: at(332), Reason: events.ForcedTimebox,
		Detail: "still running", Checkpoint: json.RawMessage(`{"uid":9}`)})
	appendEv(t, s, taskA, at(340), events.TaskPaused{})
	if err := v.CatchUp(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	got, ok, err := v.Get(taskA)
	if err != nil || !ok {
		t.Fatalf("Get: %v %v", ok, err)
	}
	if got.Status != crontasks.StatusPaused || got.RunCount != 3 || got.StartedCount != 2 || got.CompletedCount != 1 ||
		got.DroppedCount != 1 || got.ForcedCount != 1 || got.FailedCount != 0 || got.MissedCount != 2 {
		t.Errorf("counts: %+v", got)
	}
	if !got.NextRun.Equal(at(360)) || !got.LastRun.Equal(at(302)) || string(got.Checkpoint) != `{"uid":9}` {
		t.Errorf("next %v last %v checkpoint %s", got.NextRun, got.LastRun, got.Checkpoint)
	}
	if got.LastOutcome == nil || got.LastOutcome.Outcome != crontasks.OutcomeForcedEnd || got.LastOutcome.Run != 3 {
		t.Errorf("last outcome %+v", got.LastOutcome)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range strings.Fields(`id name owner kind payload interval tolerance timebox priority status next_run
		last_run run_count completed_count dropped_count forced_count failed_count missed_count checkpoint created_at updated_at`) {
		if _, ok := m[k]; !ok {
			t.Errorf("row JSON lacks %q: %s", k, b)
		}
	}
	if m["interval"] != "1m0s" || m["tolerance"] != "5s" || m["next_run"] != "2026-01-05T02:06:00Z" || m["created_at"] != "2026-01-05T02:00:00Z" {
		t.Errorf("formats: %s", b)
	}
	appendEv(t, s, taskA, at(400), events.TaskDeleted{Reason: "owner deleted"})
	if err := v.CatchUp(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	got, _, _ = v.Get(taskA)
	if got.Status != crontasks.StatusDeleted || got.NextRun != nil || got.DeleteReason != "owner deleted" {
		t.Errorf("deleted row: %+v", got)
	}
	if _, ok, _ := v.Get(taskB); ok {
		t.Error("unknown task found")
	}
}

func TestApplyIsIdempotentByPosition(t *testing.T) {
	s := memStore(t)
	newHistory(1).write(t, s, 400)
	recs := readAll(t, s)
	v := openView(t, crontasks.Config{})
	// Overlapping, repeated batches.
	for i := 0; i < len(recs); i += 37 {
		lo := max(0, i-50)
		if err := v.Apply(recs[lo:min(len(recs), i+37)]); err != nil {
			t.Fatal(err)
		}
		if err := v.Apply(recs[:min(len(recs), i+10)]); err != nil {
			t.Fatal(err)
		}
	}
	sameRows(t, "overlapping batches", viewRows(t, v), reference(t, recs))
	if v.Checkpoint() != recs[len(recs)-1].Position {
		t.Errorf("checkpoint %s, want %s", v.Checkpoint(), recs[len(recs)-1].Position)
	}
}

func TestIncrementalEqualsRebuild(t *testing.T) {
	s := memStore(t)
	h := newHistory(7)
	h.write(t, s, 300) // before the view starts: caught up
	dir := t.TempDir()
	v := openView(t, crontasks.Config{Dir: filepath.Join(dir, "view"), BatchSize: 64})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- v.Run(ctx, s) }()
	var last events.AppendResult
	for range 20 { // while it follows live
		last = h.write(t, s, 150)
	}
	if err := v.WaitFor(ctx, last.Position); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	recs := readAll(t, s)
	if len(recs) < 3000 {
		t.Fatalf("history has only %d events", len(recs))
	}
	want := reference(t, recs)
	sameRows(t, "incremental", viewRows(t, v), want)

	// Rebuild on disk from zero, with progress.
	v.Close()
	var progress []crontasks.Progress
	if err := crontasks.Rebuild(context.Background(), s, crontasks.Config{Dir: filepath.Join(dir, "view"), BatchSize: 500},
		func(p crontasks.Progress) { progress = append(progress, p) }); err != nil {
		t.Fatal(err)
	}
	if len(progress) < 2 || progress[len(progress)-1].Events != uint64(len(recs)) || progress[len(progress)-1].Head != last.Position {
		t.Errorf("progress: %+v", progress)
	}
	rebuilt := openView(t, crontasks.Config{Dir: filepath.Join(dir, "view")})
	sameRows(t, "rebuilt", viewRows(t, rebuilt), want)
	if rebuilt.Checkpoint() != last.Position {
		t.Errorf("rebuilt checkpoint %s, want %s", rebuilt.Checkpoint(), last.Position)
	}
	if _, err := os.Stat(filepath.Join(dir, "view.rebuild")); !os.IsNotExist(err) {
		t.Errorf("rebuild left its work directory: %v", err)
	}
	mem, err := crontasks.Replay(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	sameRows(t, "replayed", viewRows(t, mem), want)
}

// failingCommit stands in for a crash between building a batch and
// committing it: the batch — rows and checkpoint together — is not written.
func TestCrashBetweenApplyAndCheckpoint(t *testing.T) {
	s := memStore(t)
	newHistory(3).write(t, s, 500)
	recs := readAll(t, s)
	dir := filepath.Join(t.TempDir(), "view")
	v, err := crontasks.Open(crontasks.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	half := len(recs) / 2
	if err := v.Apply(recs[:half]); err != nil {
		t.Fatal(err)
	}
	crontasks.FailNextCommit(v, errors.New("power cut"))
	if err := v.Apply(recs[half:]); err == nil || !strings.Contains(err.Error(), "power cut") {
		t.Fatalf("Apply = %v, want the injected crash", err)
	}
	v.Close()
	v = openView(t, crontasks.Config{Dir: dir})
	if v.Checkpoint() != recs[half-1].Position {
		t.Fatalf("checkpoint after crash %s, want %s", v.Checkpoint(), recs[half-1].Position)
	}
	sameRows(t, "after crash", viewRows(t, v), reference(t, recs[:half]))
	// Restart: catch up from the checkpoint; nothing counted twice.
	if err := v.CatchUp(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	sameRows(t, "after restart", viewRows(t, v), reference(t, recs))
}

func TestQueries(t *testing.T) {
	s := memStore(t)
	newHistory(11).write(t, s, 1500)
	recs := readAll(t, s)
	v := openView(t, crontasks.Config{})
	if err := v.CatchUp(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	rows, err := crontasks.Fold(recs)
	if err != nil {
		t.Fatal(err)
	}
	dueBy := t0.Add(2 * time.Hour)
	for _, q := range []crontasks.Query{
		{}, {Owner: "channel/pop3/1"}, {Owner: "user/7", Status: crontasks.StatusActive},
		{Status: crontasks.StatusPaused}, {Status: crontasks.StatusDeleted},
		{DueBefore: dueBy}, {DueBefore: dueBy, Owner: "channel/pop3/2"}, {Owner: "nobody"},
	} {
		var want []string
		for _, r := range rows {
			ok := (q.Owner == "" || r.Owner == q.Owner) && (q.Status == "" || r.Status == q.Status) &&
				(q.DueBefore.IsZero() || r.Status == crontasks.StatusActive && r.NextRun != nil && !r.NextRun.After(q.DueBefore))
			if ok {
				want = append(want, r.ID.String())
			}
		}
		sort.Strings(want)
		for _, limit := range []int{1, 7, 0} {
			q := q
			q.Limit = limit
			var got []crontasks.Task
			pages := 0
			for {
				p, err := v.Query(q)
				if err != nil {
					t.Fatalf("%+v: %v", q, err)
				}
				pages++
				if limit > 0 && len(p.Tasks) > limit {
					t.Fatalf("%+v: page of %d", q, len(p.Tasks))
				}
				got = append(got, p.Tasks...)
				if p.Next == "" {
					break
				}
				q.Cursor = p.Next
			}
			if !q.DueBefore.IsZero() && q.Owner == "" {
				if !slices.IsSortedFunc(got, func(a, b crontasks.Task) int { return a.NextRun.Compare(*b.NextRun) }) {
					t.Errorf("%+v: due query not in next_run order", q)
				}
			}
			var ids []string
			for _, r := range got {
				ids = append(ids, r.ID.String())
			}
			sort.Strings(ids)
			if !slices.Equal(ids, want) {
				t.Errorf("query %+v limit %d: got %d rows, want %d", q, limit, len(ids), len(want))
			}
			if limit == 1 && len(want) > 1 && pages != len(want) {
				t.Errorf("query %+v: %d pages of 1 for %d rows", q, pages, len(want))
			}
		}
	}
	if len(rows) < 20 {
		t.Fatalf("only %d tasks in the history", len(rows))
	}
	// A cursor of one query is refused by another.
	p, _ := v.Query(crontasks.Query{Limit: 1})
	if _, err := v.Query(crontasks.Query{Owner: "user/7", Cursor: p.Next}); !errors.Is(err, crontasks.ErrBadCursor) {
		t.Errorf("foreign cursor: %v", err)
	}
	if _, err := v.Query(crontasks.Query{Cursor: "!!"}); !errors.Is(err, crontasks.ErrBadCursor) {
		t.Errorf("garbage cursor: %v", err)
	}
	if _, err := v.Query(crontasks.Query{Status: "sleeping"}); !errors.Is(err, crontasks.ErrBadQuery) {
		t.Errorf("bad status: %v", err)
	}
	if _, err := v.Query(crontasks.Query{Limit: 5000}); !errors.Is(err, crontasks.ErrBadQuery) {
		t.Errorf("bad limit: %v", err)
	}
}

func TestAsOfEqualsTruncatedReplay(t *testing.T) {
	s := memStore(t)
	newHistory(5).write(t, s, 800)
	recs := readAll(t, s)
	live := openView(t, crontasks.Config{})
	if err := live.CatchUp(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	liveRows := viewRows(t, live)
	for _, n := range []int{1, 2, 17, len(recs) / 3, len(recs) / 2, len(recs) - 1, len(recs)} {
		v, err := crontasks.AsOf(context.Background(), s, crontasks.Point{Position: recs[n-1].Position})
		if err != nil {
			t.Fatal(err)
		}
		sameRows(t, "as of position "+recs[n-1].Position.String(), viewRows(t, v), reference(t, recs[:n]))
		v.Close()
		when := recs[n-1].At
		var upTo []events.Recorded
		for _, r := range recs {
			if !r.At.After(when) {
				upTo = append(upTo, r)
			}
		}
		v, err = crontasks.AsOf(context.Background(), s, crontasks.Point{Time: when})
		if err != nil {
			t.Fatal(err)
		}
		sameRows(t, "as of "+when.String(), viewRows(t, v), reference(t, upTo))
		v.Close()
	}
	sameRows(t, "live view untouched", viewRows(t, live), liveRows)
	if _, err := crontasks.AsOf(context.Background(), s, crontasks.Point{}); err == nil {
		t.Error("empty point accepted")
	}
}

func TestWaitForAndLag(t *testing.T) {
	s := memStore(t)
	var clock time.Time = t0
	v := openView(t, crontasks.Config{Now: func() time.Time { return clock }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- v.Run(ctx, s) }()
	res := appendEv(t, s, taskA, at(0), created(taskA, "A", "o", at(30)))
	if err := v.WaitFor(ctx, res.Position); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := v.Get(taskA); !ok {
		t.Fatal("WaitFor returned before the write was visible")
	}
	l := v.Lag()
	if l.Events != 0 || l.Behind != 0 || l.Head != res.Position || l.Checkpoint != res.Position {
		t.Errorf("lag when caught up: %+v", l)
	}
	short, cancelShort := context.WithCancel(ctx)
	cancelShort()
	if err := v.WaitFor(short, events.Position{Commit: 99, Prepare: 99}); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitFor past the head: %v", err)
	}
	v.Close()
	if err := <-done; !errors.Is(err, crontasks.ErrClosed) {
		t.Errorf("Run after Close: %v", err)
	}
}

func TestForeignAndNewerDirectories(t *testing.T) {
	dir := t.TempDir()
	v, err := crontasks.Open(crontasks.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	v.Close()
	crontasks.WriteMarker(t, dir, `{"format":"cronactor-crontasks-view","version":99}`)
	if _, err := crontasks.Open(crontasks.Config{Dir: dir}); !errors.Is(err, crontasks.ErrNewerFormat) {
		t.Errorf("newer: %v", err)
	}
	crontasks.WriteMarker(t, dir, `{"format":"something-else","version":1}`)
	if _, err := crontasks.Open(crontasks.Config{Dir: dir}); !errors.Is(err, crontasks.ErrForeignDir) {
		t.Errorf("foreign: %v", err)
	}
	if err := (crontasks.Config{BatchSize: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "BatchSize") {
		t.Errorf("Validate: %v", err)
	}
}
