package schedule_test

import (
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
)

// BenchmarkNext measures Next on typical expressions; run it with
//
//	go test ./actors/task/schedule -run '^$' -bench Next -benchmem
//
// ns/op is the cost of one call (1,000 ns/op is 1M calls/s). The arguments
// walk a year of instants so every call searches from a fresh point.
func BenchmarkNext(b *testing.B) {
	for _, c := range []struct{ name, cron, zone string }{
		{"weekdays-9-berlin", "0 9 * * MON-FRI", "Europe/Berlin"},
		{"every-5-min-new-york", "*/5 * * * *", "America/New_York"},
		{"2-30-santiago", "30 2 * * *", "America/Santiago"},
		{"every-second-utc", "* * * * * *", ""},
		{"29-feb-utc", "0 0 29 2 *", ""},
		{"last-weekday-9-berlin", "0 9 LW * *", "Europe/Berlin"},
		{"second-friday-9-berlin", "0 9 * * FRI#2", "Europe/Berlin"},
		{"15w-or-last-monday-new-york", "0 9 15W * MONL", "America/New_York"},
	} {
		s, err := schedule.Compile(schedule.Spec{Cron: []string{c.cron}, Timezone: c.zone})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			t := start
			for i := 0; i < b.N; i++ {
				if s.Next(t).IsZero() {
					b.Fatal("no slot")
				}
				t = t.Add(17*time.Minute + 13*time.Second)
				if i%30000 == 0 {
					t = start
				}
			}
		})
	}
}

// BenchmarkSlots measures walking consecutive slots (the scheduler's own
// pattern: each Next starts from the previous slot).
func BenchmarkSlots(b *testing.B) {
	s, err := schedule.Compile(schedule.Spec{Cron: []string{"0 9 * * MON-FRI"}, Timezone: "Europe/Berlin"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < b.N; i++ {
		t = s.Next(t)
		if i%10000 == 0 {
			t = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		}
	}
}

// BenchmarkCompile measures compiling a task's schedule (done when a task's
// events are folded, so once per task on restart).
func BenchmarkCompile(b *testing.B) {
	spec := schedule.Spec{Cron: []string{"0 9 * * MON-FRI"}, Timezone: "Europe/Berlin"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := schedule.Compile(spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCount measures counting the missed slots of a year's downtime of
// a per-second schedule in a zone with DST (R8/R10).
func BenchmarkCount(b *testing.B) {
	s, err := schedule.Compile(schedule.Spec{Cron: []string{"* * * * * *"}, Timezone: "Europe/Berlin"})
	if err != nil {
		b.Fatal(err)
	}
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if s.Count(from, from.AddDate(1, 0, 0)) == 0 {
			b.Fatal("no slot")
		}
	}
}
