package events_test

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// BenchmarkEncode is the encoding of the events every run appends.
func BenchmarkEncode(b *testing.B) {
	task := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	run := events.RunID(task, 7)
	due := time.Date(2026, 11, 25, 11, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		e    events.Event
	}{
		{"RunEnqueued", events.RunEnqueued{RunID: run, Run: 7, Due: due, NextRun: due.Add(time.Hour), Slot: due}},
		{"RunStarted", events.RunStarted{RunID: run, Run: 7, Deadline: due.Add(30*time.Minute + 123456789)}},
		{"RunCompleted", events.RunCompleted{RunID: run, Run: 7}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, _, _, err := events.Default.Encode(c.e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestEncodeIsEncodingJSON holds the bodies Encode writes without
// reflection to what encoding/json writes for the same values (and its
// errors), on random run events with the unusual cases mixed in.
func TestEncodeIsEncodingJSON(t *testing.T) {
	next := runEvents(rand.New(rand.NewPCG(3, 4)))
	for i := range 20000 {
		e := next(i)
		want, wantErr := json.Marshal(e)
		_, _, got, err := events.Default.Encode(e)
		if (err != nil) != (wantErr != nil) || string(got) != string(want) {
			t.Fatalf("%#v:\nEncode       %s, %v\njson.Marshal %s, %v", e, got, err, want, wantErr)
		}
	}
}

// runEvents returns random RunEnqueued, RunStarted and RunCompleted
// values in turn (by i), the unusual cases (times RFC 3339 cannot show,
// strings encoding/json escapes, odd checkpoints) mixed in.
func runEvents(rng *rand.Rand) func(i int) events.Event {
	zones := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+30*60), time.FixedZone("y", -7*3600), time.FixedZone("lmt", 3600+17),
		time.FixedZone("far", 25*3600)}
	anyTime := func() time.Time {
		switch rng.IntN(8) {
		case 0:
			return time.Time{}
		case 1:
			return time.Date(10000+rng.IntN(5), 1, 1, 0, 0, 0, 0, time.UTC) // RFC 3339 cannot show it
		case 2:
			return time.Date(-rng.IntN(3), 1, 1, 0, 0, 0, 0, time.UTC)
		}
		ns := rng.Int64N(1e9)
		if rng.IntN(2) == 0 {
			ns = ns / 1e6 * 1e6
		}
		return time.Unix(rng.Int64N(4e9), ns).In(zones[rng.IntN(len(zones))])
	}
	anyTimePtr := func() *time.Time {
		if rng.IntN(2) == 0 {
			return nil
		}
		t := anyTime()
		return &t
	}
	anyInt := func() int {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return -rng.IntN(1000)
		}
		return int(rng.Int64()) >> rng.IntN(63)
	}
	anyString := func() string {
		words := []string{"", "", "backlog", events.TriggerManual, `a"b`, `back\slash`, "<html>&", "tab\t", "é", "\u2028", "\xff", "ctl\x01", "ok_1-2. x"}
		return words[rng.IntN(len(words))]
	}
	anyDuration := func() events.Duration {
		switch rng.IntN(4) {
		case 0:
			return 0
		case 1:
			return events.Duration(rng.Int64N(int64(time.Millisecond))) // µs: not ASCII
		}
		return events.Duration(rng.Int64N(int64(48 * time.Hour)))
	}
	anyID := func() uuid.UUID {
		var id uuid.UUID
		for i := range id {
			id[i] = byte(rng.Uint32())
		}
		return id
	}
	anyIDPtr := func() *uuid.UUID {
		if rng.IntN(2) == 0 {
			return nil
		}
		id := anyID()
		return &id
	}
	anyCheckpoint := func() json.RawMessage {
		cps := []string{"", "", "null", `{"n": 1}`, ` [1, 2 ]`, `"<&>"`, `{"a":"\u2028"}`, `{bad`}
		if cp := cps[rng.IntN(len(cps))]; cp != "" {
			return json.RawMessage(cp)
		}
		return nil
	}
	return func(i int) events.Event {
		var e events.Event
		switch i % 3 {
		case 0:
			e = events.RunEnqueued{RunID: anyID(), Run: anyInt(), Due: anyTime(), NextRun: anyTime(), Missed: anyInt(),
				Priority: anyInt(), Slot: anyTime(), Spacing: anyDuration(), NextSlot: anyTimePtr(), NextSpacing: anyDuration(),
				Reason: anyString(), Attempt: anyInt(), RetryOf: anyIDPtr(), Trigger: anyString()}
		case 1:
			e = events.RunStarted{RunID: anyID(), Run: anyInt(), Deadline: anyTime()}
		case 2:
			e = events.RunCompleted{RunID: anyID(), Run: anyInt(), Checkpoint: anyCheckpoint()}
		}
		return e
	}
}

// TestDecodeIsEncodingJSON holds Decode, which reads the plain bodies of
// the run events without reflection, to what encoding/json decodes from
// the same body (or whether it fails): on the bodies encoding/json writes
// for random values, and on those bodies changed the ways a stored or
// hand-written body may differ — keys reordered, spaces, a key repeated,
// in other case or unknown, a null, an escape, a number in another form,
// a body cut short.
func TestDecodeIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	next := runEvents(rng)
	names := []string{"RunEnqueued", "RunStarted", "RunCompleted"}
	runValue := regexp.MustCompile(`"(run|priority)":-?[0-9]+`)
	mutations := []func(string) string{
		func(b string) string { return b },
		func(b string) string { return strings.ReplaceAll(b, ",", " ,\n\t") },
		func(b string) string { return strings.Replace(b, `{`, `{ "run":3,`, 1) }, // repeated key
		func(b string) string {
			return strings.Replace(strings.Replace(b, `"run_id"`, `"Run_ID"`, 1), `"kind"`, `"Kind"`, 1)
		},
		func(b string) string { return strings.Replace(b, `"interval":`, `"interval":{},"x":`, 1) },
		func(b string) string { return strings.Replace(b, `}`, `,"q":{"a":{}}}`, 1) },              // case
		func(b string) string { return strings.Replace(b, `{`, `{"extra":1,`, 1) },                 // unknown
		func(b string) string { return runValue.ReplaceAllString(b, `"$1":null`) },                 // null
		func(b string) string { return runValue.ReplaceAllString(b, `"$1":1e2`) },                  // exponent
		func(b string) string { return runValue.ReplaceAllString(b, `"$1":007`) },                  // leading zeros
		func(b string) string { return runValue.ReplaceAllString(b, `"$1":"7"`) },                  // string for a number
		func(b string) string { return strings.Replace(b, `T`, `\u0054`, 1) },                      // escape in a time
		func(b string) string { return strings.Replace(b, `-`, ``, 1) },                            // uuid or time without a dash
		func(b string) string { return b[:rng.IntN(len(b))] },                                      // cut short
		func(b string) string { return b + " " },                                                   // trailing space
		func(b string) string { return b + "{}" },                                                  // trailing data
		func(b string) string { return runValue.ReplaceAllString(b, `"$1":-0`) },                   // minus zero
		func(b string) string { return runValue.ReplaceAllString(b, `"$1":99999999999999999999`) }, // too big
	}
	created := tasksCreated(rng)
	for i := range 40000 {
		e, typ := next(i), names[i%3]
		if i%4 == 3 {
			e, typ = created(), "TaskCreated"
		}
		body, err := json.Marshal(e)
		if err != nil {
			continue // a value encoding/json cannot write
		}
		b := mutations[rng.IntN(len(mutations))](string(body))
		want, wantErr := events.DecodeWithEncodingJSON(typ, []byte(b))
		schema, _ := events.Default.Schema(typ)
		got, err := events.Default.Decode(typ, schema, []byte(b))
		if (err != nil) != (wantErr != nil) || (err == nil && !reflect.DeepEqual(got, want)) {
			t.Fatalf("%s %s:\nDecode         %#v, %v\nencoding/json  %#v, %v", typ, b, got, err, want, wantErr)
		}
	}
}

