package crontasks_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// TestFinishedCronTaskRow: a cron task's row shows its schedule as written
// with its zone and policies; after TaskFinished its status is finished,
// it has no nextRun, and status=finished lists it (and active does not).
func TestFinishedCronTaskRow(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 7, 1)
	st := h.tasks[0]
	slot := t0.Add(time.Hour)
	h.append(st, events.TaskCreated{TaskID: st.id, Name: "report", Owner: "team", Kind: "noop",
		Schedule: events.Schedule{Cron: []string{"0 * * * *"}, Timezone: "Europe/Berlin"},
		Window:   events.Window{MaxRuns: 1}, Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Minute),
		NextRun: slot})
	v := openView(t, crontasks.Config{Store: store})
	ctx := context.Background()
	if err := v.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	row, err := v.Get(ctx, st.id)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(row)
	var m map[string]any
	json.Unmarshal(b, &m)
	// Every row carries every key of the schedule (DESIGN §5, §2b): a cron
	// task's interval, instants and unset window are null.
	for _, k := range []string{"interval", "at", "start_at", "end_at", "jitter"} {
		if v, has := m[k]; !has || v != nil {
			t.Errorf("%s: %v (present %v), want null", k, v, has)
		}
	}
	if !slices.Equal(row.Cron, []string{"0 * * * *"}) || row.Timezone != "Europe/Berlin" ||
		row.DSTGap != "shift" || row.DSTOverlap != "first" || row.MaxRuns != 1 || row.Status != crontasks.StatusActive {
		t.Fatalf("row %s", b)
	}
	h.append(st, events.RunEnqueued{RunID: events.RunID(st.id, 1), Run: 1, Due: slot, Slot: slot}, events.TaskFinished{Runs: 1, Reason: "max_runs 1 reached"})
	if err := v.CatchUp(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if row, err = v.Get(ctx, st.id); err != nil || row.Status != crontasks.StatusFinished || row.NextRun != nil || row.RunCount != 1 {
		t.Fatalf("after TaskFinished: %+v %v", row, err)
	}
	for status, want := range map[string][]uuid.UUID{crontasks.StatusFinished: {st.id}, crontasks.StatusActive: nil} {
		p, err := v.Query(ctx, crontasks.Query{Status: status})
		if err != nil {
			t.Fatal(err)
		}
		var got []uuid.UUID
		for _, r := range p.Tasks {
			got = append(got, r.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("status=%s lists %v, want %v", status, got, want)
		}
	}
}
