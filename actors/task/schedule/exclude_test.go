package schedule_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
)

// TestExclude: exclude takes dates and cron expressions out of a schedule,
// each row worked out by hand (2026: 25 Dec is a Friday, 9 Jan the second
// Friday; New York skips 02:00–03:00 on 8 March).
func TestExclude(t *testing.T) {
	for _, c := range []struct {
		cron, zone string
		exclude    []string
		from       string
		want       []string
		why        string
	}{
		{"0 9 * * *", "", []string{"2026-12-25"}, "2026-12-24T00:00:00Z",
			[]string{"2026-12-24T09:00:00Z", "2026-12-26T09:00:00Z"}, "a date is a whole day"},
		{"0 9 * * MON-FRI", "", []string{"0 9 * * FRI#2"}, "2026-01-05T00:00:00Z",
			[]string{"2026-01-05T09:00:00Z", "2026-01-06T09:00:00Z", "2026-01-07T09:00:00Z", "2026-01-08T09:00:00Z", "2026-01-12T09:00:00Z"},
			"weekdays but the second Friday"},
		{"*/30 * * * *", "", []string{"* 12-13 * * *"}, "2026-01-01T11:00:00Z",
			[]string{"2026-01-01T11:30:00Z", "2026-01-01T14:00:00Z", "2026-01-01T14:30:00Z"}, "no slot at lunch"},
		{"0 0 * * *", "", []string{"* * * 8 *", "2026-09-01"}, "2026-07-30T00:00:00Z",
			[]string{"2026-07-31T00:00:00Z", "2026-09-02T00:00:00Z"}, "August and 1 September skipped whole"},
		{"0 0 * * * *", "", []string{"* * 9-17 * * MON-FRI"}, "2026-01-02T08:00:00Z",
			[]string{"2026-01-02T18:00:00Z", "2026-01-02T19:00:00Z"}, "six fields; office hours on Friday 2 Jan"},
		{"0 9 * * *", "Europe/Berlin", []string{"2026-12-25", " 2026-12-26 "}, "2026-12-24T09:00:00+01:00",
			[]string{"2026-12-27T09:00:00+01:00"}, "the dates are days on the zone's calendar"},
		{"0 23 * * *", "Pacific/Auckland", []string{"2026-06-01"}, "2026-05-31T00:00:00Z",
			[]string{"2026-05-31T23:00:00+12:00", "2026-06-02T23:00:00+12:00"}, "1 June 23:00 in Auckland is 11:00Z on 1 June; 31 May's stays"},
		{"30 2 * * *", "America/New_York", []string{"30 2 8 3 *"}, "2026-03-07T12:00:00Z",
			[]string{"2026-03-09T02:30:00-04:00"}, "the exclusion names the wall time the expression names: the 02:30 shifted to 03:30 goes"},
		{"30 2 * * *", "America/New_York", []string{"30 3 * * *"}, "2026-03-07T12:00:00Z",
			[]string{"2026-03-08T03:30:00-04:00", "2026-03-09T02:30:00-04:00"}, "03:30 excluded, but the shifted slot is 02:30's"},
		{"0 9 * * *", "", []string{"0 9 * * *", "2026-01-01"}, "", nil, ""}, // rejected below
	} {
		if c.from == "" {
			continue
		}
		spec := schedule.Spec{Cron: []string{c.cron}, Timezone: c.zone, Exclude: c.exclude}
		got := upcoming(t, spec, c.from, len(c.want))
		if !slices.Equal(got, c.want) {
			t.Errorf("%q excluding %q (%s):\n got %q\nwant %q", c.cron, c.exclude, c.why, got, c.want)
			continue
		}
		s, _ := schedule.Compile(spec)
		from, _ := time.Parse(time.RFC3339, c.from)
		last, _ := time.Parse(time.RFC3339, c.want[len(c.want)-1])
		if n := s.Count(from, last); n != len(c.want) {
			t.Errorf("%q excluding %q: Count = %d, want %d", c.cron, c.exclude, n, len(c.want))
		}
	}
	// Exclusions that together cover whole days are passed a day at a time:
	// even seconds, and odd ones from Monday to Saturday, leave the odd
	// seconds of Sundays (11 January 2026 is the first after the 5th).
	s, err := schedule.Compile(schedule.Spec{Cron: []string{"* * * * * *"}, Exclude: []string{"*/2 * * * * *", "1/2 * * * * MON-SAT"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Upcoming(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC), 2); len(got) != 2 ||
		!got[0].Equal(time.Date(2026, 1, 11, 0, 0, 1, 0, time.UTC)) || !got[1].Equal(time.Date(2026, 1, 11, 0, 0, 3, 0, time.UTC)) {
		t.Errorf("odd seconds of Sundays: %v", got)
	}
	// Every day but a 29 February that is a Monday: the 1st–28th, the
	// 29th–31st of other months, and 5th weekdays of February other than
	// Monday. After 2072 the next is 2112.
	s, err = schedule.Compile(schedule.Spec{Cron: []string{"0 0 * * *"},
		Exclude: []string{"0 0 1-28 * *", "0 0 29-31 1,3-12 *", "0 0 * 2 0#5,2#5,3#5,4#5,5#5,6#5"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Next(time.Date(2072, 3, 1, 0, 0, 0, 0, time.UTC)); !got.Equal(time.Date(2112, 2, 29, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("29 February on a Monday after 2072: %s", got)
	}
	// Count over a month: December less Christmas.
	s, _ = schedule.Compile(schedule.Spec{Cron: []string{"0 9 * * *"}, Exclude: []string{"2026-12-25"}})
	if n := s.Count(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC)); n != 30 {
		t.Errorf("December less Christmas: %d slots", n)
	}
	// The note of a shifted slot whose own wall time is excluded.
	s, _ = schedule.Compile(schedule.Spec{Cron: []string{"0,30 2,3 * * *"}, Timezone: "America/New_York", Exclude: []string{"0 3 * * *"}})
	slot := s.Next(time.Date(2026, 3, 8, 1, 0, 0, 0, time.UTC))
	if got := slot.Format(time.RFC3339) + " " + s.Note(slot); got != "2026-03-08T03:00:00-04:00 shifted from 02:00 (does not exist)" {
		t.Errorf("note: %q", got)
	}
}

// TestExcludeRejections: a bad entry, an exclude that leaves no slot, or
// one on a schedule without cron is rejected naming exclude.
func TestExcludeRejections(t *testing.T) {
	many := make([]string, 65)
	for i := range many {
		many[i] = fmt.Sprintf("%d 0 * * *", i%60)
	}
	for _, c := range []struct {
		spec schedule.Spec
		msg  string
	}{
		{schedule.Spec{At: []time.Time{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, Exclude: []string{"2026-01-02"}}, "applies to cron schedules only"},
		{schedule.Spec{Cron: []string{"@daily"}, Exclude: []string{"2026-02-30"}}, `entry 1: "2026-02-30" is not a date`},
		{schedule.Spec{Cron: []string{"@daily"}, Exclude: []string{"2026-12-25", "0 0 32 * *"}}, "entry 2: field 3 (day-of-month): 32 is above 31"},
		{schedule.Spec{Cron: []string{"@daily"}, Exclude: []string{""}}, "entry 1: is empty"},
		{schedule.Spec{Cron: []string{"@daily"}, Exclude: many}, "more than 64 cron expressions"},
		{schedule.Spec{Cron: []string{"0 9 * * MON-FRI"}, Exclude: []string{"* * * * MON-FRI"}}, "excludes every slot"},
		{schedule.Spec{Cron: []string{"0 9 * * *"}, Exclude: []string{"0 9 * * 1-5", "0 9 * * SAT,SUN"}}, "excludes every slot"},
		{schedule.Spec{Cron: []string{"0 9 L * *"}, Exclude: []string{"0 9 28-31 * *"}}, "excludes every slot"},
		{schedule.Spec{Cron: []string{"0 9 LW * *"}, Exclude: []string{"0 9 26-31 * ?"}}, "excludes every slot"},
		{schedule.Spec{Cron: []string{"* * * * * *"}, Exclude: []string{"*/2 * * * * *", "1/2 * * * * *"}}, "excludes every slot"},
		{schedule.Spec{Cron: []string{"0 9 * * *", "0 10 * * *"}, Exclude: []string{"0 9,10 * * *"}}, "excludes every slot"},
	} {
		_, err := schedule.Compile(c.spec)
		var se *schedule.Error
		if !errors.As(err, &se) || se.Field != "exclude" || !strings.Contains(se.Message, c.msg) {
			t.Errorf("%q: got %v; want exclude: …%s…", c.spec.Exclude, err, c.msg)
		}
	}
	// Exact at the edges: LW falls on the 26th when a February of 28 days
	// ends on a Sunday (2027), so 27–31 leaves that slot.
	s, err := schedule.Compile(schedule.Spec{Cron: []string{"0 9 LW * *"}, Exclude: []string{"0 9 27-31 * ?"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); !got.Equal(time.Date(2027, 2, 26, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("LW less 27–31: %s", got)
	}
	// One expression of two fully excluded: the other still has slots.
	if _, err := schedule.Compile(schedule.Spec{Cron: []string{"0 9 * * *", "0 10 * * *"}, Exclude: []string{"0 9 * * *"}}); err != nil {
		t.Errorf("half excluded: %v", err)
	}
	// Live blames exclude when only the exclusion leaves no slot: 02:30 on
	// Sundays from the 25th of March is the last Sunday, the night Berlin's
	// clocks jump, which skip drops.
	s, err = schedule.Compile(schedule.Spec{Cron: []string{"30 2 * 3 SUN"}, Timezone: "Europe/Berlin", DSTGap: "skip", Exclude: []string{"30 2 1-24 * *"}})
	if err != nil {
		t.Fatal(err)
	}
	var se *schedule.Error
	if err := s.Live(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); !errors.As(err, &se) || se.Field != "exclude" {
		t.Errorf("Live: %v", err)
	}
}

// TestExcludeAgainstFilter: random schedules and exclusions give the slots
// of the schedule alone less those an exclusion matches — each matched by
// compiling the exclusion as a schedule of its own and asking whether it
// has a slot at that wall time — so the engine's jumps over excluded
// stretches are checked against a plain filter. A rejection ("excludes
// every slot") must hold for the first slots.
func TestExcludeAgainstFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 2))
	// Six fields throughout, so seconds are excluded in part too.
	times := []string{"0 0 9", "0 */20 *", "0 0,30 8-17", "0 15 */6", "0 * 0-1", "*/15 0-2 9", "* 0 12", "*/2 */30 *"}
	kept, rejected := 0, 0
	for i := range 1500 {
		dom, _, _ := genField(r, genDom)
		dow, _, _ := genField(r, genDow)
		cron := fmt.Sprintf("%s %s * %s", times[r.IntN(len(times))], dom, dow)
		var exclude []string
		for range 1 + r.IntN(3) {
			if r.IntN(4) == 0 {
				exclude = append(exclude, time.Date(2026, time.Month(1+r.IntN(12)), 1+r.IntN(28), 0, 0, 0, 0, time.UTC).Format(time.DateOnly))
				continue
			}
			edom, _, _ := genField(r, genDom)
			edow, _, _ := genField(r, genDow)
			exclude = append(exclude, fmt.Sprintf("%s %s %s %s %s %s", []string{"*", "*", "0", "*/2", "0-29", "1-59"}[r.IntN(6)],
				[]string{"*", "0", "*/20", "0-29", "1-59"}[r.IntN(5)], []string{"*", "9", "8-12", "*/2", "1-23"}[r.IntN(5)],
				edom, []string{"*", "*", "1-6", "3"}[r.IntN(4)], edow))
		}
		plain, err := schedule.Compile(schedule.Spec{Cron: []string{cron}})
		if err != nil {
			continue // the schedule itself never matches
		}
		var excluders []*schedule.Schedule
		var dates []string
		for _, x := range exclude {
			if !strings.Contains(x, " ") {
				dates = append(dates, x)
				continue
			}
			if e, err := schedule.Compile(schedule.Spec{Cron: []string{x}}); err == nil {
				excluders = append(excluders, e)
			}
		}
		excluded := func(slot time.Time) bool {
			if slices.Contains(dates, slot.Format(time.DateOnly)) {
				return true
			}
			for _, e := range excluders {
				if e.Next(slot.Add(-time.Second)).Equal(slot) {
					return true
				}
			}
			return false
		}
		s, err := schedule.Compile(schedule.Spec{Cron: []string{cron}, Exclude: exclude})
		from := time.Date(2025, 12, 20, 0, 0, 0, 0, time.UTC)
		var se *schedule.Error
		if errors.As(err, &se) && strings.Contains(se.Message, "excludes every slot") {
			rejected++
			for n, slot := 0, plain.Next(from); n < 300 && !slot.IsZero(); n, slot = n+1, plain.Next(slot) {
				if !excluded(slot) {
					t.Fatalf("case %d: %q excluding %q rejected, but %s is not excluded", i, cron, exclude, slot.Format(time.RFC3339))
				}
			}
			continue
		}
		if err != nil {
			continue // a never-matching exclusion entry
		}
		kept++
		var want []string
		for n, slot := 0, plain.Next(from); n < 3000 && len(want) < 12 && !slot.IsZero(); n, slot = n+1, plain.Next(slot) {
			if !excluded(slot) {
				want = append(want, slot.Format(time.RFC3339))
			}
		}
		var got []string
		for _, slot := range s.Upcoming(from, len(want)) {
			got = append(got, slot.Format(time.RFC3339))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: %q excluding %q:\n got %q\nwant %q", i, cron, exclude, got, want)
		}
	}
	t.Logf("%d schedules with exclusions matched the filter, %d rejected as excluding every slot", kept, rejected)
	if kept < 800 || rejected < 5 {
		t.Fatalf("the generator is off: %d kept, %d rejected", kept, rejected)
	}
}
