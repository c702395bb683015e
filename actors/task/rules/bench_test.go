package rules_test

import (
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
)

// BenchmarkDecideTick is the cost of one due tick's decision: an interval
// task, and a cron task in a zone (the compiled schedule is memoized, so
// this is Advance, its missed count and the next slot's spacing).
func BenchmarkDecideTick(b *testing.B) {
	for _, c := range []struct {
		name string
		sc   events.Schedule
	}{
		{"interval", events.Schedule{Interval: events.Duration(time.Minute)}},
		{"cron", events.Schedule{Cron: []string{"0 9 * * MON-FRI"}, Timezone: "Europe/Berlin"}},
		{"cron_list_jitter", events.Schedule{Cron: []string{"*/5 * * * *", "7 9 * * SAT"}, Timezone: "America/New_York"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			spec := rules.Spec{Name: "A", Owner: "o", Kind: "noop", Schedule: c.sc}
			if c.name == "cron_list_jitter" {
				spec.Window.Jitter = events.Duration(30 * time.Second)
			}
			first := t0.Add(time.Minute)
			if !c.sc.IsInterval() {
				first = time.Time{}
			}
			evs, err := rules.Decide(rules.State{}, rules.Create{TaskID: id, Spec: spec, FirstRun: first}, t0)
			if err != nil {
				b.Fatal(err)
			}
			s := rules.Evolve(rules.State{}, events.Metadata{At: t0}, evs[0])
			tick := s.NextRun.Add(time.Second)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if evs, _ := rules.Decide(s, rules.Tick{}, tick); len(evs) == 0 {
					b.Fatal("not due")
				}
			}
		})
	}
}
