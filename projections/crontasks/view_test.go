package crontasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

func openView(t testing.TB, cfg crontasks.Config) *crontasks.View {
	t.Helper()
	v, err := crontasks.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// follow runs v in the background until the test ends.
func follow(t testing.TB, v *crontasks.View) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- v.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) && !errors.Is(err, crontasks.ErrClosed) {
			t.Errorf("Run: %v", err)
		}
	})
}

func waitHead(t testing.TB, v *crontasks.View, store events.HeadReader) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := v.WaitFor(ctx, store.Head()); err != nil {
		t.Fatal(err)
	}
}

// TestRebuildEqualsIncremental folds a long random history live, while it
// is being written, and compares it with a rebuild from zero and with the
// pure reference fold.
func TestRebuildEqualsIncremental(t *testing.T) {
	store := memStore(t)
	dir := t.TempDir()
	cfg := crontasks.Config{Store: store, Dir: filepath.Join(dir, "view"), BatchSize: 64}
	v := openView(t, cfg)
	follow(t, v)
	h := newHistory(t, store, 1, 60)
	for range 20 {
		h.run(600)
	}
	waitHead(t, v, store)
	recs := readAll(t, store)
	if len(recs) < 3000 {
		t.Fatalf("history too short: %d events", len(recs))
	}
	incremental := dump(t, v)
	sameRows(t, "incremental vs reference", incremental, replay(t, recs))

	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	var calls int
	var last crontasks.Progress
	cp, err := crontasks.Rebuild(context.Background(), cfg, func(p crontasks.Progress) { calls++; last = p })
	if err != nil {
		t.Fatal(err)
	}
	if cp != recs[len(recs)-1].Position || last.Applied != uint64(len(recs)) || calls < len(recs)/64 {
		t.Errorf("rebuild checkpoint %s, progress %+v after %d calls; log has %d events", cp, last, calls, len(recs))
	}
	rebuilt := openView(t, cfg)
	if rebuilt.Checkpoint() != cp {
		t.Errorf("reopened rebuilt view at %s, want %s", rebuilt.Checkpoint(), cp)
	}
	sameRows(t, "rebuilt vs incremental", dump(t, rebuilt), incremental)
}

// TestCrashBetweenApplyAndCheckpoint: a batch whose write does not happen
// (the process dies while committing) leaves neither rows nor checkpoint
// behind; reopening and catching up counts every event exactly once.
func TestCrashBetweenApplyAndCheckpoint(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 2, 20)
	h.run(1500)
	recs := readAll(t, store)
	cfg := crontasks.Config{Store: store, Dir: filepath.Join(t.TempDir(), "view"), BatchSize: 50}

	v, err := crontasks.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	half := len(recs) / 2
	if err := v.Apply(recs[:half]); err != nil {
		t.Fatal(err)
	}
	crontasks.CrashNextCommit()
	if err := v.Apply(recs[half:]); !errors.Is(err, crontasks.ErrSimulatedCrash) {
		t.Fatalf("crashing apply: %v", err)
	}
	if got := v.Checkpoint(); got != recs[half-1].Position {
		t.Fatalf("checkpoint moved by a failed batch: %s", got)
	}
	v.Close()

	v = openView(t, cfg)
	if got := v.Checkpoint(); got != recs[half-1].Position {
		t.Fatalf("reopened at %s, want %s", got, recs[half-1].Position)
	}
	sameRows(t, "after crash", dump(t, v), replay(t, recs[:half]))
	// Redelivering from well before the checkpoint (a subscriber
	// restarting) folds only what is new.
	if err := v.Apply(recs[half/2 : half+half/2]); err != nil {
		t.Fatal(err)
	}
	sameRows(t, "after an overlapping batch", dump(t, v), replay(t, recs[:half+half/2]))
	if err := v.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := v.Apply(recs); err != nil {
		t.Fatal(err)
	}
	sameRows(t, "caught up after crash", dump(t, v), replay(t, recs))
}

