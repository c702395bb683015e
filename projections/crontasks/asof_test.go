package crontasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// asOfTime is the reference of a point in time: the events decided at or
// before at, each stream ending at its first event decided after.
func asOfTime(recs []events.Recorded, at time.Time) []events.Recorded {
	ended := map[string]bool{}
	var out []events.Recorded
	for _, r := range recs {
		if ended[r.Stream] || r.At.After(at) {
			ended[r.Stream] = true
			continue
		}
		out = append(out, r)
	}
	return out
}

// sameAnswers compares every kind of read of got with want: all rows, each
// status, each owner, due before several times, by owner and name, by id.
// The index reads are what an as-of view merges from its snapshot.
func sameAnswers(t *testing.T, what string, got, want *crontasks.View) {
	t.Helper()
	ctx := context.Background()
	collect := func(v *crontasks.View, q crontasks.Query) []crontasks.Task {
		t.Helper()
		var out []crontasks.Task
		q.Limit = 7
		for {
			p, err := v.Query(ctx, q)
			if err != nil {
				t.Fatalf("%s: %+v: %v", what, q, err)
			}
			out = append(out, p.Tasks...)
			if p.Next == "" {
				return out
			}
			q.Cursor = p.Next
		}
	}
	all := collect(want, crontasks.Query{})
	queries := []crontasks.Query{{}, {Status: crontasks.StatusActive}, {Status: crontasks.StatusPaused}, {Status: crontasks.StatusDeleted}}
	for i := range 5 {
		queries = append(queries, crontasks.Query{Owner: fmt.Sprintf("channel/pop3/%d", i)})
	}
	for _, d := range []time.Duration{0, 5 * time.Minute, time.Hour, 10 * time.Hour} {
		queries = append(queries, crontasks.Query{DueBefore: t0.Add(d)}, crontasks.Query{DueBefore: t0.Add(d), Owner: "channel/pop3/1"})
	}
	for _, q := range queries {
		sameRows(t, fmt.Sprintf("%s, query %+v", what, q), collect(got, q), collect(want, q))
	}
	for _, r := range all {
		g, err := got.Get(ctx, r.ID)
		if err != nil {
			t.Fatalf("%s: get %s: %v", what, r.ID, err)
		}
		sameRows(t, what+", get", []crontasks.Task{g}, []crontasks.Task{r})
		gn, err := got.ByOwnerName(ctx, r.Owner, r.Name)
		if err != nil {
			t.Fatal(err)
		}
		wn, err := want.ByOwnerName(ctx, r.Owner, r.Name)
		if err != nil {
			t.Fatal(err)
		}
		sameRows(t, what+", by owner and name", gn, wn)
	}
}

// checkPoints compares live.AsOf with the fold from zero (crontasks.AsOf)
// and the reference replay at many positions and times of recs.
func checkPoints(t *testing.T, live *crontasks.View, store events.Store, recs []events.Recorded, every int) {
	t.Helper()
	ctx := context.Background()
	cfg := crontasks.Config{Store: store, BatchSize: 50}
	var ns []int
	for n := 1; n <= len(recs); n += every {
		ns = append(ns, n)
	}
	ns = append(ns, len(recs)-1, len(recs))
	for _, n := range ns {
		pos, at := recs[n-1].Position, recs[n-1].At
		for _, p := range []crontasks.Point{{Position: pos}, {Time: at}, {Time: at.Add(4 * time.Minute)}, {Position: pos, Time: at.Add(-30 * time.Second)}} {
			got, err := live.AsOf(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { got.Close() }) // before the live view's, after a failure too
			ref := recs[:n]
			if !p.Time.IsZero() {
				upTo := recs
				if !p.Position.IsZero() {
					upTo = recs[:n]
				}
				ref = asOfTime(upTo, p.Time)
			}
			if rows, ref := dump(t, got), replay(t, ref); len(rows)+len(ref) > 0 {
				sameRows(t, "as of "+p.String()+" vs replay", rows, ref)
			}
			if p.Time.IsZero() && got.Checkpoint() != pos {
				t.Errorf("as of %s: checkpoint %s", p, got.Checkpoint())
			}
			if n == len(recs) || (n > len(recs)/2 && n <= len(recs)/2+every) {
				want, err := crontasks.AsOf(ctx, cfg, p)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { want.Close() })
				sameAnswers(t, "as of "+p.String(), got, want)
				want.Close()
			}
			got.Close()
		}
	}
}

