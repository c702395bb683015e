package history_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// t0 is the start of every scenario here: 00:00.
var t0 = time.Date(2026, 1, 5, 2, 0, 0, 0, time.UTC)

func at(s string) time.Time {
	d, err := history.ParseClock(s)
	if err != nil {
		panic(err)
	}
	return t0.Add(d)
}

// taskLog appends one task's events to a real (in-memory) embedded store.
type taskLog struct {
	t     *testing.T
	store events.Store
	id    uuid.UUID
	name  string
	ver   events.ExpectedVersion
}

func newTaskLog(t *testing.T, store events.Store, name string) *taskLog {
	return &taskLog{t: t, store: store, id: uuid.NewSHA1(uuid.NameSpaceOID, []byte(name)), name: name, ver: events.NoStream}
}

func (l *taskLog) add(when string, e events.Event) {
	l.t.Helper()
	p, err := events.Propose(e, uuid.Nil, at(when))
	if err != nil {
		l.t.Fatal(err)
	}
	res, err := l.store.Append(context.Background(), events.TaskStream(l.id), l.ver, p)
	if err != nil {
		l.t.Fatal(err)
	}
	l.ver = events.Exactly(res.Version)
}

func (l *taskLog) created(when string, interval, tolerance, timebox time.Duration, first string) {
	l.add(when, events.TaskCreated{TaskID: l.id, Name: l.name, Owner: "test/1", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(interval)}, Tolerance: events.Duration(tolerance),
		Timebox: events.Duration(timebox), NextRun: at(first)})
}

func (l *taskLog) run(n int) uuid.UUID { return events.RunID(l.id, n) }

func (l *taskLog) enqueued(when string, n int, due, next string, missed int) {
	l.add(when, events.RunEnqueued{RunID: l.run(n), Run: n, Due: at(due), NextRun: at(next), Missed: missed})
}

func (l *taskLog) started(when string, n int, timebox time.Duration) {
	l.add(when, events.RunStarted{RunID: l.run(n), Run: n, Deadline: at(when).Add(timebox)})
}

func (l *taskLog) completed(when string, n int) {
	l.add(when, events.RunCompleted{RunID: l.run(n), Run: n})
}

func (l *taskLog) read() []events.Recorded {
	l.t.Helper()
	recs, err := l.store.ReadStream(context.Background(), events.TaskStream(l.id), 0, 0)
	if err != nil {
		l.t.Fatal(err)
	}
	return recs
}

func memStore(t *testing.T) events.Store {
	t.Helper()
	s, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// workedExample records the events of the worked example
// (interval 1 min, tick 30 s, tolerance 5 s).
func workedExample(t *testing.T, store events.Store) *taskLog {
	a := newTaskLog(t, store, "A")
	a.created("00:00", time.Minute, 5*time.Second, 30*time.Second, "00:30")
	a.enqueued("00:30", 1, "00:30", "01:30", 0)
	a.started("00:35", 1, 30*time.Second)
	a.completed("00:45", 1)
	a.enqueued("01:30", 2, "01:30", "02:30", 0)
	a.started("01:32", 2, 30*time.Second)
	return a
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (rerun with -update to accept)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestWorkedExampleTable reproduces the worked example's table
// (docs/lifecycle.md) exactly,
// including the tick row the caller interleaves at 01:00.
func TestWorkedExampleTable(t *testing.T) {
	a := workedExample(t, memStore(t))
	var tr history.Tracker
	var rows []history.Row
	for _, r := range a.read() {
		if r.At.Equal(at("01:30")) {
			tick, err := tr.Tick(a.id, at("01:00"))
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, tick)
		}
		row, err := tr.Apply(r)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
	}
	var b bytes.Buffer
	if err := history.WriteTable(&b, rows, history.Relative(t0)); err != nil {
		t.Fatal(err)
	}
	// Never regenerated: this is the worked example's table, copied
	// verbatim.
	want, err := os.ReadFile("testdata/worked_example.md")
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("table differs from the worked example\ngot:\n%s\nwant:\n%s", b.String(), want)
	}
}

