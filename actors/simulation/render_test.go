package simulation_test

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/simulation"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// render prints entries as `cronactor simulate` does.
func render(w io.Writer, entries []simulation.Entry, format string) error {
	return renderResult(w, &simulation.Result{Entries: entries, Start: simulation.Epoch}, format)
}

// renderResult prints a result as `cronactor simulate` does: times as
// MM:SS, or as RFC 3339 instants when the scenario gave its start.
func renderResult(w io.Writer, res *simulation.Result, format string) error {
	tl := make([]history.TimelineEntry, len(res.Entries))
	for i, e := range res.Entries {
		tl[i] = history.TimelineEntry{At: e.At, TaskID: e.TaskID, Tick: e.Tick, Record: e.Record}
	}
	tf := history.Relative(res.Start)
	if res.Absolute {
		tf = history.Absolute()
	}
	return history.WriteTimelineAs(w, tl, tf, format)
}

func clock(s string) time.Time {
	d, err := simulation.ParseTime(s)
	if err != nil {
		panic(err)
	}
	return simulation.Epoch.Add(d)
}

// stream builds recorded events of one task as the store would return them.
type stream struct {
	t    *testing.T
	id   uuid.UUID
	recs []events.Recorded
}

func (s *stream) add(at string, e events.Event) {
	s.t.Helper()
	p, err := events.Propose(e, uuid.Nil, clock(at))
	if err != nil {
		s.t.Fatal(err)
	}
	s.recs = append(s.recs, events.Recorded{
		Metadata: events.Metadata{ID: p.ID, Stream: events.TaskStream(s.id), Version: uint64(len(s.recs)), At: p.At},
		Type:     p.Type, Schema: p.Schema, Data: p.Data,
	})
}

func workedExampleStream(t *testing.T, name string) *stream {
	s := &stream{t: t, id: uuid.NewSHA1(uuid.NameSpaceOID, []byte(name))}
	run := func(n int) uuid.UUID { return events.RunID(s.id, n) }
	s.add("00:00", events.TaskCreated{TaskID: s.id, Name: name, Owner: "simulation", Kind: "script",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(30 * time.Second), NextRun: clock("00:30")})
	s.add("00:30", events.RunEnqueued{RunID: run(1), Run: 1, Due: clock("00:30"), NextRun: clock("01:30")})
	s.add("00:35", events.RunStarted{RunID: run(1), Run: 1, Deadline: clock("01:05")})
	s.add("00:45", events.RunCompleted{RunID: run(1), Run: 1})
	s.add("01:30", events.RunEnqueued{RunID: run(2), Run: 2, Due: clock("01:30"), NextRun: clock("02:30")})
	s.add("01:32", events.RunStarted{RunID: run(2), Run: 2, Deadline: clock("02:02")})
	return s
}

// The worked example (docs/lifecycle.md), as events and ticks, prints
// exactly its table.
func TestTimelineWorkedExample(t *testing.T) {
	s := workedExampleStream(t, "A")
	ticks := []time.Time{clock("00:30"), clock("01:00"), clock("01:30")}
	entries, err := simulation.Timeline([]uuid.UUID{s.id}, [][]events.Recorded{s.recs}, ticks)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := render(&b, entries, "table"); err != nil {
		t.Fatal(err)
	}
	want := `| MM:SS | Event | nextRun | lastRun |
|---|---|---|---|
| 00:00 | Initial state | 00:30 | - |
| 00:30 | Cron enqueues A1 | 01:30 | - |
| 00:35 | A1 begins execution | 01:30 | 00:35 |
| 00:45 | A1 ends execution | 01:30 | 00:35 |
| 01:00 | Cron executes | 01:30 | 00:35 |
| 01:30 | Cron enqueues A2 | 02:30 | 00:35 |
| 01:32 | A2 begins execution (57 s after 00:35 >= 60 - 5) | 02:30 | 01:32 |
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := render(&b, entries, "json"); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(b.Bytes(), []byte("\n"))
	if got, want := string(lines[2]), `{"at":"00:35","task":"A","event":"RunStarted","run":1,"next_run":"01:30","last_run":"00:35"}`; got != want {
		t.Errorf("json line 3 = %s, want %s", got, want)
	}
	if got, want := string(lines[0]), `{"at":"00:00","task":"A","event":"TaskCreated","next_run":"00:30","last_run":null}`; got != want {
		t.Errorf("json line 1 = %s, want %s", got, want)
	}
}

// Two tasks: at one instant, rows go in scenario order; a tick row goes
// after the task's lifecycle events and before its run events at that
// instant; a deleted task gets no tick rows.
func TestTimelineOrder(t *testing.T) {
	a := workedExampleStream(t, "A")
	b := &stream{t: t, id: uuid.NewSHA1(uuid.NameSpaceOID, []byte("B"))}
	b.add("00:30", events.TaskCreated{TaskID: b.id, Name: "B", Owner: "simulation", Kind: "script",
		Schedule: events.Schedule{Interval: events.Duration(time.Hour)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(time.Minute), NextRun: clock("10:00")})
	b.add("01:00", events.TaskPaused{})
	b.add("01:30", events.TaskDeleted{})
	ticks := []time.Time{clock("00:30"), clock("01:00"), clock("01:30"), clock("02:00")}
	// B first in the scenario.
	entries, err := simulation.Timeline([]uuid.UUID{b.id, a.id}, [][]events.Recorded{b.recs, a.recs}, ticks)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		name := "A"
		if e.Task == 0 {
			name = "B"
		}
		ev := e.Record.Type
		if e.Tick {
			ev = "Tick"
		}
		got = append(got, simulation.FormatTime(e.At.Sub(simulation.Epoch))+" "+name+" "+ev)
	}
	want := []string{
		"00:00 A TaskCreated",
		"00:30 B TaskCreated", "00:30 B Tick", "00:30 A RunEnqueued",
		"00:35 A RunStarted", "00:45 A RunCompleted",
		"01:00 B TaskPaused", "01:00 B Tick", "01:00 A Tick",
		"01:30 B TaskDeleted", "01:30 A RunEnqueued",
		"01:32 A RunStarted",
		"02:00 A Tick",
	}
	if len(got) != len(want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %q, want %q", i, got[i], want[i])
		}
	}
}
