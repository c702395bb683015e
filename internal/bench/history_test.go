package bench

import (
	"context"
	"strings"
	"testing"
)

// TestHistorySmoke runs the smallest history measurement end to end (a
// real store, a real scheduler, the real HTTP handler): every figure of
// DESIGN §8.3 is filled, the ratios follow from them, and the report shows
// them; never how fast anything was.
func TestHistorySmoke(t *testing.T) {
	r, err := History(context.Background(), HistoryConfig{Events: 2000, Baseline: 10, Page: 5})
	if err != nil {
		t.Fatal(err)
	}
	m := jsonFields(t, r)
	wantNumbers(t, m, "events", "cold_load_ms", "history_page_ms", "explain_ms")
	if r.Events != 2000 || r.BaselineEvents != 10 || r.Page != 5 {
		t.Fatalf("result %+v", r)
	}
	for name, v := range map[string]float64{"cold_load_ms": r.ColdLoadMs, "history_page_ms": r.HistoryPageMs, "explain_ms": r.ExplainMs,
		"baseline_history_page_ms": r.BaselineHistoryPageMs, "history_page_first_ms": r.HistoryPageFirstMs, "write_s": r.WriteS} {
		if !(v > 0) {
			t.Errorf("%s = %v", name, v)
		}
	}
	if got := r.HistoryPageMs / r.BaselineHistoryPageMs; r.HistoryPageRatio != got {
		t.Errorf("history_page_ratio %v, want %v", r.HistoryPageRatio, got)
	}
	table := Report{History: &r}.Table()
	for _, want := range []string{"history: cold load of a task of 2,000 events", "history: latest page of 5 rows",
		"history: explain a time in the middle", "at 10 events", "bar ≤ 50 ms"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if err := (HistoryConfig{Events: 3}).Validate(); err == nil || !strings.Contains(err.Error(), "events") {
		t.Errorf("3 events: %v", err)
	}
	if err := (HistoryConfig{Events: 10, Page: 10001}).Validate(); err == nil || !strings.Contains(err.Error(), "page") {
		t.Errorf("page 10001: %v", err)
	}
}