// outcomes records drops, forced ends, failures, a pause and a deletion
// after the worked example.
func outcomes(t *testing.T, store events.Store) *taskLog {
	a := workedExample(t, store)
	a.completed("01:40", 2)
	a.enqueued("02:30", 3, "02:30", "03:30", 0)
	a.started("02:31", 3, 30*time.Second)
	a.add("03:01", events.CheckpointSaved{RunID: a.run(3), Run: 3, Checkpoint: json.RawMessage(`{"offset":7}`)})
	a.add("03:01", events.RunForcedEnd{RunID: a.run(3), Run: 3, Deadline: at("03:01"), Reason: events.ForcedTimebox,
		Detail: "still running at the deadline 30s after its start", Checkpoint: json.RawMessage(`{"offset":7}`)})
	a.enqueued("03:30", 4, "03:30", "04:30", 0)
	a.enqueued("04:30", 5, "04:30", "05:30", 0)
	a.started("04:31", 4, 30*time.Second)
	lr := at("04:31")
	a.add("04:59", events.RunDropped{RunID: a.run(5), Run: 5, Reason: events.DropTooSoon,
		Detail: "started 28s after the last start; needs 55s", LastRun: &lr,
		SinceLastStart: events.Duration(28 * time.Second), Needed: events.Duration(55 * time.Second)})
	a.add("05:00", events.RunFailed{RunID: a.run(4), Run: 4, Error: "connection refused | retry"})
	a.add("05:10", events.TaskPaused{})
	a.enqueued("09:30", 6, "05:30", "10:30", 4) // not possible while paused; shows the R8 wording
	a.add("09:40", events.TaskResumed{NextRun: at("10:00")})
	a.add("09:50", events.TaskUpdated{Schedule: events.Schedule{Interval: events.Duration(2 * time.Minute)},
		Tolerance: events.Duration(10 * time.Second), Timebox: events.Duration(time.Minute), NextRun: at("11:00")})
	a.add("10:00", events.TaskDeleted{Reason: "owner test/1 deleted"})
	a.add("10:05", events.RunDropped{RunID: a.run(6), Run: 6, Reason: events.DropDeleted, Detail: "task deleted"})
	return a
}

func TestOutcomesGolden(t *testing.T) {
	a := outcomes(t, memStore(t))
	rows, err := history.Rows(a.read())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := history.WriteTable(&b, rows, history.Relative(t0)); err != nil {
		t.Fatal(err)
	}
	golden(t, "outcomes.md", b.Bytes())

	b.Reset()
	if err := history.WriteTable(&b, rows[:3], history.Absolute()); err != nil {
		t.Fatal(err)
	}
	golden(t, "absolute.md", b.Bytes())

	b.Reset()
	if err := history.WriteLines(&b, rows, history.Relative(t0), history.LineFields{Detail: true}); err != nil {
		t.Fatal(err)
	}
	golden(t, "outcomes.jsonl", b.Bytes())
}

func TestRowValues(t *testing.T) {
	a := outcomes(t, memStore(t))
	rows, err := history.Rows(a.read())
	if err != nil {
		t.Fatal(err)
	}
	byEvent := map[string]history.Row{}
	for _, r := range rows {
		byEvent[r.Event+"/"+itoa(r.Run)] = r
	}
	forced := byEvent["RunForcedEnd/3"]
	if forced.LastRun == nil || !forced.LastRun.Equal(at("02:31")) {
		t.Errorf("forced end moved lastRun: %v", forced.LastRun)
	}
	if forced.RunID != a.run(3) || forced.Reason != events.ForcedTimebox {
		t.Errorf("forced end row %+v", forced)
	}
	drop := byEvent["RunDropped/5"]
	if drop.SinceLastStart != 28*time.Second || drop.Needed != 55*time.Second || drop.PrevLastRun == nil || !drop.PrevLastRun.Equal(at("04:31")) {
		t.Errorf("drop numbers %+v", drop)
	}
	if drop.LastRun == nil || !drop.LastRun.Equal(at("04:31")) {
		t.Errorf("drop moved lastRun: %v", drop.LastRun)
	}
	if got := byEvent["TaskPaused/0"].Status; got != history.StatusPaused {
		t.Errorf("status after pause %q", got)
	}
	if got := byEvent["TaskDeleted/0"].Status; got != history.StatusDeleted {
		t.Errorf("status after delete %q", got)
	}
	if got := byEvent["RunEnqueued/6"]; got.Missed != 4 || !got.NextRun.Equal(at("10:30")) {
		t.Errorf("enqueue 6 %+v", got)
	}
	first := rows[0]
	if first.LastRun != nil || first.NextRun == nil || !first.NextRun.Equal(at("00:30")) || first.Position.IsZero() {
		t.Errorf("first row %+v", first)
	}
}

func itoa(n int) string { return string(rune('0' + n)) }

