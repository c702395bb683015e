package crontasks_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// TestPolicyRow: a task's row shows its run policy with the defaults, the
// retries and triggers it enqueued, and what it is doing now (idle,
// queued, running) with that run's ID, attempt and times.
func TestPolicyRow(t *testing.T) {
	store := memStore(t)
	h := newHistory(t, store, 11, 1)
	st := h.tasks[0]
	h.append(st, events.TaskCreated{TaskID: st.id, Name: "poll", Owner: "team", Kind: "http",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(30 * time.Second), NextRun: t0.Add(time.Minute)})
	v := openView(t, crontasks.Config{Store: store})
	ctx := context.Background()
	get := func() (crontasks.Task, map[string]any) {
		t.Helper()
		if err := v.CatchUp(ctx, nil); err != nil {
			t.Fatal(err)
		}
		row, err := v.Get(ctx, st.id)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(row)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return row, m
	}
	row, m := get()
	for k, want := range map[string]any{"queue": "default", "retry": nil, "missed_run_policy": "run_once", "missed_after": nil,
		"start_deadline": nil, "heartbeat_timeout": nil, "retry_count": 0.0, "trigger_count": 0.0, "run_state": "idle"} {
		if got, ok := m[k]; !ok || got != want {
			t.Errorf("new task: %s = %v (present %v), want %v", k, got, ok, want)
		}
	}
	for _, k := range []string{"run_id", "run_started_at", "run_enqueued_at", "run_attempt"} {
		if _, ok := m[k]; ok {
			t.Errorf("idle task's row has %s", k)
		}
	}

	retry := &events.Retry{MaxAttempts: 3, InitialBackoff: events.Duration(time.Second), MaxBackoff: events.Duration(time.Minute), Multiplier: 2}
	h.append(st, events.TaskUpdated{Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(30 * time.Second), Policy: events.Policy{Queue: "reports", Retry: retry, MissedRunPolicy: events.MissedSkip,
			MissedAfter: events.Duration(10 * time.Second), StartDeadline: events.Duration(20 * time.Second), HeartbeatTimeout: events.Duration(5 * time.Second)}})
	row, m = get()
	if row.Queue != "reports" || row.Retry == nil || *row.Retry != (crontasks.Retry{MaxAttempts: 3, InitialBackoff: events.Duration(time.Second),
		MaxBackoff: events.Duration(time.Minute), Multiplier: 2}) || row.MissedRunPolicy != "skip" ||
		m["missed_after"] != "10s" || m["start_deadline"] != "20s" || m["heartbeat_timeout"] != "5s" {
		t.Fatalf("after the update: %v", m)
	}
	if r := m["retry"].(map[string]any); r["initial_backoff"] != "1s" || r["max_backoff"] != "1m0s" || r["multiplier"] != 2.0 || r["max_attempts"] != 3.0 {
		t.Errorf("retry as JSON: %v", r)
	}

	r1, r2, r3 := events.RunID(st.id, 1), events.RunID(st.id, 2), events.RunID(st.id, 3)
	h.append(st, events.RunEnqueued{RunID: r1, Run: 1, Due: t0.Add(time.Minute), NextRun: t0.Add(2 * time.Minute)})
	row, _ = get()
	if row.RunState != crontasks.RunQueued || *row.RunID != r1 || row.RunNumber != 1 || row.RunAttempt != 1 || row.RunEnqueuedAt == nil || row.RunStartedAt != nil {
		t.Fatalf("queued: %+v", row)
	}
	h.append(st, events.RunStarted{RunID: r1, Run: 1, Deadline: h.now.Add(30 * time.Second)})
	row, _ = get()
	if row.RunState != crontasks.RunRunning || *row.RunID != r1 || row.RunStartedAt == nil || !row.RunStartedAt.Equal(h.now) {
		t.Fatalf("running: %+v", row)
	}
	// A trigger while it runs: the row still shows the running one.
	h.append(st, events.RunEnqueued{RunID: r2, Run: 2, Due: h.now, NextRun: t0.Add(2 * time.Minute), Trigger: events.TriggerManual})
	if row, _ = get(); row.RunState != crontasks.RunRunning || *row.RunID != r1 || row.TriggerCount != 1 {
		t.Fatalf("running with a trigger waiting: %+v", row)
	}
	due := h.now.Add(time.Second)
	h.append(st, events.RunFailed{RunID: r1, Run: 1, Error: "HTTP 500", RetryAt: &due, Backoff: events.Duration(time.Second)},
		events.RunDropped{RunID: r2, Run: 2, Reason: events.DropOverlap})
	if row, m = get(); row.RunState != crontasks.RunIdle || row.RunID != nil || row.FailedCount != 1 || row.NextRetry == nil || !row.NextRetry.Equal(due) {
		t.Fatalf("after the failure: %v", m)
	}
	h.append(st, events.RunEnqueued{RunID: r3, Run: 3, Due: t0.Add(time.Minute), NextRun: t0.Add(2 * time.Minute), Attempt: 2, RetryOf: &r1})
	row, _ = get()
	if row.RunState != crontasks.RunQueued || *row.RunID != r3 || row.RunAttempt != 2 || row.RetryCount != 1 || row.RunCount != 3 || row.NextRetry != nil {
		t.Fatalf("retry queued: %+v", row)
	}
	h.append(st, events.RunStarted{RunID: r3, Run: 3, Deadline: h.now.Add(30 * time.Second)}, events.RunCompleted{RunID: r3, Run: 3})
	if row, _ = get(); row.RunState != crontasks.RunIdle || row.RetryCount != 1 || row.CompletedCount != 1 || row.PendingCount != 0 {
		t.Fatalf("after the retry: %+v", row)
	}

	// R14 skip: a missed slot runs nothing and counts as missed.
	h.append(st, events.SlotsMissed{Due: t0.Add(2 * time.Minute), Slot: t0.Add(2 * time.Minute), Missed: 2,
		MissedAfter: events.Duration(10 * time.Second), NextRun: t0.Add(4 * time.Minute), Detail: "found 1m late"})
	if row, _ = get(); row.MissedCount != 2 || row.RunCount != 3 || !row.NextRun.Equal(t0.Add(4*time.Minute)) {
		t.Fatalf("after SlotsMissed: %+v", row)
	}

	// A retry policy of one attempt is no retry.
	h.append(st, events.TaskUpdated{Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(30 * time.Second), Policy: events.Policy{Retry: &events.Retry{MaxAttempts: 1}}})
	if row, m = get(); row.Retry != nil || m["retry"] != nil || row.Queue != "default" {
		t.Fatalf("one attempt: %v", m)
	}
}