// TestAsOf: the view as of several points of a random history equals the
// reference fold of the log truncated there, and the live view is not
// touched.
func TestAsOf(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 3, 30)
	h.run(2000)
	recs := readAll(t, store)
	live := openView(t, crontasks.Config{Store: store})
	if err := live.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	before := dump(t, live)
	cfg := crontasks.Config{Store: store, BatchSize: 100}
	for _, n := range []int{1, 17, 250, len(recs) / 2, len(recs) - 3, len(recs)} {
		pos := recs[n-1].Position
		v, err := crontasks.AsOf(context.Background(), cfg, crontasks.Point{Position: pos})
		if err != nil {
			t.Fatal(err)
		}
		sameRows(t, "as of position "+pos.String(), dump(t, v), replay(t, recs[:n]))
		if v.Checkpoint() != pos {
			t.Errorf("as-of view at %s, want %s", v.Checkpoint(), pos)
		}
		v.Close()

		at := recs[n-1].At
		v, err = crontasks.AsOf(context.Background(), cfg, crontasks.Point{Time: at})
		if err != nil {
			t.Fatal(err)
		}
		var upTo []events.Recorded
		for _, r := range recs {
			if !r.At.After(at) {
				upTo = append(upTo, r)
			}
		}
		sameRows(t, "as of time "+at.String(), dump(t, v), replay(t, upTo))
		v.Close()
	}
	sameRows(t, "live view after as-of queries", dump(t, live), before)
	if _, err := crontasks.AsOf(context.Background(), cfg, crontasks.Point{}); !errors.Is(err, crontasks.ErrBadQuery) {
		t.Errorf("as of nothing: %v", err)
	}
}

func TestParsePoint(t *testing.T) {
	p, err := crontasks.ParsePoint("2026-03-01T00:10:00Z")
	if err != nil || !p.Time.Equal(t0.Add(10*time.Minute)) || !p.Position.IsZero() {
		t.Errorf("time: %+v %v", p, err)
	}
	p, err = crontasks.ParsePoint("1234")
	if err != nil || p.Position != (events.Position{Commit: 1234, Prepare: 1234}) {
		t.Errorf("position: %+v %v", p, err)
	}
	for _, bad := range []string{"", "0", "yesterday", "2026-03-01"} {
		if _, err := crontasks.ParsePoint(bad); !errors.Is(err, crontasks.ErrBadQuery) {
			t.Errorf("ParsePoint(%q): %v", bad, err)
		}
	}
}

