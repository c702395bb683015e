package events_test

import (
	"encoding/json"
	"math/rand/v2"
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
	rng := rand.New(rand.NewPCG(3, 4))
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
	for i := range 20000 {
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
		want, wantErr := json.Marshal(e)
		_, _, got, err := events.Default.Encode(e)
		if (err != nil) != (wantErr != nil) || string(got) != string(want) {
			t.Fatalf("%#v:\nEncode       %s, %v\njson.Marshal %s, %v", e, got, err, want, wantErr)
		}
	}
}
