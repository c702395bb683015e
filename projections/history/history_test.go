package history_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/cronactor/cronactor/projections/internal/logtest"
	"github.com/google/uuid"
)

var (
	start = time.Date(2026, 1, 5, 2, 0, 0, 0, time.UTC)
	taskA = uuid.MustParse("a0000000-0000-4000-8000-000000000001")
)

func at(mmss string) time.Time {
	d, err := history.ParseClock(mmss)
	if err != nil {
		panic(err)
	}
	return start.Add(d)
}

func sec(n int) events.Duration { return events.Duration(time.Duration(n) * time.Second) }

// workedExample is the design's worked example: interval 1 min, tick 30 s,
// tolerance 5 s.
func workedExample(t *testing.T) *logtest.Log {
	l := logtest.New(t)
	l.Add(taskA, at("00:00"), events.TaskCreated{TaskID: taskA, Name: "A", Owner: "demo/1", Kind: "noop",
		Schedule: events.Schedule{Interval: sec(60)}, Tolerance: sec(5), Timebox: sec(30), NextRun: at("00:30")})
	r1, r2 := events.RunID(taskA, 1), events.RunID(taskA, 2)
	l.Add(taskA, at("00:30"), events.RunEnqueued{RunID: r1, Run: 1, Due: at("00:30"), NextRun: at("01:30")})
	l.Add(taskA, at("00:35"), events.RunStarted{RunID: r1, Run: 1, Deadline: at("01:05")})
	l.Add(taskA, at("00:45"), events.RunCompleted{RunID: r1, Run: 1})
	l.Add(taskA, at("01:30"), events.RunEnqueued{RunID: r2, Run: 2, Due: at("01:30"), NextRun: at("02:30")})
	l.Add(taskA, at("01:32"), events.RunStarted{RunID: r2, Run: 2, Deadline: at("02:02")})
	return l
}

func TestWorkedExampleTable(t *testing.T) {
	l := workedExample(t)
	var tr history.Tracker
	var rows []history.Row
	ticked := false
	for _, rec := range l.Events {
		// The tick at 01:00 enqueued nothing; the caller (the simulation)
		// knows it and interleaves it.
		if !ticked && rec.At.After(at("01:00")) {
			rows = append(rows, tr.Tick(at("01:00")))
			ticked = true
		}
		r, err := tr.Apply(rec)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	var got bytes.Buffer
	if err := history.WriteTable(&got, rows, history.Relative{Start: start}); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/worked_example.md")
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("table differs from DESIGN §2:\n got:\n%s\nwant:\n%s", got.String(), want)
	}
}

