package scheduler

import (
	"reflect"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// A record reads back as the task it was made of, position included (a
// Prepare apart from Commit too), and comes back Tracked; a cut record is
// refused.
func TestRecordRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 13, 0, 0, 123456789, time.UTC)
	id := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	st := rules.Evolve(rules.State{}, events.Metadata{At: t0}, events.TaskCreated{TaskID: id, Name: "t0000001", Owner: "bench",
		Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Hour)}, NextRun: t0.Add(time.Hour).Truncate(time.Second)})
	for _, pos := range []events.Position{{}, {Commit: 100000, Prepare: 100000}, {Commit: 7, Prepare: 3}, {Commit: 3, Prepare: 7}} {
		in := task.Initial{State: st, Position: pos}
		rec := newRecord(&in)
		var got task.Initial
		if err := readRecord(rec, &got); err != nil {
			t.Fatal(err)
		}
		in.Tracked = true
		if !reflect.DeepEqual(got, in) {
			t.Fatalf("position %v:\n got %+v\nwant %+v", pos, got, in)
		}
		if err := readRecord(rec[:len(rec)-1], &got); err == nil {
			t.Fatalf("position %v: a cut record read", pos)
		}
		if pos.Commit == 100000 {
			t.Logf("an interval task's record at position 100000: %d bytes", len(rec))
		}
	}
}
