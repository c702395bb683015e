package history_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// policyLog records a task with a retry policy (3 attempts, 1 s doubling)
// whose first run fails twice and then completes, a manual trigger that
// is dropped because the retry is running, a 4xx-like fatal failure that
// is not retried, and a heartbeat timeout.
func policyLog(t *testing.T) *taskLog {
	l := newTaskLog(t, memStore(t), "A")
	l.add("00:00", events.TaskCreated{TaskID: l.id, Name: "A", Owner: "test/1", Kind: "http",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(30 * time.Second), NextRun: at("00:30"),
		Policy: events.Policy{Retry: &events.Retry{MaxAttempts: 3, InitialBackoff: events.Duration(time.Second),
			MaxBackoff: events.Duration(time.Minute), Multiplier: 2}, HeartbeatTimeout: events.Duration(10 * time.Second)}})
	l.enqueued("00:30", 1, "00:30", "01:30", 0)
	l.started("00:30", 1, 30*time.Second)
	retryAt := func(s string) *time.Time { x := at(s); return &x }
	l.add("00:31", events.RunFailed{RunID: l.run(1), Run: 1, Error: "HTTP 500", RetryAt: retryAt("00:32"),
		Backoff: events.Duration(time.Second)})
	r1 := l.run(1)
	l.add("00:32", events.RunEnqueued{RunID: l.run(2), Run: 2, Due: at("00:30"), NextRun: at("01:30"), Attempt: 2, RetryOf: &r1})
	l.add("00:32", events.RunStarted{RunID: l.run(2), Run: 2, Deadline: at("01:02")})
	l.add("00:33", events.RunEnqueued{RunID: l.run(3), Run: 3, Due: at("00:33"), NextRun: at("01:30"), Trigger: events.TriggerManual})
	l.add("00:33", events.RunDropped{RunID: l.run(3), Run: 3, Reason: events.DropOverlap})
	l.add("00:34", events.RunForcedEnd{RunID: l.run(2), Run: 2, Reason: events.ForcedHeartbeat, Deadline: at("01:02"),
		RetryAt: retryAt("00:36"), Backoff: events.Duration(2 * time.Second)})
	r2 := l.run(2)
	l.add("00:36", events.RunEnqueued{RunID: l.run(4), Run: 4, Due: at("00:30"), NextRun: at("01:30"), Attempt: 3, RetryOf: &r2})
	l.add("00:36", events.RunStarted{RunID: l.run(4), Run: 4, Deadline: at("01:06")})
	l.completed("00:37", 4)
	l.enqueued("01:30", 5, "01:30", "02:30", 0)
	l.started("01:30", 5, 30*time.Second)
	l.add("01:31", events.RunFailed{RunID: l.run(5), Run: 5, Error: "HTTP 404", Fatal: true, NoRetry: "the error is not retryable"})
	l.add("04:00", events.SlotsMissed{Due: at("02:30"), Slot: at("02:30"), Missed: 2, MissedAfter: events.Duration(time.Minute),
		NextRun: at("05:00"), Detail: "the tick at 04:00 is 1m30s after the slot + missed_after"})
	return l
}

