package simulation_test

import (
	"bytes"
	"io"
	"strings"
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
	return history.WriteTimelineWith(w, tl, tf, format, history.TimelineOptions{})
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

// created is the stream of the task name created at 00:00 with policy p:
// every minute from 00:30, tolerance 5 s, timebox 30 s.
func created(t *testing.T, name string, p events.Policy) *stream {
	s := &stream{t: t, id: uuid.NewSHA1(uuid.NameSpaceOID, []byte(name))}
	s.add("00:00", events.TaskCreated{TaskID: s.id, Name: name, Owner: "simulation", Kind: "script",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(30 * time.Second), NextRun: clock("00:30"), Policy: p})
	return s
}

// timeline is the timeline of s alone, with ticks.
func (s *stream) timeline(ticks ...time.Time) []simulation.Entry {
	s.t.Helper()
	entries, err := simulation.Timeline([]uuid.UUID{s.id}, [][]events.Recorded{s.recs}, ticks)
	if err != nil {
		s.t.Fatal(err)
	}
	return entries
}

// rendered is entries printed as format.
func rendered(t *testing.T, entries []simulation.Entry, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := render(&b, entries, format); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func workedExampleStream(t *testing.T, name string) *stream {
	s := created(t, name, events.Policy{})
	run := func(n int) uuid.UUID { return events.RunID(s.id, n) }
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
	entries := s.timeline(clock("00:30"), clock("01:00"), clock("01:30"))
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
	if got := rendered(t, entries, "table"); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	lines := strings.Split(rendered(t, entries, "json"), "\n")
	if got, want := lines[2], `{"at":"00:35","task":"A","event":"RunStarted","run":1,"next_run":"01:30","last_run":"00:35"}`; got != want {
		t.Errorf("json line 3 = %s, want %s", got, want)
	}
	if got, want := lines[0], `{"at":"00:00","task":"A","event":"TaskCreated","next_run":"00:30","last_run":null}`; got != want {
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

// The rows of the run policies (R12–R16), from recorded events: a retry
// chain names its attempts and the run it retries, a failure and a forced
// end say when the retry falls due or why none is made, a manual trigger
// says so, and overlap and too_late drops give their reason. The JSON
// lines add attempt on a retry's run events and trigger on a triggered
// run's RunEnqueued, and nothing else.
func TestTimelinePolicies(t *testing.T) {
	s := created(t, "A", events.Policy{Retry: &events.Retry{MaxAttempts: 3, InitialBackoff: events.Duration(5 * time.Second),
		MaxBackoff: events.Duration(time.Minute), Multiplier: 2}, StartDeadline: events.Duration(20 * time.Second),
		HeartbeatTimeout: events.Duration(10 * time.Second)})
	run := func(n int) uuid.UUID { return events.RunID(s.id, n) }
	id := func(n int) *uuid.UUID { u := run(n); return &u }
	at := func(c string) *time.Time { x := clock(c); return &x }
	s.add("00:30", events.RunEnqueued{RunID: run(1), Run: 1, Due: clock("00:30"), Slot: clock("00:30"), NextRun: clock("01:30")})
	s.add("00:30", events.RunStarted{RunID: run(1), Run: 1, Deadline: clock("01:00")})
	s.add("00:32", events.RunFailed{RunID: run(1), Run: 1, Error: "disk full", RetryAt: at("00:37"), Backoff: events.Duration(5 * time.Second)})
	s.add("00:40", events.RunEnqueued{RunID: run(2), Run: 2, Due: clock("00:37"), Slot: clock("00:30"), NextRun: clock("01:30"), Attempt: 2, RetryOf: id(1)})
	s.add("00:40", events.RunStarted{RunID: run(2), Run: 2, Deadline: clock("01:10")})
	s.add("00:45", events.RunEnqueued{RunID: run(3), Run: 3, Due: clock("00:45"), Slot: clock("00:45"), NextRun: clock("01:30"), Trigger: events.TriggerManual})
	s.add("00:45", events.RunDropped{RunID: run(3), Run: 3, Reason: events.DropOverlap, Detail: "A2 is running"})
	s.add("00:50", events.RunForcedEnd{RunID: run(2), Run: 2, Deadline: clock("01:10"), Reason: events.ForcedHeartbeat,
		Detail: "no heartbeat for 10s", RetryAt: at("01:00"), Backoff: events.Duration(10 * time.Second)})
	s.add("01:00", events.RunEnqueued{RunID: run(4), Run: 4, Due: clock("01:00"), Slot: clock("00:30"), NextRun: clock("01:30"), Attempt: 3, RetryOf: id(2)})
	s.add("01:00", events.RunStarted{RunID: run(4), Run: 4, Deadline: clock("01:30")})
	s.add("01:05", events.RunFailed{RunID: run(4), Run: 4, Error: "bad input", Fatal: true, NoRetry: "the error is not retryable"})
	s.add("01:30", events.RunEnqueued{RunID: run(5), Run: 5, Due: clock("01:30"), Slot: clock("01:30"), NextRun: clock("02:30")})
	s.add("01:55", events.RunDropped{RunID: run(5), Run: 5, Reason: events.DropTooLate, Detail: "asked 25s after its slot; start_deadline 20s"})
	entries := s.timeline()
	want := `| MM:SS | Event | nextRun | lastRun |
|---|---|---|---|
| 00:00 | Initial state | 00:30 | - |
| 00:30 | Cron enqueues A1 | 01:30 | - |
| 00:30 | A1 begins execution | 01:30 | 00:30 |
| 00:32 | A1 fails (disk full; retry at 00:37 after 5 s backoff) | 01:30 | 00:30 |
| 00:40 | Cron enqueues A2 (attempt 2, retry of A1) | 01:30 | 00:30 |
| 00:40 | A2 begins execution (attempt 2, retry of A1: no spacing check) | 01:30 | 00:30 |
| 00:45 | Manual trigger enqueues A3 | 01:30 | 00:30 |
| 00:45 | A3 is dropped (overlap: A2 is running) | 01:30 | 00:30 |
| 00:50 | A2 is forced to end (heartbeat timeout: no heartbeat for 10s; retry at 01:00 after 10 s backoff) | 01:30 | 00:30 |
| 01:00 | Cron enqueues A4 (attempt 3, retry of A2) | 01:30 | 00:30 |
| 01:00 | A4 begins execution (attempt 3, retry of A2: no spacing check) | 01:30 | 00:30 |
| 01:05 | A4 fails (bad input; no retry: the error is not retryable) | 01:30 | 00:30 |
| 01:30 | Cron enqueues A5 | 02:30 | 00:30 |
| 01:55 | A5 is dropped (too late: asked 25s after its slot; start_deadline 20s) | 02:30 | 00:30 |
`
	if got := rendered(t, entries, "table"); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	wantJSON := `{"at":"00:00","task":"A","event":"TaskCreated","next_run":"00:30","last_run":null}
{"at":"00:30","task":"A","event":"RunEnqueued","run":1,"next_run":"01:30","last_run":null}
{"at":"00:30","task":"A","event":"RunStarted","run":1,"next_run":"01:30","last_run":"00:30"}
{"at":"00:32","task":"A","event":"RunFailed","run":1,"next_run":"01:30","last_run":"00:30"}
{"at":"00:40","task":"A","event":"RunEnqueued","run":2,"attempt":2,"next_run":"01:30","last_run":"00:30"}
{"at":"00:40","task":"A","event":"RunStarted","run":2,"attempt":2,"next_run":"01:30","last_run":"00:30"}
{"at":"00:45","task":"A","event":"RunEnqueued","run":3,"trigger":"manual","next_run":"01:30","last_run":"00:30"}
{"at":"00:45","task":"A","event":"RunDropped","run":3,"next_run":"01:30","last_run":"00:30","reason":"overlap"}
{"at":"00:50","task":"A","event":"RunForcedEnd","run":2,"attempt":2,"next_run":"01:30","last_run":"00:30","reason":"heartbeat_timeout"}
{"at":"01:00","task":"A","event":"RunEnqueued","run":4,"attempt":3,"next_run":"01:30","last_run":"00:30"}
{"at":"01:00","task":"A","event":"RunStarted","run":4,"attempt":3,"next_run":"01:30","last_run":"00:30"}
{"at":"01:05","task":"A","event":"RunFailed","run":4,"attempt":3,"next_run":"01:30","last_run":"00:30"}
{"at":"01:30","task":"A","event":"RunEnqueued","run":5,"next_run":"02:30","last_run":"00:30"}
{"at":"01:55","task":"A","event":"RunDropped","run":5,"next_run":"02:30","last_run":"00:30","reason":"too_late"}
`
	if got := rendered(t, entries, "json"); got != wantJSON {
		t.Errorf("json:\n%s\nwant:\n%s", got, wantJSON)
	}
}

// A tick that skipped a missed slot (R14) records SlotsMissed; the
// timeline shows it as that tick's line, with nextRun after the skip, and
// no line of its own: the published event types do not grow.
func TestTimelineSlotsMissedIsATick(t *testing.T) {
	s := created(t, "A", events.Policy{MissedRunPolicy: events.MissedSkip})
	s.add("04:00", events.SlotsMissed{Due: clock("00:30"), Slot: clock("00:30"), Missed: 4, MissedAfter: events.Duration(time.Minute),
		NextRun: clock("05:00"), Detail: "found at 04:00"})
	entries := s.timeline(clock("04:00"), clock("04:30"))
	want := `| MM:SS | Event | nextRun | lastRun |
|---|---|---|---|
| 00:00 | Initial state | 00:30 | - |
| 04:00 | Cron executes (4 intervals missed: skipped, none enqueued) | 05:00 | - |
| 04:30 | Cron executes | 05:00 | - |
`
	if got := rendered(t, entries, "table"); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	wantJSON := `{"at":"00:00","task":"A","event":"TaskCreated","next_run":"00:30","last_run":null}
{"at":"04:00","task":"A","event":"Tick","next_run":"05:00","last_run":null}
{"at":"04:30","task":"A","event":"Tick","next_run":"05:00","last_run":null}
`
	if got := rendered(t, entries, "json"); got != wantJSON {
		t.Errorf("json:\n%s\nwant:\n%s", got, wantJSON)
	}
}
