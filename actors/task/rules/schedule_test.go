package rules_test

import (
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
)

// TestCompiledCachesByWrittenForm: a spec written the same way gets the
// cached schedule; one that differs in any field the schedule depends on
// gets its own, even where a naive key would join the fields the same.
func TestCompiledCachesByWrittenForm(t *testing.T) {
	at := time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC)
	base := rules.Spec{Schedule: events.Schedule{Cron: []string{"0 9 * * *", "30 17 * * *"}, Timezone: "Europe/Berlin"}}
	a, err := rules.Compiled(base)
	if err != nil {
		t.Fatal(err)
	}
	same := base
	same.Schedule.Cron = []string{"0 9 * * *", "30 17 * * *"}
	if b, err := rules.Compiled(same); err != nil || b != a {
		t.Errorf("the same written form compiled anew (%v)", err)
	}
	variants := map[string]func(*rules.Spec){
		"one expression fewer": func(s *rules.Spec) { s.Schedule.Cron = s.Schedule.Cron[:1] },
		"zone":                 func(s *rules.Spec) { s.Schedule.Timezone = "Europe/Paris" },
		"dst_gap":              func(s *rules.Spec) { s.Schedule.DSTGap = "skip" },
		"dst_overlap":          func(s *rules.Spec) { s.Schedule.DSTOverlap = "both" },
		"start_at":             func(s *rules.Spec) { s.Window.StartAt = &at },
		"end_at":               func(s *rules.Spec) { s.Window.EndAt = &at },
		"max_runs":             func(s *rules.Spec) { s.Window.MaxRuns = 3 },
		"at instead":           func(s *rules.Spec) { s.Schedule.Cron, s.Schedule.At = nil, []time.Time{at} },
	}
	for name, change := range variants {
		v := base
		v.Schedule.Cron = append([]string(nil), base.Schedule.Cron...)
		change(&v)
		b, err := rules.Compiled(v)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if b == a {
			t.Errorf("%s: got the cached schedule of another written form", name)
		}
	}
}