// TestQueries checks every index against a filter of the reference rows,
// paging with a small limit.
func TestQueries(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 4, 80)
	h.run(3000)
	recs := readAll(t, store)
	v := openView(t, crontasks.Config{Store: store})
	if err := v.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	ref := replay(t, recs)
	ctx := context.Background()
	collect := func(q crontasks.Query) []crontasks.Task {
		t.Helper()
		var out []crontasks.Task
		q.Limit = 5
		for {
			p, err := v.Query(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Tasks) > 5 || (p.Next != "" && len(p.Tasks) != 5) {
				t.Fatalf("page of %d with next %q", len(p.Tasks), p.Next)
			}
			out = append(out, p.Tasks...)
			if p.Next == "" {
				return out
			}
			q.Cursor = p.Next
		}
	}
	filter := func(keep func(crontasks.Task) bool, less func(a, b crontasks.Task) bool) []crontasks.Task {
		var out []crontasks.Task
		for _, r := range ref {
			if keep(r) {
				out = append(out, r)
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return less(out[i], out[j]) })
		return out
	}
	byID := func(a, b crontasks.Task) bool { return string(a.ID[:]) < string(b.ID[:]) }
	byName := func(a, b crontasks.Task) bool {
		if a.Name != b.Name {
			return len(a.Name) < len(b.Name) || (len(a.Name) == len(b.Name) && a.Name < b.Name)
		}
		return byID(a, b)
	}
	byDue := func(a, b crontasks.Task) bool {
		if !a.NextRun.Equal(*b.NextRun) {
			return a.NextRun.Before(*b.NextRun)
		}
		return byID(a, b)
	}
	seen := map[string]int{}
	for _, status := range []string{crontasks.StatusActive, crontasks.StatusPaused, crontasks.StatusDeleted} {
		got := collect(crontasks.Query{Status: status})
		seen[status] = len(got)
		sameRows(t, "status "+status, got, filter(func(r crontasks.Task) bool { return r.Status == status }, byID))
	}
	if seen[crontasks.StatusActive] == 0 || seen[crontasks.StatusPaused] == 0 || seen[crontasks.StatusDeleted] == 0 {
		t.Fatalf("history does not cover every status: %v", seen)
	}
	owner := h.owner(3)
	sameRows(t, "owner", collect(crontasks.Query{Owner: owner}), filter(func(r crontasks.Task) bool { return r.Owner == owner }, byName))
	sameRows(t, "owner+status", collect(crontasks.Query{Owner: owner, Status: crontasks.StatusActive}),
		filter(func(r crontasks.Task) bool { return r.Owner == owner && r.Status == crontasks.StatusActive }, byName))
	var active []time.Time
	for _, r := range ref {
		if r.Status == crontasks.StatusActive {
			active = append(active, *r.NextRun)
		}
	}
	sort.Slice(active, func(i, j int) bool { return active[i].Before(active[j]) })
	mid := active[len(active)/2]
	due := func(r crontasks.Task) bool { return r.Status == crontasks.StatusActive && !r.NextRun.After(mid) }
	gotDue := collect(crontasks.Query{DueBefore: mid})
	if len(gotDue) == 0 {
		t.Fatal("no task due")
	}
	sameRows(t, "due", gotDue, filter(due, byDue))
	sameRows(t, "due+owner", collect(crontasks.Query{DueBefore: mid, Owner: owner}),
		filter(func(r crontasks.Task) bool { return due(r) && r.Owner == owner }, byName))
	sameRows(t, "all", collect(crontasks.Query{}), ref)

	one, err := v.Get(ctx, ref[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "get", []crontasks.Task{one}, ref[:1])
	if _, err := v.Get(ctx, uuid.New()); !errors.Is(err, crontasks.ErrNotFound) {
		t.Errorf("get of a missing task: %v", err)
	}
	named, err := v.ByOwnerName(ctx, ref[0].Owner, ref[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, "by owner and name", named, filter(func(r crontasks.Task) bool { return r.Owner == ref[0].Owner && r.Name == ref[0].Name }, byID))

	// Cursors are bound to their query and validated.
	p, err := v.Query(ctx, crontasks.Query{Owner: owner, Limit: 1})
	if err != nil || p.Next == "" {
		t.Fatalf("owner page: %+v %v", p, err)
	}
	for _, q := range []crontasks.Query{
		{Owner: h.owner(4), Cursor: p.Next}, {Cursor: p.Next}, {Owner: owner, Cursor: "!!"},
		{Status: "sleeping"}, {Limit: crontasks.MaxLimit + 1}, {Limit: -1},
	} {
		if _, err := v.Query(ctx, q); !errors.Is(err, crontasks.ErrBadQuery) {
			t.Errorf("query %+v: %v", q, err)
		}
	}
}

// TestFold checks the row of one scripted task field by field.
func TestFold(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 5, 1)
	st := h.tasks[0]
	h.step() // created
	r := func(n int) uuid.UUID { return events.RunID(st.id, n) }
	cp := json.RawMessage(`{"offset":7}`)
	h.append(st, events.RunEnqueued{RunID: r(1), Run: 1, Due: h.now, NextRun: h.now.Add(time.Minute)})
	h.append(st, events.RunEnqueued{RunID: r(2), Run: 2, Due: h.now, NextRun: h.now.Add(3 * time.Minute), Missed: 2})
	h.append(st, events.RunStarted{RunID: r(1), Run: 1, Deadline: h.now.Add(30 * time.Second)})
	started := h.now
	h.append(st, events.CheckpointSaved{RunID: r(1), Run: 1, Checkpoint: cp})
	h.append(st, events.RunForcedEnd{RunID: r(1), Run: 1, Deadline: h.now, Reason: events.ForcedTimebox, Detail: "still running"})
	h.append(st, events.RunDropped{RunID: r(2), Run: 2, Reason: events.DropTooSoon, Detail: "started 28s after the last start; needs 55s"})
	h.append(st, events.TaskPaused{})
	v := openView(t, crontasks.Config{Store: store})
	if err := v.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	got, err := v.Get(context.Background(), st.id)
	if err != nil {
		t.Fatal(err)
	}
	if got.RunCount != 2 || got.StartedCount != 1 || got.ForcedCount != 1 || got.DroppedCount != 1 || got.PendingCount != 0 ||
		got.MissedCount != 2 || got.CompletedCount != 0 || got.FailedCount != 0 {
		t.Errorf("counts %+v", got)
	}
	if got.Status != crontasks.StatusPaused || got.LastRun == nil || !got.LastRun.Equal(started) || string(got.Checkpoint) != string(cp) {
		t.Errorf("status %q lastRun %v checkpoint %s", got.Status, got.LastRun, got.Checkpoint)
	}
	if o := got.LastOutcome; o == nil || o.Run != 2 || o.Outcome != crontasks.OutcomeDropped || o.Reason != events.DropTooSoon {
		t.Errorf("last outcome %+v", o)
	}
	if got.Version != 7 || got.Position != "8" || !got.UpdatedAt.Equal(h.now) || !got.CreatedAt.Before(got.UpdatedAt) {
		t.Errorf("version %d position %s updated %v created %v", got.Version, got.Position, got.UpdatedAt, got.CreatedAt)
	}
	b, _ := json.Marshal(got)
	for _, field := range []string{"id", "name", "owner", "kind", "payload", "interval", "tolerance", "timebox", "priority", "status",
		"next_run", "last_run", "run_count", "completed_count", "dropped_count", "forced_count", "failed_count", "missed_count",
		"checkpoint", "created_at", "updated_at"} {
		var m map[string]json.RawMessage
		json.Unmarshal(b, &m)
		if _, ok := m[field]; !ok {
			t.Errorf("row JSON lacks %q: %s", field, b)
		}
	}
}

