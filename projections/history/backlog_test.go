package history_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
)

// TestExplainBacklog: a task due with three runs waiting was held by R18,
// and the run enqueued once one of them started carries backlog and the
// intervals missed; the audit table and explain both say so.
func TestExplainBacklog(t *testing.T) {
	l := newTaskLog(t, memStore(t), "A")
	l.created("00:00", time.Minute, 5*time.Second, 30*time.Second, "00:30")
	l.enqueued("00:30", 1, "00:30", "01:30", 0)
	l.enqueued("01:30", 2, "01:30", "02:30", 0)
	l.enqueued("02:30", 3, "02:30", "03:30", 0)
	l.started("05:40", 1, 30*time.Second)
	l.add("06:00", events.RunEnqueued{RunID: l.run(4), Run: 4, Due: at("03:30"), NextRun: at("07:00"), Missed: 2,
		Reason: events.EnqueueBacklog})
	recs := l.read()
	tf := history.Relative(t0)

	ex, err := history.Explain(recs, at("04:00"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if v := ex.Verdict(tf); !strings.Contains(v, "was due since 03:30 but not enqueued: 3 runs already waiting (R18)") {
		t.Errorf("verdict at 04:00: %s", v)
	}
	ex, err = history.Explain(recs, at("06:00"), 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range ex.Decisions {
		if strings.Contains(d.Text(tf), "A4 was enqueued (R1, R8, R18): the task was due and had been held back") {
			found = true
		}
	}
	if !found {
		var b strings.Builder
		ex.Write(&b, tf)
		t.Errorf("no backlog decision at 06:00:\n%s", b.String())
	}

	rows, err := history.Rows(recs)
	if err != nil {
		t.Fatal(err)
	}
	var tr history.Tracker
	for _, r := range recs[:4] {
		if _, err := tr.Apply(r); err != nil {
			t.Fatal(err)
		}
	}
	held, err := tr.Tick(l.id, at("03:30"))
	if err != nil {
		t.Fatal(err)
	}
	if got := held.Text(tf); got != "Cron executes (3 runs of A waiting: none enqueued)" {
		t.Errorf("held tick row: %q", got)
	}
	if got := rows[len(rows)-1].Text(tf); got != "Cron enqueues A4 (backlog, 2 intervals missed)" {
		t.Errorf("backlog row: %q", got)
	}
	// The JSON line of the backlog enqueue is an ordinary RunEnqueued line.
	if l := rows[len(rows)-1].Line(tf, history.LineFields{}); l.Reason != "" {
		t.Errorf("backlog enqueue line carries reason %q", l.Reason)
	}
}
