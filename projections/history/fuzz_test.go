package history_test

import (
	"encoding/json"
	"testing"

	"github.com/cronactor/cronactor/projections/history"
)

func FuzzParseClock(f *testing.F) {
	for _, s := range []string{"00:00", "01:35", "01:00:00", "-00:05", "", "1:2:3:4", "99999:59"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := history.ParseClock(s)
		if err != nil {
			return
		}
		back, err := history.ParseClock(history.Clock(d))
		if err != nil || back != d {
			t.Fatalf("%q -> %v -> %q -> %v, %v", s, d, history.Clock(d), back, err)
		}
	})
}

func FuzzEventJSON(f *testing.F) {
	f.Add([]byte(`{"type":"RunStarted","schema":1,"position":"3","at":"2026-01-05T02:00:35Z","data":{"run":1,"run_id":"6f1c2a52-2f4e-4d57-9a43-7d0f0c6f6e11","deadline":"2026-01-05T02:01:05Z"}}`))
	f.Add([]byte(`{"type":"","data":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var j history.EventJSON
		if json.Unmarshal(b, &j) != nil {
			return
		}
		rec, err := j.Recorded()
		if err != nil {
			return
		}
		// Whatever decodes converts back, and history folds it or says why.
		if _, err := history.ToJSON(rec); err != nil {
			t.Fatalf("round trip: %v", err)
		}
		_, _ = history.Rows(nil)
		var tr history.Tracker
		_, _ = tr.Apply(rec)
	})
}
