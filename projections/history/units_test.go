package history_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
)

// goDuration matches Go's duration form ("5.00132707s", "1m0s", "250ms").
var goDuration = regexp.MustCompile(`[0-9](ns|µs|ms|s|m|h)\b`)

// addAt appends e decided at t, to the nanosecond, as a daemon's clock
// decides (the scenarios' times are whole seconds).
func (l *taskLog) addAt(t time.Time, e events.Event) {
	l.t.Helper()
	p, err := events.Propose(e, l.id, t)
	if err != nil {
		l.t.Fatal(err)
	}
	res, err := l.store.Append(context.Background(), events.TaskStream(l.id), l.ver, p)
	if err != nil {
		l.t.Fatal(err)
	}
	l.ver = events.Exactly(res.Version)
}

// daemonLog records a task as a daemon with a real clock would: interval
// 5 s, tolerance 500 ms, timebox 1.5 s, and starts a few milliseconds
// after their ticks, so no span is a whole second. A2 starts 5.00132707 s
// after A1 (issue 38: "(5.00132707s after … >= 5 - 0.5)"), A3 is dropped
// 4.2 s after A2, A2 is forced to end by its timebox and A1 fails with a
// retry 250 ms later.
func daemonLog(t *testing.T) *taskLog {
	l := newTaskLog(t, memStore(t), "A")
	base := t0.Add(1234567 * time.Nanosecond)
	s := func(d time.Duration) time.Time { return base.Add(d) }
	a1, a2, a3 := s(5*time.Second+2*time.Millisecond), s(10*time.Second+3342977*time.Nanosecond), s(14*time.Second+203342977*time.Nanosecond)
	retry := s(5*time.Second + 260*time.Millisecond)
	l.addAt(s(0), events.TaskCreated{TaskID: l.id, Name: "A", Owner: "test/1", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(5 * time.Second)}, Tolerance: events.Duration(500 * time.Millisecond),
		Timebox: events.Duration(1500 * time.Millisecond), NextRun: s(5 * time.Second),
		Policy: events.Policy{Retry: &events.Retry{MaxAttempts: 2, InitialBackoff: events.Duration(250 * time.Millisecond), MaxBackoff: events.Duration(time.Second), Multiplier: 2}}})
	l.addAt(s(5*time.Second), events.RunEnqueued{RunID: l.run(1), Run: 1, Due: s(5 * time.Second), NextRun: s(10 * time.Second)})
	l.addAt(a1, events.RunStarted{RunID: l.run(1), Run: 1, Deadline: a1.Add(1500 * time.Millisecond)})
	l.addAt(s(5*time.Second+10*time.Millisecond), events.RunFailed{RunID: l.run(1), Run: 1, Error: "HTTP 500",
		RetryAt: &retry, Backoff: events.Duration(250 * time.Millisecond)})
	l.addAt(s(10*time.Second), events.RunEnqueued{RunID: l.run(2), Run: 2, Due: s(10 * time.Second), NextRun: s(15 * time.Second)})
	l.addAt(a2, events.RunStarted{RunID: l.run(2), Run: 2, Deadline: a2.Add(1500 * time.Millisecond)})
	l.addAt(a2.Add(1500*time.Millisecond), events.RunForcedEnd{RunID: l.run(2), Run: 2, Reason: events.ForcedTimebox, Deadline: a2.Add(1500 * time.Millisecond)})
	l.addAt(s(14*time.Second), events.RunEnqueued{RunID: l.run(3), Run: 3, Due: s(14 * time.Second), NextRun: s(19 * time.Second)})
	l.addAt(a3, events.RunDropped{RunID: l.run(3), Run: 3, Reason: events.DropTooSoon,
		Detail:  "asked to start 4.2s after the last start; needs 4.5s (interval 5s - tolerance 500ms)", // as the rules wrote it
		LastRun: &a2, SinceLastStart: events.Duration(a3.Sub(a2)), Needed: events.Duration(4500 * time.Millisecond)})
	return l
}

// TestWordingOneUnit: a history row, an explain decision and the explain
// header say every duration in one unit with sensible precision
// (events.Span), never Go's nanosecond form beside bare seconds.
func TestWordingOneUnit(t *testing.T) {
	recs := daemonLog(t).read()
	var tr history.Tracker
	rows := make([]history.Row, len(recs))
	for i, rec := range recs {
		var err error
		if rows[i], err = tr.Apply(rec); err != nil {
			t.Fatal(err)
		}
	}
	tf := history.Absolute()
	for _, c := range []struct {
		version int
		table   string // the history table's Event cell
		explain string // explain's decision
	}{
		{0, "Initial state",
			"A was created: every 5 s, tolerance 500 ms, timebox 1.5 s; first due at 2026-01-05T02:00:05Z"},
		{3, "A1 fails (HTTP 500; retry at 2026-01-05T02:00:05Z after 250 ms backoff)",
			"A1 failed (R13): HTTP 500; retried as attempt 2, due at 2026-01-05T02:00:05Z after a backoff of 250 ms"},
		{5, "A2 begins execution (5.0 s after 2026-01-05T02:00:05Z, needs ≥ 4.5 s)",
			"A2 started (R3): 5.0 s after the last start at 2026-01-05T02:00:05Z; needs ≥ 4.5 s; deadline 2026-01-05T02:00:11Z"},
		{6, "A2 is forced to end (timebox 1.5 s ended at 2026-01-05T02:00:11Z)", ""},
		{8, "A3 is dropped (4.2 s after 2026-01-05T02:00:10Z, needs ≥ 4.5 s)",
			"A3 was dropped (R3): started 4.2 s after the last start; needs ≥ 4.5 s"},
	} {
		r := rows[c.version]
		if got := r.Text(tf); got != c.table {
			t.Errorf("v%d table: %q\n                want %q", c.version, got, c.table)
		}
		if c.explain == "" {
			continue
		}
		ex, err := history.Explain(recs, r.At, 0)
		if err != nil {
			t.Fatal(err)
		}
		var text []string
		for _, d := range ex.Decisions {
			text = append(text, d.Text(tf))
		}
		if !strings.Contains(strings.Join(text, "\n"), c.explain) {
			t.Errorf("v%d explain lacks %q:\n%s", c.version, c.explain, strings.Join(text, "\n"))
		}
	}
	ex, err := history.Explain(recs, rows[5].At, 1500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := ex.Write(&b, tf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "decisions within 1.5 s of 2026-01-05T02:00:10Z") {
		t.Errorf("explain header:\n%s", b.String())
	}
	// Nothing printed carries Go's duration form or a bare nanosecond count.
	var all strings.Builder
	if err := history.WriteTable(&all, rows, tf); err != nil {
		t.Fatal(err)
	}
	all.WriteString(b.String())
	if bad := goDuration.FindString(all.String()); bad != "" {
		t.Errorf("output has %q:\n%s", bad, all.String())
	}
}