func TestRowsDropsForcedEndsAndLifecycle(t *testing.T) {
	l := logtest.New(t)
	l.Add(taskA, at("00:00"), events.TaskCreated{TaskID: taskA, Name: "A", Owner: "o", Kind: "noop",
		Schedule: events.Schedule{Interval: sec(60)}, Tolerance: sec(5), Timebox: sec(30), NextRun: at("00:30")})
	r := func(n int) uuid.UUID { return events.RunID(taskA, n) }
	l.Add(taskA, at("00:30"), events.RunEnqueued{RunID: r(1), Run: 1, Due: at("00:30"), NextRun: at("01:30")})
	l.Add(taskA, at("01:35"), events.RunStarted{RunID: r(1), Run: 1, Deadline: at("02:05")})
	l.Add(taskA, at("01:36"), events.RunEnqueued{RunID: r(2), Run: 2, Due: at("01:30"), NextRun: at("02:36")})
	l.Add(taskA, at("02:03"), events.RunDropped{RunID: r(2), Run: 2, Reason: events.DropTooSoon,
		LastRun: ptr(at("01:35")), SinceLastStart: sec(28), Needed: sec(55)})
	l.Add(taskA, at("02:05"), events.RunForcedEnd{RunID: r(1), Run: 1, Deadline: at("02:05"),
		Reason: events.ForcedTimebox, Detail: "still running at its 30s timebox"})
	l.Add(taskA, at("05:00"), events.RunEnqueued{RunID: r(3), Run: 3, Due: at("02:36"), NextRun: at("06:00"), Missed: 2})
	l.Add(taskA, at("05:01"), events.RunStarted{RunID: r(3), Run: 3, Deadline: at("05:31")})
	l.Add(taskA, at("05:02"), events.RunFailed{RunID: r(3), Run: 3, Error: "connection refused"})
	l.Add(taskA, at("05:10"), events.TaskPaused{})
	l.Add(taskA, at("05:20"), events.TaskResumed{NextRun: at("06:20")})
	l.Add(taskA, at("05:30"), events.TaskDeleted{Reason: "owner o deleted"})
	rows, err := history.Rows(l.Events)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	f := history.Relative{Start: start}
	if err := history.WriteTable(&b, rows, f); err != nil {
		t.Fatal(err)
	}
	want := `| MM:SS | Event | nextRun | lastRun |
|---|---|---|---|
| 00:00 | Initial state | 00:30 | - |
| 00:30 | Cron enqueues A1 | 01:30 | - |
| 01:35 | A1 begins execution | 01:30 | 01:35 |
| 01:36 | Cron enqueues A2 | 02:36 | 01:35 |
| 02:03 | A2 is dropped (started 28s after the last start; needs 55s) | 02:36 | 01:35 |
| 02:05 | A1 is forced to end (still running at its 30s timebox) | 02:36 | 01:35 |
| 05:00 | Cron enqueues A3 (2 missed intervals) | 06:00 | 01:35 |
| 05:01 | A3 begins execution (206 s after 01:35 >= 60 - 5) | 06:00 | 05:01 |
| 05:02 | A3 fails (connection refused) | 06:00 | 05:01 |
| 05:10 | A is paused | 06:00 | 05:01 |
| 05:20 | A is resumed | 06:20 | 05:01 |
| 05:30 | A is deleted (owner o deleted) | 06:20 | 05:01 |
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	if rows[4].Reason != events.DropTooSoon || rows[4].Run != 2 || rows[4].RunID != r(2) {
		t.Errorf("drop row = %+v", rows[4])
	}
	if rows[5].Reason != events.ForcedTimebox {
		t.Errorf("forced row reason = %q", rows[5].Reason)
	}
}

func ptr(t time.Time) *time.Time { return &t }

func TestClock(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "00:00"}, {95 * time.Second, "01:35"}, {59*time.Minute + 59*time.Second, "59:59"},
		{time.Hour, "01:00:00"}, {26*time.Hour + 3*time.Minute + 4*time.Second, "26:03:04"},
		{-5 * time.Second, "-00:05"}, {1500 * time.Millisecond, "00:01"},
	} {
		if got := history.Clock(c.d); got != c.want {
			t.Errorf("Clock(%v) = %q, want %q", c.d, got, c.want)
		}
		if c.d%time.Second != 0 {
			continue
		}
		back, err := history.ParseClock(c.want)
		if err != nil || back != c.d {
			t.Errorf("ParseClock(%q) = %v, %v; want %v", c.want, back, err, c.d)
		}
	}
	for _, bad := range []string{"", "5", "1:2:3:4", "00:60", "aa:00", "01::00", "-", "00:-1"} {
		if _, err := history.ParseClock(bad); err == nil {
			t.Errorf("ParseClock(%q) accepted", bad)
		}
	}
}

func TestAbsoluteFormat(t *testing.T) {
	f := history.Absolute{}
	if got := f.Format(at("01:32")); got != "2026-01-05T02:01:32Z" {
		t.Errorf("Absolute = %q", got)
	}
}

func TestRunLabel(t *testing.T) {
	if got := history.RunLabel("A", 3); got != "A3" {
		t.Errorf("got %q", got)
	}
	if got := history.RunLabel("pop3", 3); got != "pop3#3" {
		t.Errorf("got %q", got)
	}
}

func TestEventJSONRoundTrip(t *testing.T) {
	l := workedExample(t)
	js, err := history.ToJSONAll(l.Events)
	if err != nil {
		t.Fatal(err)
	}
	if js[1].Run != 1 || js[1].RunID == nil || *js[1].RunID != events.RunID(taskA, 1) {
		t.Errorf("RunEnqueued JSON run = %d %v", js[1].Run, js[1].RunID)
	}
	if js[0].Run != 0 || js[0].RunID != nil {
		t.Errorf("TaskCreated carries a run: %+v", js[0])
	}
	wire, err := json.Marshal(js)
	if err != nil {
		t.Fatal(err)
	}
	var back []history.EventJSON
	if err := json.Unmarshal(wire, &back); err != nil {
		t.Fatal(err)
	}
	recs, err := history.FromJSONAll(back)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		want := l.Events[i]
		if !reflect.DeepEqual(recs[i].Metadata, want.Metadata) || recs[i].Type != want.Type ||
			recs[i].Schema != want.Schema || !bytes.Equal(recs[i].Data, want.Data) {
			t.Errorf("event %d: got %+v want %+v", i, recs[i], want)
		}
	}
	if !strings.Contains(string(wire), `"position":"2"`) || !strings.Contains(string(wire), `"type":"RunEnqueued"`) {
		t.Errorf("wire form: %s", wire)
	}
}

func TestEventJSONRejectsMalformed(t *testing.T) {
	good := history.EventJSON{Type: "TaskPaused", Schema: 1, Position: "3", Data: json.RawMessage(`{}`)}
	if _, err := good.Recorded(); err != nil {
		t.Fatalf("good: %v", err)
	}
	for name, j := range map[string]history.EventJSON{
		"no type":      {Schema: 1, Position: "3", Data: json.RawMessage(`{}`)},
		"no schema":    {Type: "TaskPaused", Position: "3", Data: json.RawMessage(`{}`)},
		"bad position": {Type: "TaskPaused", Schema: 1, Position: "x", Data: json.RawMessage(`{}`)},
		"bad data":     {Type: "TaskPaused", Schema: 1, Position: "3", Data: json.RawMessage(`{`)},
	} {
		if _, err := j.Recorded(); !errors.Is(err, history.ErrBadEventJSON) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestRowJSON(t *testing.T) {
	rows, err := history.Rows(workedExample(t).Events)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rows[2].JSON(history.Relative{Start: start}, false))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"at":"00:35","task":"A","event":"RunStarted","run":1,"run_id":"` + events.RunID(taskA, 1).String() +
		`","next_run":"01:30","last_run":"00:35"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(rows[0].JSON(history.Relative{Start: start}, false))
	if string(b) != `{"at":"00:00","task":"A","event":"TaskCreated","next_run":"00:30","last_run":null}` {
		t.Errorf("got %s", b)
	}
}

func TestUnknownEventIsAnError(t *testing.T) {
	rec := events.Recorded{Type: "Nope", Schema: 1, Data: []byte(`{}`)}
	if _, err := history.Rows([]events.Recorded{rec}); err == nil {
		t.Fatal("unknown event accepted")
	}
}