func TestPolicyRows(t *testing.T) {
	l := policyLog(t)
	rows, err := history.Rows(l.read())
	if err != nil {
		t.Fatal(err)
	}
	tf := history.Relative(t0)
	var table bytes.Buffer
	if err := history.WriteTable(&table, rows, tf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 00:31 | A1 fails (HTTP 500; retry at 00:32 after 1 s backoff) |",
		"| 00:32 | Cron enqueues A2 (attempt 2, retry of A1) |",
		"| 00:32 | A2 begins execution (attempt 2, retry of A1: no spacing check) | 01:30 | 00:30 |",
		"| 00:33 | Manual trigger enqueues A3 |",
		"| 00:33 | A3 is dropped (overlap: another run of A is running) |",
		"| 00:34 | A2 is forced to end (heartbeat timeout; retry at 00:36 after 2 s backoff) |",
		"| 00:36 | Cron enqueues A4 (attempt 3, retry of A2) |",
		"| 01:31 | A5 fails (HTTP 404; no retry: the error is not retryable) |",
		"| 04:00 | Cron executes (2 intervals missed: skipped, none enqueued) | 05:00 | 01:30 |",
	} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	golden(t, "policies.md", table.Bytes())

	// The published lines add attempt on every line of a retry and trigger
	// on a triggered enqueue; history's own lines add the retry fields.
	var plain, full bytes.Buffer
	if err := history.WriteLines(&plain, rows, tf, history.LineFields{}); err != nil {
		t.Fatal(err)
	}
	if err := history.WriteLines(&full, rows, tf, history.LineFields{RunID: true, Detail: true, Retry: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"at":"00:32","task":"A","event":"RunEnqueued","run":2,"attempt":2,"next_run":"01:30","last_run":"00:30"}`,
		`{"at":"00:32","task":"A","event":"RunStarted","run":2,"attempt":2,"next_run":"01:30","last_run":"00:30"}`,
		`{"at":"00:33","task":"A","event":"RunEnqueued","run":3,"trigger":"manual","next_run":"01:30","last_run":"00:30"}`,
		`{"at":"00:33","task":"A","event":"RunDropped","run":3,"next_run":"01:30","last_run":"00:30","reason":"overlap"}`,
		`{"at":"00:34","task":"A","event":"RunForcedEnd","run":2,"attempt":2,"next_run":"01:30","last_run":"00:30","reason":"heartbeat_timeout"}`,
		`{"at":"00:31","task":"A","event":"RunFailed","run":1,"next_run":"01:30","last_run":"00:30"}`,
	} {
		if !strings.Contains(plain.String(), want+"\n") {
			t.Errorf("plain lines lack %s:\n%s", want, plain.String())
		}
	}
	for _, want := range []string{
		`"event":"RunFailed","run":1,"run_id":"` + l.run(1).String() + `","next_run":"01:30","last_run":"00:30","detail":"HTTP 500","retry_at":"00:32","backoff":"1s"}`,
		`"event":"RunEnqueued","run":2,"attempt":2,"run_id":"` + l.run(2).String() + `","next_run":"01:30","last_run":"00:30","retry_of":"` + l.run(1).String() + `"}`,
		`"event":"RunFailed","run":5,"run_id":"` + l.run(5).String() + `","next_run":"02:30","last_run":"01:30","detail":"HTTP 404","no_retry":"the error is not retryable"}`,
	} {
		if !strings.Contains(full.String(), want+"\n") {
			t.Errorf("full lines lack %s:\n%s", want, full.String())
		}
	}
}

func TestExplainRetries(t *testing.T) {
	l := policyLog(t)
	recs := l.read()
	tf := history.Relative(t0)
	ex, err := history.Explain(recs, at("00:31").Add(500*time.Millisecond), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Retries) != 1 || ex.Retries[0].Of != 1 || ex.Retries[0].Attempt != 2 || !ex.Retries[0].Due.Equal(at("00:32")) ||
		ex.Retries[0].OfID != l.run(1) || ex.Retries[0].Backoff != time.Second {
		t.Errorf("pending retries %+v", ex.Retries)
	}
	if v := ex.Verdict(tf); !strings.Contains(v, "A1 had failed; its retry (attempt 2) was due at 00:32 after a backoff of 1 s") {
		t.Errorf("verdict: %s", v)
	}
	var b strings.Builder
	if err := ex.Write(&b, tf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"00:31: A1 failed (R13): HTTP 500; retried as attempt 2, due at 00:32 after a backoff of 1 s",
		"00:32: A2 was enqueued (R13) as attempt 2, the retry of A1; next due at 01:30",
		"00:32: A2 started (R13): attempt 2, a retry, no spacing check and lastRun unchanged",
		"00:33: A3 was enqueued (R15) by a manual trigger",
		"00:33: A3 was dropped (R12): another run of the task was running (overlap)",
		"00:34: A2 was forced to end (R16, R13): no heartbeat within the task's heartbeat_timeout; deadline 01:02; retried as attempt 3, due at 00:36 after a backoff of 2 s",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("explanation lacks %q:\n%s", want, b.String())
		}
	}

	// While the retry runs, explain says which attempt is running.
	ex, err = history.Explain(recs, at("00:33"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if v := ex.Verdict(tf); !strings.Contains(v, "A2 (attempt 2) was running") || len(ex.Retries) != 0 {
		t.Errorf("verdict at 00:33: %s (retries %+v)", v, ex.Retries)
	}
	// The fatal failure: not retried, and why.
	ex, err = history.Explain(recs, at("01:31"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	_ = ex.Write(&b, tf)
	if !strings.Contains(b.String(), "A5 failed (R13): HTTP 404; not retried: the error is not retryable") {
		t.Errorf("fatal failure:\n%s", b.String())
	}
	ex, err = history.Explain(recs, at("04:00"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	_ = ex.Write(&b, tf)
	if !strings.Contains(b.String(), "04:00: A ran nothing for 2 missed slots (R14): the tick at 04:00") {
		t.Errorf("skipped slots:\n%s", b.String())
	}
}

// A retry of a run the Tracker never saw fail: the table gives its attempt,
// explain names the failed run by ID.
func TestRetryOfUnseenRun(t *testing.T) {
	l := newTaskLog(t, memStore(t), "B")
	l.created("00:00", time.Minute, 5*time.Second, 30*time.Second, "00:30")
	other := uuid.MustParse("a0000000-0000-4000-8000-00000000000a")
	l.add("00:30", events.RunEnqueued{RunID: l.run(1), Run: 1, Due: at("00:30"), NextRun: at("01:30"), Attempt: 2, RetryOf: &other})
	rows, err := history.Rows(l.read())
	if err != nil {
		t.Fatal(err)
	}
	if got := rows[1].Text(history.Relative(t0)); got != "Cron enqueues B1 (attempt 2)" || rows[1].RetryOf != other {
		t.Errorf("row: %q (retry of %s)", got, rows[1].RetryOf)
	}
	ex, err := history.Explain(l.read(), at("00:30"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	_ = ex.Write(&b, history.Relative(t0))
	if !strings.Contains(b.String(), "B1 was enqueued (R13) as attempt 2, the retry of run "+other.String()) {
		t.Errorf("explain:\n%s", b.String())
	}
}

// overlap cancel_other's replaced forced end and a pause after failures
// (DESIGN §8.4) in the table, the JSON lines and explain.
func TestReplacedAndPausedWords(t *testing.T) {
	l := newTaskLog(t, memStore(t), "A")
	l.add("00:00", events.TaskCreated{TaskID: l.id, Name: "A", Owner: "test/1", Kind: "http",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(time.Minute), NextRun: at("00:30"),
		Policy: events.Policy{Overlap: events.OverlapCancelOther, PauseAfterFailures: 1}})
	l.enqueued("00:30", 1, "00:30", "01:30", 0)
	l.started("00:30", 1, time.Minute)
	l.add("00:40", events.RunEnqueued{RunID: l.run(2), Run: 2, Due: at("00:40"), NextRun: at("01:30"), Trigger: events.TriggerManual})
	l.add("00:40", events.RunForcedEnd{RunID: l.run(1), Run: 1, Reason: events.ForcedReplaced, Deadline: at("01:30"),
		Detail: "run 2 asked to start after this one ran 10s (overlap cancel_other)"})
	l.add("00:40", events.RunStarted{RunID: l.run(2), Run: 2, Deadline: at("01:40")})
	l.completed("00:41", 2)
	l.enqueued("01:30", 3, "01:30", "02:30", 0)
	l.started("01:30", 3, time.Minute)
	l.add("01:31", events.RunFailed{RunID: l.run(3), Run: 3, Error: "HTTP 500"})
	l.add("01:31", events.TaskPaused{Reason: events.PauseFailures, Failures: 1})
	recs := l.read()
	rows, err := history.Rows(recs)
	if err != nil {
		t.Fatal(err)
	}
	tf := history.Relative(t0)
	var table, lines bytes.Buffer
	if err := history.WriteTable(&table, rows, tf); err != nil {
		t.Fatal(err)
	}
	if err := history.WriteLines(&lines, rows, tf, history.LineFields{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 00:40 | A1 is forced to end (replaced: run 2 asked to start after this one ran 10s (overlap cancel_other)) |",
		"| 01:31 | A is paused (1 slot failed in a row: pause_after_failures) |",
	} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	for _, want := range []string{
		`{"at":"00:40","task":"A","event":"RunForcedEnd","run":1,"next_run":"01:30","last_run":"00:30","reason":"replaced"}`,
		`{"at":"01:31","task":"A","event":"TaskPaused","next_run":"02:30","last_run":"01:30","reason":"failures"}`,
	} {
		if !strings.Contains(lines.String(), want+"\n") {
			t.Errorf("lines lack %s:\n%s", want, lines.String())
		}
	}
	ex, err := history.Explain(recs, at("01:31"), 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := ex.Write(&b, tf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"00:40: A1 was forced to end (R12): run 2 asked to start after this one ran 10s (overlap cancel_other)",
		"01:31: A paused itself (R7, pause_after_failures): the runs of 1 slot in a row failed after their retries",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("explanation lacks %q:\n%s", want, b.String())
		}
	}
}