// TestViewAsOfCrossesSnapshots: the live view's AsOf, which folds from its
// nearest snapshot, equals a truncated replay at points before, on and
// between snapshots, while the snapshots are thinned out as the log grows,
// and while the view has not folded the latest events yet.
func TestViewAsOfCrossesSnapshots(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 5, 40)
	h.run(2400)
	late := &simTask{id: uuid.NewSHA1(uuid.NameSpaceOID, []byte("late")), version: events.NoStream}
	h.append(late, events.TaskCreated{TaskID: late.id, Name: "late", Owner: h.owner(1), Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Timebox: events.Duration(time.Second), NextRun: h.now})
	live := openView(t, crontasks.Config{Store: store, BatchSize: 16, SnapshotEvery: 64, Snapshots: 4})
	if err := live.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	h.run(150) // appended, not folded by the live view
	// Among them, the clock of a task created just before is set back an
	// hour: as of any time, that event comes after the task's part ended.
	now := h.now
	h.now = t0.Add(-time.Hour)
	h.append(late, events.TaskUpdated{Payload: json.RawMessage(`{"v":3}`), Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
		Tolerance: events.Duration(time.Second), Timebox: events.Duration(time.Second), NextRun: h.now})
	h.now = now
	h.run(150)
	recs := readAll(t, store)
	if len(recs) < 1500 {
		t.Fatalf("history too short: %d events", len(recs))
	}
	before := dump(t, live)
	checkPoints(t, live, store, recs, 307)
	sameRows(t, "live view after as-of queries", dump(t, live), before)
}

// TestViewAsOfSkewedClocks: events are not in time order across streams
// (each task's clock is off by up to two minutes, and some go back), so a
// point in time is not a prefix of the log; AsOf still equals the
// reference, also where it skips the part of the log decided after it.
//
// A view reopened from its directory did not see when the events before
// its checkpoint were decided; its snapshots serve points in time only once
// a fold from the start has read them.
func TestViewAsOfSkewedClocks(t *testing.T) {
	store, recs := skewedLog(t)
	live := openView(t, crontasks.Config{Store: store, BatchSize: 32, SnapshotEvery: 100, Snapshots: 8})
	if err := live.Apply(recs[:len(recs)-200]); err != nil {
		t.Fatal(err)
	}
	checkPoints(t, live, store, recs, 293)

	cfg := crontasks.Config{Store: store, Dir: filepath.Join(t.TempDir(), "view"), BatchSize: 32, SnapshotEvery: 100, Snapshots: 8}
	v, err := crontasks.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Apply(recs[:len(recs)/2]); err != nil {
		t.Fatal(err)
	}
	if err := v.Close(); err != nil {
		t.Fatal(err)
	}
	reopened := openView(t, cfg)
	if err := reopened.Apply(recs[:len(recs)-100]); err != nil {
		t.Fatal(err)
	}
	checkPoints(t, reopened, store, recs, 293)
}

