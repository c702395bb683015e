package crontasks_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// fold folds evs (one a second from t0) into a row through Evolve.
func fold(t *testing.T, id uuid.UUID, t0 time.Time, evs ...events.Event) *crontasks.Task {
	t.Helper()
	var row *crontasks.Task
	for i, e := range evs {
		at := t0.Add(time.Duration(i) * time.Second)
		var err error
		row, err = crontasks.Evolve(row, events.Metadata{Stream: events.TaskStream(id), Version: uint64(i), At: at,
			Position: events.Position{Commit: uint64(i + 1), Prepare: uint64(i + 1)}}, e)
		if err != nil {
			t.Fatal(err)
		}
	}
	return row
}

// rowJSON is the row as the HTTP API returns it, as a map.
func rowJSON(t *testing.T, row *crontasks.Task) map[string]any {
	t.Helper()
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The row keeps the last start (last_run, last_run_number) apart from the
// last outcome (its own run, attempt and time; issue 38 item 3): a failed
// run whose retry completed shows run 1 as the last start and run 2,
// attempt 2, as the completed outcome; a run that still runs after an
// earlier one was forced to end shows its own start beside the older
// outcome.
func TestRowLastStartApartFromLastOutcome(t *testing.T) {
	id := uuid.MustParse("cccccccc-0000-4000-8000-000000000003")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	run := func(n int) uuid.UUID { return events.RunID(id, n) }
	created := events.TaskCreated{TaskID: id, Name: "n", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Hour)},
		Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Minute), NextRun: t0,
		Policy: events.Policy{Retry: &events.Retry{MaxAttempts: 2, InitialBackoff: events.Duration(time.Second), MaxBackoff: events.Duration(time.Second), Multiplier: 2}}}
	r1 := run(1)

	t.Run("retry completed", func(t *testing.T) {
		row := fold(t, id, t0, created,
			events.RunEnqueued{RunID: r1, Run: 1, Due: t0, NextRun: t0.Add(time.Hour)},
			events.RunStarted{RunID: r1, Run: 1, Deadline: t0.Add(time.Minute)}, // at t0+2s
			events.RunFailed{RunID: r1, Run: 1, Error: "boom"},
			events.RunEnqueued{RunID: run(2), Run: 2, Due: t0.Add(4 * time.Second), NextRun: t0.Add(time.Hour), Attempt: 2, RetryOf: &r1},
			events.RunStarted{RunID: run(2), Run: 2, Deadline: t0.Add(time.Minute)},
			events.RunCompleted{RunID: run(2), Run: 2}, // at t0+6s
		)
		if row.LastRun == nil || !row.LastRun.Equal(t0.Add(2*time.Second)) || row.LastRunNumber != 1 {
			t.Errorf("last_run %v number %d, want run 1's start at +2s (a retry moves neither)", row.LastRun, row.LastRunNumber)
		}
		o := row.LastOutcome
		if o == nil || o.Run != 2 || o.Attempt != 2 || o.Outcome != crontasks.OutcomeCompleted || !o.At.Equal(t0.Add(6*time.Second)) {
			t.Errorf("last_outcome %+v, want run 2 attempt 2 completed at +6s", o)
		}
		m := rowJSON(t, row)
		if m["last_run_number"] != 1.0 || m["last_outcome_run"] != 2.0 || m["last_outcome_at"] != "2026-01-01T00:00:06Z" {
			t.Errorf("JSON last_run_number %v last_outcome_run %v last_outcome_at %v, want 1, 2, 2026-01-01T00:00:06Z",
				m["last_run_number"], m["last_outcome_run"], m["last_outcome_at"])
		}
		if lo, _ := m["last_outcome"].(map[string]any); lo["attempt"] != 2.0 {
			t.Errorf("JSON last_outcome %v, want attempt 2", m["last_outcome"])
		}
	})

	t.Run("next run still running", func(t *testing.T) {
		row := fold(t, id, t0, created,
			events.RunEnqueued{RunID: r1, Run: 1, Due: t0, NextRun: t0.Add(3 * time.Second)},
			events.RunStarted{RunID: r1, Run: 1, Deadline: t0.Add(3 * time.Second)},
			events.RunForcedEnd{RunID: r1, Run: 1, Deadline: t0.Add(3 * time.Second), Reason: "timebox"}, // at +3s
			events.RunEnqueued{RunID: run(2), Run: 2, Due: t0.Add(3 * time.Second), NextRun: t0.Add(time.Hour)},
			events.RunStarted{RunID: run(2), Run: 2, Deadline: t0.Add(time.Hour)}, // at +5s
		)
		if row.LastRunNumber != 2 || row.LastRun == nil || !row.LastRun.Equal(t0.Add(5*time.Second)) || row.RunState != crontasks.RunRunning {
			t.Errorf("last_run %v number %d run_state %s, want run 2 started at +5s, running", row.LastRun, row.LastRunNumber, row.RunState)
		}
		if o := row.LastOutcome; o == nil || o.Run != 1 || o.Attempt != 1 || o.Outcome != crontasks.OutcomeForcedEnd || !o.At.Equal(t0.Add(3*time.Second)) {
			t.Errorf("last_outcome %+v, want run 1 attempt 1 forced_end at +3s", o)
		}
	})

	t.Run("none yet", func(t *testing.T) {
		m := rowJSON(t, fold(t, id, t0, created))
		for _, k := range []string{"last_run", "last_run_number", "last_outcome", "last_outcome_run", "last_outcome_at"} {
			if v, ok := m[k]; !ok || v != nil {
				t.Errorf("JSON %s = %v (present %v), want null", k, v, ok)
			}
		}
	})
}
