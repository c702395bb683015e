package history_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
)

func TestExplainGolden(t *testing.T) {
	a := outcomes(t, memStore(t))
	recs := a.read()
	var b bytes.Buffer
	for _, when := range []string{"00:00", "01:00", "02:45", "04:59", "04:00", "07:00", "10:02"} {
		ex, err := history.Explain(recs, at(when), 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := ex.Write(&b, history.Relative(t0)); err != nil {
			t.Fatal(err)
		}
		b.WriteString("\n")
	}
	ex, err := history.Explain(recs, t0.Add(-time.Minute), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ex.Write(&b, history.Relative(t0))
	golden(t, "explain.txt", b.Bytes())
}

// TestExplainRules checks the rule and state Explain reports at points of
// the outcomes history.
func TestExplainRules(t *testing.T) {
	recs := outcomes(t, memStore(t)).read()
	tf := history.Relative(t0)
	for _, c := range []struct {
		at       string
		verdict  string
		decision string // a decision listed, in its words
	}{
		{"01:00", "was not due: nextRun was 01:30", "00:35: A1 started (R3): no run had started before; deadline 01:05"},
		{"02:45", "A3 was running (started 02:31, deadline 03:01)", "02:31: A3 started (R3): 59 s after the last start at 01:32; needs ≥ 55 s; deadline 03:01"},
		{"04:59", "A4 was running", "04:59: A5 was dropped (R3): started 28 s after the last start; needs ≥ 55 s"},
		{"03:01", "", "03:01: A3 was forced to end (R4): still running at the deadline 30s after its start; deadline 03:01"},
		{"04:00", "A4 was waiting in the queue since 03:30", "03:30: A4 was enqueued (R1): the task was due; next due at 04:30"},
		{"07:00", "was paused (since 05:10)", "05:10: A was paused (R7)"},
		{"09:30", "", "09:30: A6 was enqueued (R1, R8): the task was due, 4 whole interval(s) missed"},
		{"10:05", "was deleted (since 10:00)", "10:05: A6 was dropped (R7): task deleted"},
	} {
		ex, err := history.Explain(recs, at(c.at), 0)
		if err != nil {
			t.Fatal(err)
		}
		if v := ex.Verdict(tf); !strings.Contains(v, c.verdict) {
			t.Errorf("at %s verdict %q lacks %q", c.at, v, c.verdict)
		}
		var all []string
		for _, d := range ex.Decisions {
			all = append(all, tf.Format(d.Row.At)+": "+d.Text(tf))
		}
		if !strings.Contains(strings.Join(all, "\n"), c.decision) {
			t.Errorf("at %s decisions lack %q:\n%s", c.at, c.decision, strings.Join(all, "\n"))
		}
	}
	if _, err := history.Explain(nil, t0, 0); !errors.Is(err, history.ErrNoEvents) {
		t.Errorf("no events: %v", err)
	}
	if _, err := history.Explain(recs, t0, -time.Second); err == nil {
		t.Error("negative window accepted")
	}
	ex, _ := history.Explain(recs, t0.Add(-time.Second), 0)
	if ex.Exists || !strings.Contains(ex.Verdict(tf), "did not exist yet") {
		t.Errorf("before creation: %+v", ex)
	}
	_ = events.DropTooSoon
}

// TestExplainNotDueSaysHowMuchLater: when the time asked about and the
// nextRun read the same in the format shown (RFC 3339 drops the fraction of
// a second), the verdict says how much later nextRun was; otherwise
// "nextRun was 02:53:38Z" at 02:53:38Z reads as if it were due.
func TestExplainNotDueSaysHowMuchLater(t *testing.T) {
	recs := outcomes(t, memStore(t)).read()
	minutes := history.TimeFormat{Header: "min", Format: func(x time.Time) string {
		return x.Sub(t0).Truncate(time.Minute).String()
	}}
	ex, err := history.Explain(recs, at("01:29"), 0) // nextRun 01:30: both "1m0s"
	if err != nil {
		t.Fatal(err)
	}
	if v := ex.Verdict(minutes); !strings.Contains(v, "nextRun was 1m0s, 1 s later,") {
		t.Errorf("verdict %q does not say nextRun was 1 s later", v)
	}
	ex, _ = history.Explain(recs, at("01:00"), 0)
	if v := ex.Verdict(history.Relative(t0)); !strings.Contains(v, "nextRun was 01:30, and") {
		t.Errorf("verdict %q: nextRun reads apart from the time asked, so no more words", v)
	}
}
