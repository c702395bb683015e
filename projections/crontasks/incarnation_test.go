package crontasks_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// recreatedLog is a task deleted while run 1 runs and runs 2 and 3 wait,
// then created again (the create drops the old waiting runs), after which
// the old running run completes with a checkpoint.
func recreatedLog(t *testing.T) (uuid.UUID, []events.Recorded, time.Time) {
	t.Helper()
	id := uuid.MustParse("bbbbbbbb-0000-4000-8000-000000000001")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	stream := events.TaskStream(id)
	var log []events.Recorded
	add := func(sec int, evs ...events.Event) {
		for _, e := range evs {
			at := t0.Add(time.Duration(sec) * time.Second)
			p, err := events.Propose(e, uuid.Nil, at)
			if err != nil {
				t.Fatal(err)
			}
			n := uint64(len(log))
			log = append(log, events.Recorded{Metadata: events.Metadata{Stream: stream, Version: n, At: at,
				Position: events.Position{Commit: n + 1, Prepare: n + 1}}, Type: p.Type, Schema: p.Schema, Data: p.Data})
		}
	}
	run := func(n int) uuid.UUID { return events.RunID(id, n) }
	spec := events.TaskCreated{TaskID: id, Name: "n", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
		Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(50 * time.Second), NextRun: t0.Add(30 * time.Second)}
	add(0, spec)
	add(30, events.RunEnqueued{RunID: run(1), Run: 1, Due: t0.Add(30 * time.Second), NextRun: t0.Add(90 * time.Second)})
	add(31, events.RunStarted{RunID: run(1), Run: 1, Deadline: t0.Add(81 * time.Second)})
	add(35, events.CheckpointSaved{RunID: run(1), Run: 1, Checkpoint: json.RawMessage(`{"old":1}`)})
	add(90, events.RunEnqueued{RunID: run(2), Run: 2, Due: t0.Add(90 * time.Second), NextRun: t0.Add(150 * time.Second)})
	add(150, events.RunEnqueued{RunID: run(3), Run: 3, Due: t0.Add(150 * time.Second), NextRun: t0.Add(210 * time.Second)})
	add(160, events.TaskDeleted{Reason: "owner o deleted"})
	again := spec
	again.Priority, again.NextRun = 4, t0.Add(300*time.Second)
	add(170, events.RunDropped{RunID: run(2), Run: 2, Reason: events.DropDeleted, Detail: "created again"},
		events.RunDropped{RunID: run(3), Run: 3, Reason: events.DropDeleted, Detail: "created again"}, again)
	add(175, events.RunCompleted{RunID: run(1), Run: 1, Checkpoint: json.RawMessage(`{"old":2}`)})
	return id, log, t0.Add(170 * time.Second)
}

// A task created again after a delete is a new incarnation: its row has no
// trace of the deletion, no lastRun, no checkpoint, no last outcome and
// counts from zero (README: it "starts clean"), even once a run of the old
// incarnation ends; its own runs count from there.
func TestRecreatedTaskRowStartsClean(t *testing.T) {
	id, log, recreated := recreatedLog(t)
	store, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	v, err := crontasks.Open(crontasks.Config{Store: store, CacheRows: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for _, r := range log { // one event a batch: every row read back from disk
		if err := v.Apply([]events.Recorded{r}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := v.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != crontasks.StatusActive || got.DeletedAt != nil || got.DeleteReason != "" {
		t.Errorf("status %q deleted_at %v delete_reason %q, want active with no deletion", got.Status, got.DeletedAt, got.DeleteReason)
	}
	if got.LastRun != nil || got.Checkpoint != nil || got.LastOutcome != nil {
		t.Errorf("last_run %v checkpoint %s last_outcome %+v carried over from the old incarnation", got.LastRun, got.Checkpoint, got.LastOutcome)
	}
	if got.Priority != 4 || got.NextRun == nil || !got.NextRun.Equal(recreated.Add(130*time.Second)) || !got.CreatedAt.Equal(recreated) {
		t.Errorf("priority %d next_run %v created_at %s, want the new incarnation's", got.Priority, got.NextRun, got.CreatedAt)
	}
	if got.Incarnation != 2 {
		t.Errorf("incarnation %d, want 2", got.Incarnation)
	}
	if got.RunCount != 0 || got.StartedCount != 0 || got.CompletedCount != 0 || got.DroppedCount != 0 || got.PendingCount != 0 || got.LastRunNumber != 0 {
		t.Errorf("runs %d started %d completed %d dropped %d pending %d last_run_number %d, want all 0: the old incarnation's counts carried over",
			got.RunCount, got.StartedCount, got.CompletedCount, got.DroppedCount, got.PendingCount, got.LastRunNumber)
	}

	// The new incarnation's first run counts as its first.
	stream, n := events.TaskStream(id), uint64(len(log))
	run4 := events.RunID(id, 4)
	for i, e := range []events.Event{
		events.RunEnqueued{RunID: run4, Run: 4, Due: recreated.Add(130 * time.Second), NextRun: recreated.Add(190 * time.Second)},
		events.RunStarted{RunID: run4, Run: 4, Deadline: recreated.Add(180 * time.Second)},
		events.RunFailed{RunID: run4, Run: 4, Error: "boom"},
	} {
		at := recreated.Add(time.Duration(130+i) * time.Second)
		p, err := events.Propose(e, uuid.Nil, at)
		if err != nil {
			t.Fatal(err)
		}
		ver := n + uint64(i)
		if err := v.Apply([]events.Recorded{{Metadata: events.Metadata{Stream: stream, Version: ver, At: at,
			Position: events.Position{Commit: ver + 1, Prepare: ver + 1}}, Type: p.Type, Schema: p.Schema, Data: p.Data}}); err != nil {
			t.Fatal(err)
		}
	}
	got, err = v.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got.RunCount != 1 || got.StartedCount != 1 || got.FailedCount != 1 || got.PendingCount != 0 || got.LastRunNumber != 4 ||
		got.LastOutcome == nil || got.LastOutcome.Run != 4 {
		t.Errorf("after the new incarnation's first run: runs %d started %d failed %d pending %d last_run_number %d last_outcome %+v, want 1, 1, 1, 0, 4, run 4",
			got.RunCount, got.StartedCount, got.FailedCount, got.PendingCount, got.LastRunNumber, got.LastOutcome)
	}
}
