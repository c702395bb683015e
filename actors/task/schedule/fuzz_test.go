package schedule_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
)

var fuzzZones = []string{"", "America/New_York", "Europe/Berlin", "America/Santiago", "Australia/Lord_Howe", "Asia/Kolkata", "Pacific/Apia", "Pacific/Kiritimati", "Antarctica/Troll"}

// FuzzParse: any text either compiles or is rejected with a *schedule.Error;
// never a panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"* * * * *", "0 9 * * MON-FRI", "15/35 20-35/15 1/2 */2 * *", "@weekly", "0 0 30 2 *",
		"CRON_TZ=UTC * * * * *", "*/0 * * * *", "1-2-3 * * * *", "0 0 29 2 MON/2", "7/3 * * * 7/2",
		"0 0 L * *", "0 0 L-3 2 *", "0 0 15W * *", "0 0 1W,LW * *", "0 0 * * FRI#2", "0 0 * * 5L,MON#1", "0 0 * * WED-SUN",
		"0 0 L * FRI#2", "0 0 31W 2 *", "0 0 L-30 2 *", "0 0 * 2 MON#5", "0 0 L/2 * *", "0 0 * * 2-4#2", "0 0 10-15W * *",
		"0 0 W * *", "0 0 * * #2", "0 0 * * 1#", "0 0 L-31 * *", "0 0 * * 8L", "0 0 LW-2 * *", "L * * * *", "0 0 * JUL *"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		_, err := schedule.Compile(schedule.Spec{Cron: []string{expr}})
		var se *schedule.Error
		if err != nil && (!errors.As(err, &se) || se.Field != "cron") {
			t.Fatalf("%q: %v is not a cron *schedule.Error", expr, err)
		}
	})
}

// FuzzNext: for every expression that compiles, every zone and policy and
// any instant, Next terminates, slots strictly increase and Prev and Count
// agree with them; a compiled expression has a slot within the horizon
// from 2026 in UTC.
func FuzzNext(f *testing.F) {
	f.Add("30 2 * * *", uint8(1), uint8(0), int64(1772935200))
	f.Add("*/30 * * * *", uint8(2), uint8(5), int64(1793520000))
	f.Add("0 0 * * *", uint8(3), uint8(3), int64(1788580800))
	f.Add("45 1 * * *", uint8(4), uint8(4), int64(1775311200))
	f.Add("59 23 30 12 *", uint8(6), uint8(1), int64(1325152800))
	f.Add("0 0 29 2 *", uint8(0), uint8(0), int64(-62135596800))
	f.Add("* * * * * *", uint8(5), uint8(2), int64(253402300790))
	f.Add("0 0 * 2 MON#5", uint8(0), uint8(0), int64(3224880000))
	f.Add("30 2 * 3 SUNL", uint8(2), uint8(1), int64(1767225600))
	f.Add("0 0 LW * SAT#1", uint8(3), uint8(4), int64(1767225600))
	f.Add("0 0 1W,15W,L-2 * *", uint8(7), uint8(0), int64(-62135596800))
	f.Add("0 12 L-1 12 *", uint8(6), uint8(1), int64(1322697600))
	f.Fuzz(func(t *testing.T, expr string, zone, policy uint8, unix int64) {
		spec := schedule.Spec{Cron: []string{expr}, Timezone: fuzzZones[int(zone)%len(fuzzZones)],
			DSTGap: []string{"shift", "skip"}[policy%2], DSTOverlap: []string{"first", "last", "both"}[int(policy/2)%3]}
		s, err := schedule.Compile(spec)
		if err != nil {
			return
		}
		after := time.Unix(unix, int64(policy)*7e6)
		prev := after
		walked := 0
		for i := 0; i < 20; i++ {
			n := s.Next(prev)
			if n.IsZero() {
				break
			}
			walked++
			if !n.After(prev) {
				t.Fatalf("%+v: slot %s after %s is not later", spec, n, prev)
			}
			if n.Nanosecond() != 0 {
				t.Fatalf("%+v: slot %s is not a whole second", spec, n)
			}
			if i > 0 && i < 3 {
				// The slot before a slot is the one Next gave before it.
				if p := s.Prev(n); !p.Equal(prev) {
					t.Fatalf("%+v: Prev(%s) = %s, want %s", spec, n, p, prev)
				}
			}
			prev = n
		}
		if got := s.Count(after, prev); got != walked {
			t.Fatalf("%+v: Count(%s, %s) = %d, walking gives %d", spec, after, prev, got, walked)
		}
		// The never-matches check reads the calendar, not the zone: in UTC
		// every compiled expression fires. (In a zone it may not: 30 2 * 3
		// SUNL in Berlin under dst_gap skip falls in the gap every year.)
		utc, err := schedule.Compile(schedule.Spec{Cron: []string{expr}})
		if err != nil {
			t.Fatalf("%q compiles in %q but not in UTC: %v", expr, spec.Timezone, err)
		}
		if utc.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
			t.Fatalf("%q compiles but never fires after 2026 in UTC", expr)
		}
	})
}

// FuzzExclude: any exclude entry either compiles or is rejected naming
// exclude; a schedule that compiles with it gives strictly increasing slots
// none of which the entry matches, and Next terminates.
func FuzzExclude(f *testing.F) {
	for _, s := range []string{"2026-12-25", "0 9 * * SAT,SUN", "* 12-13 * * *", "*/2 * * * * *", "2026-02-30", "0 0 32 * *",
		"* * * * *", "0 9 * * FRI#2", "2026-1-1", "@daily", "0 9 L * *", "1/2 * * * * MON-SAT", ""} {
		f.Add("* * * * * *", s, int64(1767225600))
		f.Add("0 9 * * *", s, int64(1798761600))
	}
	f.Fuzz(func(t *testing.T, cron, exclude string, unix int64) {
		spec := schedule.Spec{Cron: []string{cron}, Exclude: []string{exclude}}
		s, err := schedule.Compile(spec)
		var se *schedule.Error
		if err != nil {
			if !errors.As(err, &se) || (se.Field != "exclude" && se.Field != "cron") {
				t.Fatalf("%+v: %v is not a cron or exclude *schedule.Error", spec, err)
			}
			return
		}
		x, err := schedule.Compile(schedule.Spec{Cron: []string{exclude}})
		prev := time.Unix(unix, 0)
		for range 5 {
			n := s.Next(prev)
			if n.IsZero() {
				break
			}
			if !n.After(prev) {
				t.Fatalf("%+v: slot %s after %s is not later", spec, n, prev)
			}
			if err == nil && x.Next(n.Add(-time.Second)).Equal(n) {
				t.Fatalf("%+v: slot %s is excluded", spec, n)
			}
			prev = n
		}
	})
}