// TestWaitForAndLag: a live view lets a writer read its own write, and
// reports no lag once caught up.
func TestWaitForAndLag(t *testing.T) {
	store := memStore(t)
	v := openView(t, crontasks.Config{Store: store, Coalesce: -1,
		Archetype: archetype.Archetype{Clock: clock.NewVirtual(t0.Add(time.Hour))}})
	follow(t, v)
	h := newHistory(t, store, 6, 3)
	for range 50 {
		h.step()
		waitHead(t, v, store)
		recs := readAll(t, store)
		sameRows(t, "read your write", dump(t, v), replay(t, recs))
	}
	l := v.Lag()
	if l.Events != 0 || l.Time != 0 || l.Checkpoint != store.Head() || l.Head != store.Head() {
		t.Errorf("lag when caught up: %+v", l)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := v.WaitFor(ctx, events.Position{Commit: 1 << 40, Prepare: 1 << 40}); !errors.Is(err, context.Canceled) {
		t.Errorf("wait for a future position: %v", err)
	}
}

func TestLagBehind(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 7, 3)
	h.run(40)
	v := openView(t, crontasks.Config{Store: store})
	l := v.Lag()
	if l.Events != uint64(len(readAll(t, store))) || l.Head != store.Head() || !l.Checkpoint.IsZero() {
		t.Errorf("lag of a view that has folded nothing: %+v", l)
	}
}

func TestOpenRefuses(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 8, 3)
	h.run(40)
	dir := filepath.Join(t.TempDir(), "view")
	cfg := crontasks.Config{Store: store, Dir: dir}
	v, err := crontasks.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	v.Close()
	// The same view against another (empty) log is ahead of it.
	cfg.Store = memStore(t)
	if _, err := crontasks.Open(cfg); !errors.Is(err, crontasks.ErrAheadOfLog) {
		t.Errorf("view ahead of the log: %v", err)
	} else if msg := err.Error(); !strings.Contains(msg, "backup") || strings.Contains(msg, "run `cronactor projections rebuild`") {
		// A log shorter than its view may have lost events: the advice must
		// not be a rebuild, which would make the loss permanent.
		t.Errorf("view ahead of the log advises: %v", err)
	}
	if err := (crontasks.Config{}).Validate(); err == nil {
		t.Error("config without store accepted")
	}
	if err := (crontasks.Config{Store: store, BatchSize: -1}).Validate(); err == nil {
		t.Error("negative batch size accepted")
	}
}

// TestFailedCommitRetried: after a batch failed to be written, the same
// view folds it again from the durable rows, not from what it had folded
// in memory.
func TestFailedCommitRetried(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 12, 10)
	h.run(600)
	recs := readAll(t, store)
	v := openView(t, crontasks.Config{Store: store})
	half := len(recs) / 2
	if err := v.Apply(recs[:half]); err != nil {
		t.Fatal(err)
	}
	crontasks.CrashNextCommit()
	if err := v.Apply(recs[half:]); !errors.Is(err, crontasks.ErrSimulatedCrash) {
		t.Fatalf("crashing apply: %v", err)
	}
	if err := v.Apply(recs[half:]); err != nil {
		t.Fatal(err)
	}
	sameRows(t, "after a retried batch", dump(t, v), replay(t, recs))
}

// TestRunStopsOnUnreadableEvent: an event this build cannot decode stops
// the view with that error, and WaitFor reports it instead of waiting.
func TestRunStopsOnUnreadableEvent(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 13, 2)
	h.run(20)
	id := h.tasks[0].id
	res, err := store.Append(context.Background(), events.TaskStream(id), events.AnyVersion,
		events.Proposed{Type: "TaskRenamed", Schema: 1, At: h.now, Data: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	v := openView(t, crontasks.Config{Store: store})
	done := make(chan error, 1)
	go func() { done <- v.Run(context.Background()) }()
	if err := v.WaitFor(context.Background(), res.Position); !errors.Is(err, events.ErrUnknownType) {
		t.Errorf("WaitFor: %v", err)
	}
	if err := <-done; !errors.Is(err, events.ErrUnknownType) {
		t.Errorf("Run: %v", err)
	}
	// The events before the unreadable one are folded.
	before := readAll(t, store)
	before = before[:len(before)-1]
	if v.Checkpoint() != before[len(before)-1].Position {
		t.Errorf("checkpoint %s, want %s", v.Checkpoint(), before[len(before)-1].Position)
	}
	sameRows(t, "up to the unreadable event", dump(t, v), replay(t, before))
}