// skewedLog writes a random history whose tasks' clocks disagree. Around
// the middle of the log one task's clock runs three hours ahead for a
// while; near the end another's is set back three hours.
func skewedLog(t *testing.T) (events.Store, []events.Recorded) {
	src := memStore(t)
	newHistory(t, src, 6, 30).run(1200)
	store := memStore(t)
	rng := rand.New(rand.NewPCG(6, 7))
	skew := map[string]time.Duration{}
	ctx := context.Background()
	srcRecs := readAll(t, src)
	ahead := srcRecs[len(srcRecs)/2-80].Stream
	for i, r := range srcRecs {
		if _, ok := skew[r.Stream]; !ok {
			skew[r.Stream] = time.Duration(rng.IntN(240)-120) * time.Second
		}
		if rng.IntN(50) == 0 {
			skew[r.Stream] -= 90 * time.Second // a clock set back
		}
		switch {
		case i == len(srcRecs)/2-80:
			skew[ahead] += 3 * time.Hour
		case i == len(srcRecs)/2-10:
			skew[ahead] -= 3 * time.Hour
		case i == len(srcRecs)-150:
			skew[r.Stream] -= 3 * time.Hour // set back, among the events the views have not folded
		}
		expected := events.NoStream
		if r.Version > 0 {
			expected = events.Exactly(r.Version - 1)
		}
		if _, err := store.Append(ctx, r.Stream, expected, events.Proposed{ID: r.ID, Type: r.Type, Schema: r.Schema,
			At: r.At.Add(skew[r.Stream]), Data: r.Data}); err != nil {
			t.Fatal(err)
		}
	}
	return store, readAll(t, store)
}

// countingStore counts the events ReadAll hands out.
type countingStore struct {
	events.Store
	read atomic.Int64
}

func (c *countingStore) ReadAll(ctx context.Context, after events.Position, limit int) ([]events.Recorded, error) {
	recs, err := c.Store.ReadAll(ctx, after, limit)
	c.read.Add(int64(len(recs)))
	return recs, err
}

func (c *countingStore) Head() events.Position {
	return c.Store.(interface{ Head() events.Position }).Head()
}

// TestViewAsOfReadsFromTheNearestSnapshot: the events an as-of query reads
// are bounded by the snapshot spacing and the page size, not by the length
// of the log; the fold from zero reads everything before the point.
func TestViewAsOfReadsFromTheNearestSnapshot(t *testing.T) {
	mem := memStore(t)
	store := &countingStore{Store: mem}
	newHistory(t, mem, 8, 50).run(6000)
	const every, batch = 200, 50
	live := openView(t, crontasks.Config{Store: store, BatchSize: batch, SnapshotEvery: every, Snapshots: 1024})
	if err := live.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, mem)
	ctx := context.Background()
	bound := int64(every + 2*batch)
	for _, n := range []int{len(recs) / 3, len(recs) / 2, len(recs) - 10} {
		for _, p := range []crontasks.Point{{Position: recs[n-1].Position}, {Time: recs[n-1].At}} {
			store.read.Store(0)
			v, err := live.AsOf(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			v.Close()
			if got := store.read.Load(); got > bound {
				t.Errorf("as of %s (event %d of %d): read %d events, want at most %d", p, n, len(recs), got, bound)
			}
			store.read.Store(0)
			v, err = crontasks.AsOf(ctx, crontasks.Config{Store: store, BatchSize: batch}, p)
			if err != nil {
				t.Fatal(err)
			}
			v.Close()
			if got := store.read.Load(); got < int64(n) {
				t.Errorf("fold from zero as of %s read only %d events", p, got)
			}
		}
	}
}

// TestViewAsOfKeepsSnapshotsWhileRead: a live view that goes on folding
// (and thinning its snapshots) while as-of views read from them leaves the
// as-of views intact; closing them and then the live view leaks nothing.
func TestViewAsOfKeepsSnapshotsWhileRead(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 9, 20)
	h.run(1000)
	live, err := crontasks.Open(crontasks.Config{Store: store, BatchSize: 10, SnapshotEvery: 20, Snapshots: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := live.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, store)
	var open []*crontasks.View
	var want [][]crontasks.Task
	for _, n := range []int{len(recs) / 2, len(recs) - 5} {
		v, err := live.AsOf(context.Background(), crontasks.Point{Position: recs[n-1].Position})
		if err != nil {
			t.Fatal(err)
		}
		open, want = append(open, v), append(want, replay(t, recs[:n]))
	}
	h.run(1000)
	if err := live.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	for i, v := range open {
		sameRows(t, "as-of view after the live view moved on", dump(t, v), want[i])
		if err := v.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := live.Close(); err != nil {
		t.Fatalf("close the live view: %v", err)
	}
	if _, err := live.AsOf(context.Background(), crontasks.Point{Position: recs[0].Position}); err == nil {
		t.Error("AsOf on a closed view")
	}
}