// TestInterleaved: rows of two tasks and tick rows, as the simulation
// builds them, keep each task's own nextRun/lastRun.
func TestInterleaved(t *testing.T) {
	store := memStore(t)
	a := newTaskLog(t, store, "A")
	b := newTaskLog(t, store, "B")
	a.created("00:00", time.Minute, 5*time.Second, 30*time.Second, "00:30")
	b.created("00:00", 2*time.Minute, 5*time.Second, time.Minute, "01:00")
	a.enqueued("00:30", 1, "00:30", "01:30", 0)
	b.enqueued("01:00", 1, "01:00", "03:00", 0)
	all, err := store.ReadAll(context.Background(), events.Start, 0)
	if err != nil {
		t.Fatal(err)
	}
	var tr history.Tracker
	var rows []history.Row
	for _, r := range all {
		row, err := tr.Apply(r)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row)
		if r.At.Equal(at("00:30")) {
			tick, err := tr.Tick(b.id, at("00:30"))
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, tick)
		}
	}
	var out bytes.Buffer
	if err := history.WriteLines(&out, rows, history.Relative(t0), history.LineFields{}); err != nil {
		t.Fatal(err)
	}
	want := `{"at":"00:00","task":"A","event":"TaskCreated","next_run":"00:30","last_run":null}
{"at":"00:00","task":"B","event":"TaskCreated","next_run":"01:00","last_run":null}
{"at":"00:30","task":"A","event":"RunEnqueued","run":1,"next_run":"01:30","last_run":null}
{"at":"00:30","task":"B","event":"Tick","next_run":"01:00","last_run":null}
{"at":"01:00","task":"B","event":"RunEnqueued","run":1,"next_run":"03:00","last_run":null}
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	if _, err := tr.Tick(uuid.New(), at("00:30")); !errors.Is(err, history.ErrUnknownTask) {
		t.Errorf("tick of an unknown task: %v", err)
	}
}

func TestEventBeforeCreated(t *testing.T) {
	id := uuid.New()
	p, err := events.Propose(events.TaskPaused{}, uuid.Nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	r := events.Recorded{Metadata: events.Metadata{ID: p.ID, Stream: events.TaskStream(id), At: t0, Position: events.Position{Commit: 1, Prepare: 1}},
		Type: p.Type, Schema: p.Schema, Data: p.Data}
	if _, err := history.Rows([]events.Recorded{r}); !errors.Is(err, history.ErrUnknownTask) {
		t.Errorf("got %v", err)
	}
}

func TestClock(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "00:00"}, {35 * time.Second, "00:35"}, {59*time.Minute + 59*time.Second + 900*time.Millisecond, "59:59"},
		{time.Hour, "01:00:00"}, {26*time.Hour + 3*time.Minute + 4*time.Second, "26:03:04"}, {-90 * time.Second, "-01:30"},
	} {
		if got := history.Clock(c.d); got != c.want {
			t.Errorf("Clock(%v) = %q, want %q", c.d, got, c.want)
		}
		if c.d >= 0 {
			back, err := history.ParseClock(c.want)
			if err != nil || back != c.d.Truncate(time.Second) {
				t.Errorf("ParseClock(%q) = %v, %v", c.want, back, err)
			}
		}
	}
	for _, bad := range []string{"", "5", "1:2:3:4", "00:60", "aa:00", "00:-1", "1:60:00"} {
		if _, err := history.ParseClock(bad); err == nil {
			t.Errorf("ParseClock(%q) accepted", bad)
		}
	}
}

func TestEventJSONRoundTrip(t *testing.T) {
	a := outcomes(t, memStore(t))
	recs := a.read()
	list, err := history.ListJSON(a.id, recs)
	if err != nil {
		t.Fatal(err)
	}
	wire, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	var back history.EventList
	if err := json.Unmarshal(wire, &back); err != nil {
		t.Fatal(err)
	}
	got, err := back.Recorded()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(recs) {
		t.Fatalf("%d events back, want %d", len(got), len(recs))
	}
	for i := range recs {
		w, g := recs[i], got[i]
		if w.ID != g.ID || w.Stream != g.Stream || w.Version != g.Version || w.Position != g.Position ||
			!w.At.Equal(g.At) || w.Type != g.Type || w.Schema != g.Schema || !bytes.Equal(w.Data, g.Data) {
			t.Errorf("event %d: got %+v want %+v", i, g, w)
		}
	}
	if list.Events[2].Run != 1 || list.Events[2].RunID == nil || *list.Events[2].RunID != a.run(1) {
		t.Errorf("run fields of %+v", list.Events[2])
	}
	if list.Events[0].Run != 0 || list.Events[0].RunID != nil {
		t.Errorf("TaskCreated has run fields: %+v", list.Events[0])
	}
	if !strings.Contains(string(wire), `"type":"RunStarted"`) {
		t.Errorf("wire form %s", wire)
	}
}

func TestFromJSONRejects(t *testing.T) {
	good := history.EventJSON{Stream: "task-x", Type: "TaskPaused", Schema: 1, Position: "3", Data: json.RawMessage(`{}`)}
	if _, err := history.FromJSON(good); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*history.EventJSON){
		"no type":      func(e *history.EventJSON) { e.Type = "" },
		"no stream":    func(e *history.EventJSON) { e.Stream = "" },
		"no data":      func(e *history.EventJSON) { e.Data = nil },
		"bad data":     func(e *history.EventJSON) { e.Data = json.RawMessage(`{`) },
		"bad position": func(e *history.EventJSON) { e.Position = "x" },
	} {
		e := good
		mut(&e)
		if _, err := history.FromJSON(e); !errors.Is(err, history.ErrBadEventJSON) {
			t.Errorf("%s: got %v", name, err)
		}
	}
}