// BenchmarkDecode is the decoding of the events every run appends, as
// recovery reads them.
func BenchmarkDecode(b *testing.B) {
	task := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	run := events.RunID(task, 7)
	due := time.Date(2026, 11, 25, 11, 0, 0, 0, time.UTC)
	for _, e := range []events.Event{
		events.RunEnqueued{RunID: run, Run: 7, Due: due, NextRun: due.Add(time.Hour), Slot: due},
		events.RunStarted{RunID: run, Run: 7, Deadline: due.Add(30*time.Minute + 123456789)},
		events.RunCompleted{RunID: run, Run: 7},
	} {
		typ, schema, body, err := events.Default.Encode(e)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(typ, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := events.Default.Decode(typ, schema, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// tasksCreated returns random TaskCreated values: some plain (names in
// ASCII, an interval, no payload), some with what the fast path leaves to
// encoding/json (a payload, a retry policy, cron or at schedules, other
// scripts in the names).
func tasksCreated(rng *rand.Rand) func() events.TaskCreated {
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	dur := func() events.Duration {
		if rng.IntN(3) == 0 {
			return 0
		}
		return events.Duration(rng.Int64N(int64(48 * time.Hour)))
	}
	at := func() time.Time { return time.Unix(rng.Int64N(4e9), rng.Int64N(1e9)).UTC() }
	atPtr := func() *time.Time {
		if rng.IntN(2) == 0 {
			return nil
		}
		t := at()
		return &t
	}
	return func() events.TaskCreated {
		e := events.TaskCreated{TaskID: uuid.New(), Name: pick("t0000001", "nightly report", "ünïcode", `q"uote`, ""),
			Owner: pick("bench", "team-a", "<b>"), Kind: pick("noop", "http", "exec", ""),
			Schedule:  events.Schedule{Interval: dur(), Timezone: pick("", "", "Europe/Berlin"), DSTGap: pick("", "skip")},
			Tolerance: dur(), Timebox: dur(), Priority: rng.IntN(5) - 2, NextRun: at(), NextSlot: atPtr(), MaxWaiting: rng.IntN(3)}
		e.StartAt, e.EndAt, e.MaxRuns, e.Jitter = atPtr(), atPtr(), rng.IntN(3), dur()
		e.Queue, e.MissedRunPolicy = pick("", "", "reports"), pick("", "skip")
		e.MissedAfter, e.StartDeadline, e.HeartbeatTimeout = dur(), dur(), dur()
		e.Overlap, e.PauseAfterFailures = pick("", "", "buffer_one", "cancel_other"), rng.IntN(3)
		switch rng.IntN(6) {
		case 0:
			e.Payload = json.RawMessage(`{"url": "http://x"}`)
		case 1:
			e.Retry = &events.Retry{MaxAttempts: 3, InitialBackoff: events.Duration(time.Second), Multiplier: 2}
		case 2:
			e.Schedule = events.Schedule{Cron: []string{"*/5 * * * *"}}
		case 3:
			e.Schedule = events.Schedule{At: []time.Time{at()}}
		}
		return e
	}
}
