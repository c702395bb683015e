package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestConfigsNameTheFieldOutOfLimits(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{StoreConfig{Writers: -1, Duration: time.Second}.Validate(), "Writers"},
		{StoreConfig{Duration: time.Millisecond}.Validate(), "Duration"},
		{SchedulerConfig{Tasks: 0, Workers: 1}.Validate(), "Tasks"},
		{SchedulerConfig{Tasks: 1, Workers: 0}.Validate(), "Workers"},
		{ProjectionsConfig{Writers: 1, Rounds: 0, Duration: time.Second}.Validate(), "Rounds"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("err = %v, want one naming %s", c.err, c.want)
		}
	}
}

// TestStoreSmoke runs the smallest store measurement: it checks the shape
// of the result, not its figures.
func TestStoreSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("writes to disk")
	}
	var got []StoreResult
	var notes int
	cfg := StoreConfig{Writers: 2, Duration: 100 * time.Millisecond, Dir: t.TempDir(),
		Progress: func(string, ...any) { notes++ }}
	if err := Store(context.Background(), cfg, func(r StoreResult) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Writers != 2 || got[0].Events == 0 || got[0].EventSizeBytes != EventSize || notes == 0 {
		t.Fatalf("results %+v, %d notes", got, notes)
	}
	b, _ := json.Marshal(got[0])
	for _, k := range []string{`"events_per_s"`, `"raw_events_per_s"`, `"ratio"`, `"p99_us"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON %s lacks %s", b, k)
		}
	}
	if !strings.HasPrefix(got[0].Text(), "writers=2 ") {
		t.Errorf("text %q", got[0].Text())
	}
}
