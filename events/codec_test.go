package events_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

var (
	at      = time.Date(2026, 11, 22, 0, 0, 30, 0, time.UTC)
	taskID  = uuid.MustParse("11111111-2222-3333-4444-555555555555")
	runID   = events.RunID(taskID, 1)
	lastRun = at.Add(-time.Minute)
	endAt   = at.Add(48 * time.Hour)
)

// samples holds one filled-in value of every registered event type.
var samples = append(append([]events.Event(nil), v3Samples...),
	// Backfill (DESIGN §8.4).
	events.BackfillRequested{From: at, To: endAt, Slots: []time.Time{at, at.Add(time.Hour), endAt.Add(-time.Hour)}},
	events.RunEnqueued{RunID: runID, Run: 2, Due: endAt, NextRun: endAt.Add(time.Hour), Slot: at, Attempt: 1, Trigger: events.TriggerBackfill},
)

// v3Samples is what events-v3.jsonl (written before backfill) holds.
var v3Samples = []events.Event{
	events.TaskCreated{TaskID: taskID, Name: "poll", Owner: "channel/pop3/42", Kind: "noop",
		Payload: json.RawMessage(`{"url":"x"}`), Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
		Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Second), Priority: 3, NextRun: at},
	events.TaskUpdated{Payload: json.RawMessage(`{}`), Schedule: events.Schedule{Interval: events.Duration(2 * time.Minute)},
		Tolerance: events.Duration(time.Second), Timebox: events.Duration(time.Minute), NextRun: at},
	events.TaskPaused{},
	events.TaskResumed{NextRun: at},
	events.TaskDeleted{Reason: "owner channel/pop3/42 deleted"},
	events.RunEnqueued{RunID: runID, Run: 1, Due: at, NextRun: at.Add(time.Minute), Missed: 2, Priority: 1, Slot: at},
	events.RunStarted{RunID: runID, Run: 1, Deadline: at.Add(30 * time.Second)},
	events.RunCompleted{RunID: runID, Run: 1, Checkpoint: json.RawMessage(`{"n":1}`)},
	events.RunFailed{RunID: runID, Run: 1, Error: "boom", Checkpoint: json.RawMessage(`7`)},
	events.RunDropped{RunID: runID, Run: 1, Reason: events.DropTooSoon, Detail: "started 28s after the last start; needs 55s",
		LastRun: &lastRun, SinceLastStart: events.Duration(28 * time.Second), Needed: events.Duration(55 * time.Second)},
	events.RunForcedEnd{RunID: runID, Run: 1, Deadline: at, Reason: events.ForcedTimebox, Detail: "still running at its 30s timebox",
		Checkpoint: json.RawMessage(`{"n":2}`)},
	events.CheckpointSaved{RunID: runID, Run: 1, Checkpoint: json.RawMessage(`{"n":3}`)},
	events.TaskCreated{TaskID: taskID, Name: "nightly", Owner: "team/ops", Kind: "noop",
		Schedule: events.Schedule{Cron: []string{"30 2 * * *", "0 12 * * SAT"}, Timezone: "America/New_York",
			DSTGap: "skip", DSTOverlap: "both"},
		Window:    events.Window{StartAt: &at, EndAt: &endAt, MaxRuns: 10, Jitter: events.Duration(30 * time.Second)},
		Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(time.Hour), NextRun: at.Add(7 * time.Second),
		NextSlot: &at},
	events.TaskUpdated{Schedule: events.Schedule{At: []time.Time{at, endAt}}, Window: events.Window{MaxRuns: 1},
		Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(time.Hour), NextRun: at, Rescheduled: true},
	events.RunEnqueued{RunID: runID, Run: 1, Due: at.Add(7 * time.Second), NextRun: endAt.Add(3 * time.Second), Missed: 1,
		Slot: at, Spacing: events.Duration(24 * time.Hour), NextSlot: &endAt, NextSpacing: events.Duration(time.Hour)},
	events.TaskFinished{Runs: 3, Reason: "max_runs 3 reached"},
	events.TaskResumed{NextRun: endAt, NextSlot: &at, NextSpacing: events.Duration(time.Hour)},
	// Run policies (R12–R16): optional fields on existing types, and
	// SlotsMissed.
	events.TaskCreated{TaskID: taskID, Name: "retrying", Owner: "team/ops", Kind: "http",
		Schedule: events.Schedule{Interval: events.Duration(time.Hour)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(time.Minute), NextRun: at,
		Policy: events.Policy{Queue: "reports", Retry: &events.Retry{MaxAttempts: 3, InitialBackoff: events.Duration(time.Second),
			MaxBackoff: events.Duration(time.Minute), Multiplier: 2}, MissedRunPolicy: events.MissedSkip,
			MissedAfter: events.Duration(10 * time.Minute), StartDeadline: events.Duration(30 * time.Second),
			HeartbeatTimeout: events.Duration(15 * time.Second)}},
	events.TaskUpdated{Schedule: events.Schedule{Interval: events.Duration(time.Hour)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(time.Minute), Policy: events.Policy{Retry: &events.Retry{MaxAttempts: 1}, MissedRunPolicy: events.MissedRunOnce}},
	events.RunFailed{RunID: runID, Run: 1, Error: "503 Service Unavailable", RetryAt: &endAt, Backoff: events.Duration(2 * time.Second)},
	events.RunFailed{RunID: runID, Run: 1, Error: "400 Bad Request", Fatal: true, NoRetry: "the handler marked the error as not retryable"},
	events.RunEnqueued{RunID: runID, Run: 1, Due: endAt, NextRun: at, Slot: at, Attempt: 2, RetryOf: &taskID},
	events.RunEnqueued{RunID: runID, Run: 1, Due: at, NextRun: endAt, Slot: at, Attempt: 1, Trigger: events.TriggerManual},
	events.RunDropped{RunID: runID, Run: 1, Reason: events.DropOverlap, Detail: "run 3 is running (started 00:00:10)"},
	events.RunForcedEnd{RunID: runID, Run: 1, Deadline: endAt, Reason: events.ForcedHeartbeat, Detail: "no heartbeat for 15s",
		RetryAt: &endAt, Backoff: events.Duration(time.Second)},
	events.RunForcedEnd{RunID: runID, Run: 1, Deadline: endAt, Reason: events.ForcedProcessLost, Detail: "lost",
		NoRetry: "attempt 3 of 3"},
	events.SlotsMissed{Due: at.Add(7 * time.Second), Slot: at, Missed: 3, MissedAfter: events.Duration(time.Hour),
		NextRun: endAt.Add(3 * time.Second), NextSlot: &endAt, NextSpacing: events.Duration(time.Hour),
		Detail: "found 3h0m7s after it fell due, later than missed_after 1h0m0s"},
	// History retention (DESIGN §8.3).
	events.TaskCompacted{State: []byte{2, 0, 1, 0xff}, Events: 40, FromVersion: 0, ToVersion: 39, FromAt: at, ToAt: endAt,
		Retention: events.Duration(24 * time.Hour)},
}

// v2Samples is what events-v2.jsonl (written before history retention)
// holds: every sample but TaskCompacted.
var v2Samples = v3Samples[:len(v3Samples)-1]

// v1Samples is what the schema 1 golden stream (testdata/events-v1.jsonl,
// written before schedules) decodes to today: the same values, a
// RunEnqueued upgraded with its slot = its due time.
var v1Samples = func() []events.Event {
	out := append([]events.Event(nil), samples[:12]...)
	e := out[5].(events.RunEnqueued)
	e.Slot = e.Due
	out[5] = e
	return out
}()

func TestEveryRegisteredTypeRoundTrips(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range samples {
		p, err := events.Propose(e, uuid.Nil, at)
		if err != nil {
			t.Fatalf("%T: %v", e, err)
		}
		if p.ID == uuid.Nil || p.Type != e.EventType() || p.Schema < 1 || !p.At.Equal(at) {
			t.Fatalf("%T: proposed %+v", e, p)
		}
		got, err := events.Decode(events.Recorded{Type: p.Type, Schema: p.Schema, Data: p.Data})
		if err != nil {
			t.Fatalf("%s: decode: %v", p.Type, err)
		}
		if !reflect.DeepEqual(got, e) {
			t.Fatalf("%s round trip:\n got %#v\nwant %#v", p.Type, got, e)
		}
		seen[p.Type] = true
	}
	for _, name := range events.Default.Types() {
		if !seen[name] {
			t.Errorf("registered type %s has no round-trip sample", name)
		}
	}
}

func TestDecodeErrorsNameTypeAndField(t *testing.T) {
	cases := []struct {
		name, typ string
		schema    int
		body      string
		want      error
		field     string
	}{
		{"unknown type", "TaskExploded", 1, `{}`, events.ErrUnknownType, ""},
		{"newer schema", "RunStarted", 99, `{}`, events.ErrNewerSchema, ""},
		{"schema zero", "RunStarted", 0, `{}`, events.ErrInvalidSchemaNo, ""},
		{"not json", "RunStarted", 1, `{"run_id":`, events.ErrMalformed, ""},
		{"wrong field type", "RunStarted", 1, `{"run_id":"` + runID.String() + `","run":"one"}`, events.ErrMalformed, "run"},
		{"unknown field", "TaskPaused", 1, `{"surprise":1}`, events.ErrMalformed, "surprise"},
		{"bad duration", "TaskUpdated", 1, `{"schedule":{"interval":"soon"},"timebox":"1s","tolerance":"1s","priority":0,"next_run":"2026-01-01T00:00:00Z"}`, events.ErrMalformed, ""},
		{"missing run id", "RunCompleted", 1, `{"run":1}`, events.ErrMissingField, "run_id"},
		{"missing reason", "RunDropped", 1, `{"run_id":"` + runID.String() + `","run":1,"detail":"x"}`, events.ErrMissingField, "reason"},
		{"missing interval", "TaskCreated", 1, `{"task_id":"` + taskID.String() + `","name":"a","owner":"o","kind":"noop","schedule":{"interval":"0s"},"tolerance":"0s","timebox":"1s","priority":0,"next_run":"2026-01-01T00:00:00Z"}`, events.ErrMissingField, "schedule.interval"},
		{"trailing data", "TaskPaused", 1, `{} {}`, events.ErrMalformed, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := events.Default.Decode(c.typ, c.schema, []byte(c.body))
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			var de *events.DecodeError
			if !errors.As(err, &de) || de.Type != c.typ {
				t.Fatalf("err = %v, want a *DecodeError naming %s", err, c.typ)
			}
			if de.Field != c.field {
				t.Fatalf("field = %q, want %q (%v)", de.Field, c.field, err)
			}
			if !strings.Contains(err.Error(), c.typ) {
				t.Fatalf("message %q does not name the type", err)
			}
		})
	}
}

