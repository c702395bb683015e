package crontasks_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/taskstate"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// TestRebuildAfterRetention: once history retention removed a task's
// events before its TaskCompacted (the embedded store removes them from
// the global log too), a view rebuilt from zero starts the task's row at
// the TaskCompacted, and every field the task's state gives is as in the
// view that folded the whole history live; the counters count what remains.
func TestRebuildAfterRetention(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 32, 4)
	for range 400 {
		h.step()
	}
	live := openView(t, crontasks.Config{Store: store})
	ctx := context.Background()
	// Compact every task at its current version, as the actor would.
	cuts := map[string]uint64{}
	for _, st := range h.tasks {
		if !st.created {
			continue
		}
		stream := events.TaskStream(st.id)
		recs, err := store.ReadStream(ctx, stream, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		s, err := taskstate.Replay(recs)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := s.MarshalBinary()
		h.append(st, events.TaskCompacted{State: b, Events: len(recs), ToVersion: s.Version, FromAt: s.FirstAt, ToAt: s.UpdatedAt})
		v, _ := st.version.Exact()
		cuts[stream] = v
	}
	for range 200 {
		h.step()
	}
	if err := live.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for stream, v := range cuts {
		if err := store.TruncateBefore(ctx, stream, v); err != nil {
			t.Fatal(err)
		}
	}
	rebuilt := openView(t, crontasks.Config{Store: store})
	if err := rebuilt.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, st := range h.tasks {
		if !st.created {
			continue
		}
		want, err := live.Get(ctx, st.id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rebuilt.Get(ctx, st.id)
		if err != nil {
			t.Fatalf("task %s after the rebuild: %v", st.id, err)
		}
		if got.CompactedAt == nil || got.PendingCount != want.PendingCount {
			t.Errorf("task %s: compacted_at %v, pending %d (want %d)", st.id, got.CompactedAt, got.PendingCount, want.PendingCount)
		}
		if stateFields(t, got) != stateFields(t, want) {
			t.Errorf("task %s:\n rebuilt %s\n    live %s", st.id, stateFields(t, got), stateFields(t, want))
		}
		compared++
	}
	if compared < 3 {
		t.Fatalf("only %d tasks compared", compared)
	}
}

// stateFields is the row's JSON without the counters, the last outcome and
// the last start's run number, which count or name the events a view saw.
func stateFields(t *testing.T, r crontasks.Task) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"run_count", "started_count", "completed_count", "dropped_count", "forced_count", "failed_count",
		"missed_count", "retry_count", "trigger_count", "last_outcome", "last_outcome_run", "last_outcome_at", "last_run_number"} {
		delete(m, k)
	}
	b, _ = json.Marshal(m)
	return string(b)
}
