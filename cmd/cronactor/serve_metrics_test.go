package main

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Run decisions are counted by outcome and reason: retries enqueued,
// overlap and too_late drops, heartbeat timeouts, failures with and
// without a retry, slots skipped.
func TestRunReasonMetrics(t *testing.T) {
	m := newMetrics()
	id, of := uuid.New(), uuid.New()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, e := range []events.Event{
		events.RunEnqueued{RunID: id, Run: 1},
		events.RunEnqueued{RunID: id, Run: 2, Attempt: 2, RetryOf: &of},
		events.RunEnqueued{RunID: id, Run: 3, Attempt: 3, RetryOf: &of},
		events.RunEnqueued{RunID: id, Run: 4, Trigger: events.TriggerManual},
		events.RunEnqueued{RunID: id, Run: 5, Reason: events.EnqueueBacklog},
		events.RunDropped{RunID: id, Run: 1, Reason: events.DropOverlap},
		events.RunDropped{RunID: id, Run: 1, Reason: events.DropTooLate},
		events.RunDropped{RunID: id, Run: 1, Reason: events.DropTooLate},
		events.RunForcedEnd{RunID: id, Run: 1, Reason: events.ForcedHeartbeat},
		events.RunFailed{RunID: id, Run: 1, Error: "HTTP 500", RetryAt: &at},
		events.RunFailed{RunID: id, Run: 1, Error: "HTTP 404", Fatal: true, NoRetry: "not retryable"},
		events.RunFailed{RunID: id, Run: 1, Error: "HTTP 500", NoRetry: "attempts used up"},
		events.RunFailed{RunID: id, Run: 1, Error: "boom"},
		events.SlotsMissed{Due: at, Missed: 3},
	} {
		m.count(e)
	}
	rec := httptest.NewRecorder()
	m.handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`cronactor_run_reasons_total{outcome="enqueued",reason="schedule"} 1`,
		`cronactor_run_reasons_total{outcome="enqueued",reason="retry"} 2`,
		`cronactor_run_reasons_total{outcome="enqueued",reason="manual"} 1`,
		`cronactor_run_reasons_total{outcome="enqueued",reason="backlog"} 1`,
		`cronactor_run_reasons_total{outcome="dropped",reason="overlap"} 1`,
		`cronactor_run_reasons_total{outcome="dropped",reason="too_late"} 2`,
		`cronactor_run_reasons_total{outcome="forced_end",reason="heartbeat_timeout"} 1`,
		`cronactor_run_reasons_total{outcome="failed",reason="retry"} 1`,
		`cronactor_run_reasons_total{outcome="failed",reason="not_retryable"} 1`,
		`cronactor_run_reasons_total{outcome="failed",reason="no_retry"} 1`,
		`cronactor_run_reasons_total{outcome="failed",reason="error"} 1`,
		`cronactor_run_reasons_total{outcome="skipped",reason="missed"} 3`,
	} {
		if !strings.Contains(string(body), want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