// widget is a test-only event type whose body changed shape: schema 1 had
// "size" in inches, schema 2 has "size_mm".
type widget struct {
	SizeMM int `json:"size_mm"`
}

func (widget) EventType() string { return "WidgetMeasured" }

func TestOlderSchemaIsUpgradedOnRead(t *testing.T) {
	r := events.NewRegistry()
	r.Register(widget{}, 2, map[int]events.Upgrader{
		1: func(b []byte) ([]byte, error) {
			var v1 struct {
				Size int `json:"size"`
			}
			if err := json.Unmarshal(b, &v1); err != nil {
				return nil, err
			}
			return json.Marshal(widget{SizeMM: v1.Size * 25})
		},
	})
	got, err := r.Decode("WidgetMeasured", 1, []byte(`{"size":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if got != (widget{SizeMM: 50}) {
		t.Fatalf("upgraded = %#v", got)
	}
	if _, err := r.Decode("WidgetMeasured", 1, []byte(`{"size":"big"}`)); !errors.Is(err, events.ErrMalformed) {
		t.Fatalf("failed upgrade: %v", err)
	}
	typ, schema, _, err := r.Encode(widget{SizeMM: 1})
	if err != nil || typ != "WidgetMeasured" || schema != 2 {
		t.Fatalf("encode = %s %d %v", typ, schema, err)
	}
}

func TestRegisterRejectsGapsInUpgrades(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("registering schema 3 with no upgrade from 2 did not panic")
		}
	}()
	events.NewRegistry().Register(widget{}, 3, map[int]events.Upgrader{1: func(b []byte) ([]byte, error) { return b, nil }})
}

func TestEncodeUnregistered(t *testing.T) {
	if _, err := events.Propose(widget{}, uuid.Nil, at); !errors.Is(err, events.ErrNotRegistered) {
		t.Fatalf("err = %v", err)
	}
}

func TestPositionsAndVersions(t *testing.T) {
	for _, s := range []string{"0", "42", "100/99"} {
		p, err := events.ParsePosition(s)
		if err != nil || p.String() != s {
			t.Fatalf("ParsePosition(%q) = %v, %v", s, p, err)
		}
	}
	for _, s := range []string{"", "x", "1/", "-1"} {
		if _, err := events.ParsePosition(s); err == nil {
			t.Fatalf("ParsePosition(%q) accepted", s)
		}
	}
	if !(events.Position{Commit: 1, Prepare: 9}).Less(events.Position{Commit: 2}) || events.Start.Less(events.Start) {
		t.Fatal("Position.Less order")
	}
	checks := []struct {
		e       events.ExpectedVersion
		version uint64
		exists  bool
		want    bool
	}{
		{events.AnyVersion, 0, false, true},
		{events.AnyVersion, 5, true, true},
		{events.NoStream, 0, false, true},
		{events.NoStream, 0, true, false},
		{events.Exactly(0), 0, false, false},
		{events.Exactly(0), 0, true, true},
		{events.Exactly(3), 4, true, false},
	}
	for _, c := range checks {
		if got := c.e.Allows(c.version, c.exists); got != c.want {
			t.Errorf("%s.Allows(%d, %v) = %v", c.e, c.version, c.exists, got)
		}
	}
}

func TestStreamNames(t *testing.T) {
	s := events.TaskStream(taskID)
	if id, err := events.TaskIDFromStream(s); err != nil || id != taskID {
		t.Fatalf("TaskIDFromStream(%q) = %v, %v", s, id, err)
	}
	for _, bad := range []string{"task-", "job-" + taskID.String(), "task-nope"} {
		if _, err := events.TaskIDFromStream(bad); !errors.Is(err, events.ErrInvalidStream) {
			t.Errorf("TaskIDFromStream(%q) = %v", bad, err)
		}
	}
	for _, bad := range []string{"", "a/b", "a\nb", strings.Repeat("x", 257)} {
		if err := events.ValidateStream(bad); !errors.Is(err, events.ErrInvalidStream) {
			t.Errorf("ValidateStream(%q) = %v", bad, err)
		}
	}
}

func TestContentIDSeparatesContentAndPlace(t *testing.T) {
	a := events.ContentID("task-x", events.Exactly(1), 0, "RunStarted", []byte(`{}`))
	if a != events.ContentID("task-x", events.Exactly(1), 0, "RunStarted", []byte(`{}`)) {
		t.Fatal("ContentID is not deterministic")
	}
	for _, b := range []uuid.UUID{
		events.ContentID("task-y", events.Exactly(1), 0, "RunStarted", []byte(`{}`)),
		events.ContentID("task-x", events.Exactly(2), 0, "RunStarted", []byte(`{}`)),
		events.ContentID("task-x", events.Exactly(1), 1, "RunStarted", []byte(`{}`)),
		events.ContentID("task-x", events.Exactly(1), 0, "RunDropped", []byte(`{}`)),
		events.ContentID("task-x", events.Exactly(1), 0, "RunStarted", []byte(`{"a":1}`)),
	} {
		if a == b {
			t.Fatal("ContentID collides across different inputs")
		}
	}
	if events.RunID(taskID, 1) == events.RunID(taskID, 2) || events.RunID(taskID, 1) != runID {
		t.Fatal("RunID is not a deterministic function of task and number")
	}
}

func FuzzDecode(f *testing.F) {
	for _, e := range samples {
		p, _ := events.Propose(e, uuid.Nil, at)
		f.Add(p.Type, p.Schema, p.Data)
	}
	f.Add("RunStarted", 1, []byte(`{"run_id":null}`))
	f.Add("Nope", 0, []byte(``))
	f.Fuzz(func(t *testing.T, typ string, schema int, data []byte) {
		e, err := events.Default.Decode(typ, schema, data)
		if err != nil {
			var de *events.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a *DecodeError", err)
			}
			return
		}
		// What decodes must encode and decode to the same value.
		typ2, schema2, data2, err := events.Default.Encode(e)
		if err != nil || typ2 != typ {
			t.Fatalf("re-encode %s: %v", typ, err)
		}
		e2, err := events.Default.Decode(typ2, schema2, data2)
		if err != nil {
			t.Fatalf("re-decode %s: %v", typ, err)
		}
		if !reflect.DeepEqual(e, e2) {
			t.Fatalf("%s not stable:\n%#v\n%#v", typ, e, e2)
		}
	})
}
