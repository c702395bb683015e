package schedule_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
)

// TestExtendedSyntax: L, L-n, nW, LW, d#n, dL and ranges ending at SUN
// (DESIGN §8.4), each row worked out by hand from the definitions and a
// calendar, with the reason. In 2026 the 1st of each month falls on:
// Jan Thu, Feb Sun, Mar Sun, Apr Wed, May Fri, Jun Mon, Jul Wed, Aug Sat,
// Sep Tue, Oct Thu, Nov Sun, Dec Tue.
func TestExtendedSyntax(t *testing.T) {
	const y26 = "2025-12-31T23:59:59Z"
	for _, c := range []struct {
		cron, zone, gap, overlap, from string
		want                           []string
		why                            string
	}{
		// L and L-n.
		{cron: "0 0 L * *", from: y26, want: []string{"2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-31T00:00:00Z", "2026-04-30T00:00:00Z"},
			why: "the last day of months of 31, 28, 31 and 30 days"},
		{cron: "0 0 L 2 *", from: "2027-06-01T00:00:00Z", want: []string{"2028-02-29T00:00:00Z", "2029-02-28T00:00:00Z"},
			why: "2028 is a leap year: February ends on the 29th; 2029's on the 28th"},
		{cron: "0 0 l 2 ?", from: "2099-06-01T00:00:00Z", want: []string{"2100-02-28T00:00:00Z"},
			why: "2100 is not a leap year; any case"},
		{cron: "0 0 L-1 * *", from: y26, want: []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-30T00:00:00Z", "2026-04-29T00:00:00Z"},
			why: "the day before the last"},
		{cron: "0 0 L-30 * *", from: y26, want: []string{"2026-01-01T00:00:00Z", "2026-03-01T00:00:00Z", "2026-05-01T00:00:00Z", "2026-07-01T00:00:00Z", "2026-08-01T00:00:00Z", "2026-10-01T00:00:00Z", "2026-12-01T00:00:00Z"},
			why: "31-30 is the 1st; in months of 28, 29 or 30 days L-30 falls before the 1st: no slot"},
		{cron: "0 0 L-28 2 *", from: y26, want: []string{"2028-02-01T00:00:00Z", "2032-02-01T00:00:00Z"},
			why: "29-28 is the 1st of a leap February; in a February of 28 days it falls before the 1st"},
		{cron: "0 0 L-27 2 *", from: y26, want: []string{"2026-02-01T00:00:00Z", "2027-02-01T00:00:00Z", "2028-02-02T00:00:00Z"},
			why: "28-27 = 1, but 29-27 = 2 in the leap year 2028"},
		// nW.
		{cron: "0 0 15W * *", from: y26, want: []string{"2026-01-15T00:00:00Z", "2026-02-16T00:00:00Z", "2026-03-16T00:00:00Z", "2026-04-15T00:00:00Z", "2026-05-15T00:00:00Z", "2026-06-15T00:00:00Z"},
			why: "15 Jan Thu, 15 Feb and 15 Mar Sundays → Monday 16th, 15 Apr Wed, 15 May Fri, 15 Jun Mon"},
		{cron: "0 0 15W 8 *", from: y26, want: []string{"2026-08-14T00:00:00Z", "2027-08-16T00:00:00Z"},
			why: "15 Aug 2026 is a Saturday → Friday 14th; 15 Aug 2027 a Sunday → Monday 16th"},
		{cron: "0 0 1W 8 *", from: y26, want: []string{"2026-08-03T00:00:00Z", "2027-08-02T00:00:00Z"},
			why: "1 Aug 2026 is a Saturday: 1W stays in August, Monday the 3rd; 1 Aug 2027 a Sunday → Monday 2nd"},
		{cron: "0 0 1w * *", from: y26, want: []string{"2026-01-01T00:00:00Z", "2026-02-02T00:00:00Z", "2026-03-02T00:00:00Z", "2026-04-01T00:00:00Z"},
			why: "1 Jan Thu; 1 Feb and 1 Mar Sundays → Monday 2nd; 1 Apr Wed"},
		{cron: "0 0 31W * *", from: y26, want: []string{"2026-01-30T00:00:00Z", "2026-03-31T00:00:00Z", "2026-05-29T00:00:00Z", "2026-07-31T00:00:00Z", "2026-08-31T00:00:00Z", "2026-10-30T00:00:00Z", "2026-12-31T00:00:00Z"},
			why: "31 Jan Sat → Fri 30th; 31 May is a Sunday and the last day → Fri 29th; 31 Oct Sat → Fri 30th; no slot in months without a 31st"},
		{cron: "0 0 30W 8,11 *", from: y26, want: []string{"2026-08-31T00:00:00Z", "2026-11-30T00:00:00Z", "2027-08-30T00:00:00Z"},
			why: "30 Aug 2026 is a Sunday but not the last day → Monday 31st; 30 Nov 2026 a Monday; 30 Aug 2027 a Monday"},
		{cron: "0 0 29W 2 *", from: y26, want: []string{"2028-02-29T00:00:00Z", "2032-02-27T00:00:00Z"},
			why: "no 29 February before 2028 (a Tuesday); 29 Feb 2032 is a Sunday and the last day → Friday 27th"},
		// LW.
		{cron: "0 0 LW * *", from: y26, want: []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-31T00:00:00Z", "2026-04-30T00:00:00Z", "2026-05-29T00:00:00Z", "2026-06-30T00:00:00Z"},
			why: "last days: 31 Jan Sat → Fri 30th, 28 Feb Sat → Fri 27th, 31 Mar Tue, 30 Apr Thu, 31 May Sun → Fri 29th, 30 Jun Tue"},
		{cron: "0 30 9 lw 11 *", from: "2025-01-01T00:00:00Z", want: []string{"2025-11-28T09:30:00Z", "2026-11-30T09:30:00Z"},
			why: "30 Nov 2025 is a Sunday → Friday 28th; 30 Nov 2026 a Monday; six fields"},
		// d#n and dL.
		{cron: "0 0 * * FRI#2", from: y26, want: []string{"2026-01-09T00:00:00Z", "2026-02-13T00:00:00Z", "2026-03-13T00:00:00Z", "2026-04-10T00:00:00Z", "2026-05-08T00:00:00Z"},
			why: "second Fridays"},
		{cron: "0 0 * * 5#2", from: y26, want: []string{"2026-01-09T00:00:00Z", "2026-02-13T00:00:00Z"}, why: "5 is Friday"},
		{cron: "0 0 * * SUN#1", from: y26, want: []string{"2026-01-04T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z", "2026-04-05T00:00:00Z"},
			why: "first Sundays"},
		{cron: "0 0 * * 7#1", from: y26, want: []string{"2026-01-04T00:00:00Z", "2026-02-01T00:00:00Z"}, why: "7 is Sunday"},
		{cron: "0 0 * * 0#1", from: y26, want: []string{"2026-01-04T00:00:00Z", "2026-02-01T00:00:00Z"}, why: "0 is Sunday"},
		{cron: "0 0 * * THU#5", from: y26, want: []string{"2026-01-29T00:00:00Z", "2026-04-30T00:00:00Z", "2026-07-30T00:00:00Z", "2026-10-29T00:00:00Z", "2026-12-31T00:00:00Z"},
			why: "only months whose 1st falls on Tue, Wed or Thu (31 days) or Wed, Thu (30 days) have a fifth Thursday"},
		{cron: "0 0 * 2 MON#5", from: y26, want: []string{"2044-02-29T00:00:00Z"},
			why: "a fifth Monday in February needs 29 days and 1 Feb a Monday: 2044 is the first such year after 2016"},
		{cron: "0 0 * 2 MON#5", from: "2072-03-01T00:00:00Z", want: []string{"2112-02-29T00:00:00Z"},
			why: "after 2072 the next is 2112: 2100 is not a leap year, a 40-year wait"},
		{cron: "0 0 * * FRIL", from: y26, want: []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-27T00:00:00Z", "2026-04-24T00:00:00Z", "2026-05-29T00:00:00Z", "2026-06-26T00:00:00Z", "2026-07-31T00:00:00Z"},
			why: "last Fridays"},
		{cron: "0 0 * * 5l", from: y26, want: []string{"2026-01-30T00:00:00Z", "2026-02-27T00:00:00Z"}, why: "5L is FRIL"},
		{cron: "0 0 * * 7L", from: y26, want: []string{"2026-01-25T00:00:00Z", "2026-02-22T00:00:00Z", "2026-03-29T00:00:00Z", "2026-04-26T00:00:00Z", "2026-05-31T00:00:00Z"},
			why: "last Sundays; 31 May is one"},
		{cron: "0 0 * * sunL", from: y26, want: []string{"2026-01-25T00:00:00Z", "2026-02-22T00:00:00Z"}, why: "SUNL is 7L"},
		// Ranges ending at Sunday.
		{cron: "0 0 * * WED-SUN", from: "2026-03-01T00:00:00Z", want: []string{"2026-03-04T00:00:00Z", "2026-03-05T00:00:00Z", "2026-03-06T00:00:00Z", "2026-03-07T00:00:00Z", "2026-03-08T00:00:00Z", "2026-03-11T00:00:00Z"},
			why: "WED-SUN is 3–7: Wednesday to Sunday (1 March 2026 is a Sunday)"},
		{cron: "0 0 * * MON-SUN", from: "2026-03-01T00:00:00Z", want: []string{"2026-03-02T00:00:00Z", "2026-03-03T00:00:00Z", "2026-03-04T00:00:00Z", "2026-03-05T00:00:00Z", "2026-03-06T00:00:00Z", "2026-03-07T00:00:00Z", "2026-03-08T00:00:00Z", "2026-03-09T00:00:00Z"},
			why: "MON-SUN is every day"},
		{cron: "0 0 * * sat-sun", from: "2026-03-01T00:00:00Z", want: []string{"2026-03-07T00:00:00Z", "2026-03-08T00:00:00Z", "2026-03-14T00:00:00Z", "2026-03-15T00:00:00Z"},
			why: "SAT-SUN is the weekend"},
		{cron: "0 0 * * 5-7", from: "2026-03-01T00:00:00Z", want: []string{"2026-03-06T00:00:00Z", "2026-03-07T00:00:00Z", "2026-03-08T00:00:00Z", "2026-03-13T00:00:00Z"},
			why: "5-7 is Friday to Sunday"},
		{cron: "0 0 * * WED-SUN/2", from: "2026-03-01T00:00:00Z", want: []string{"2026-03-04T00:00:00Z", "2026-03-06T00:00:00Z", "2026-03-08T00:00:00Z", "2026-03-11T00:00:00Z"},
			why: "3–7 by 2: Wednesday, Friday, Sunday"},
		// Lists.
		{cron: "0 0 L,15 * *", from: y26, want: []string{"2026-01-15T00:00:00Z", "2026-01-31T00:00:00Z", "2026-02-15T00:00:00Z", "2026-02-28T00:00:00Z"},
			why: "the 15th and the last day"},
		{cron: "0 0 1W,15W * *", from: "2026-01-01T00:00:00Z", want: []string{"2026-01-15T00:00:00Z", "2026-02-02T00:00:00Z", "2026-02-16T00:00:00Z", "2026-03-02T00:00:00Z", "2026-03-16T00:00:00Z"},
			why: "1 and 15 Feb, 1 and 15 Mar are Sundays → Mondays 2nd and 16th"},
		{cron: "0 0 L-2,LW * *", from: y26, want: []string{"2026-01-29T00:00:00Z", "2026-01-30T00:00:00Z", "2026-02-26T00:00:00Z", "2026-02-27T00:00:00Z", "2026-03-29T00:00:00Z", "2026-03-31T00:00:00Z"},
			why: "two days before the last, and the last weekday"},
		{cron: "0 0 * * MON#1,FRIL", from: y26, want: []string{"2026-01-05T00:00:00Z", "2026-01-30T00:00:00Z", "2026-02-02T00:00:00Z", "2026-02-27T00:00:00Z"},
			why: "first Monday and last Friday"},
		{cron: "0 0 * * MON#1,FRI", from: y26, want: []string{"2026-01-02T00:00:00Z", "2026-01-05T00:00:00Z", "2026-01-09T00:00:00Z", "2026-01-16T00:00:00Z"},
			why: "a plain weekday beside a d#n item: every Friday and the first Monday"},
		// The union rule: both day fields restricted, so either matches.
		{cron: "0 0 L * FRI#2", from: y26, want: []string{"2026-01-09T00:00:00Z", "2026-01-31T00:00:00Z", "2026-02-13T00:00:00Z", "2026-02-28T00:00:00Z", "2026-03-13T00:00:00Z", "2026-03-31T00:00:00Z"},
			why: "the last day or the second Friday"},
		{cron: "0 0 15 * FRIL", from: y26, want: []string{"2026-01-15T00:00:00Z", "2026-01-30T00:00:00Z", "2026-02-15T00:00:00Z", "2026-02-27T00:00:00Z"},
			why: "the 15th or the last Friday"},
		{cron: "0 0 L * MON", from: y26, want: []string{"2026-01-05T00:00:00Z", "2026-01-12T00:00:00Z", "2026-01-19T00:00:00Z", "2026-01-26T00:00:00Z", "2026-01-31T00:00:00Z", "2026-02-02T00:00:00Z"},
			why: "the last day or a Monday"},
		{cron: "0 0 LW * SAT#1", from: y26, want: []string{"2026-01-03T00:00:00Z", "2026-01-30T00:00:00Z", "2026-02-07T00:00:00Z", "2026-02-27T00:00:00Z"},
			why: "the last weekday or the first Saturday"},
		{cron: "0 0 L ? *", from: y26, want: []string{"2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z"},
			why: "? leaves day-of-week unrestricted: day-of-month alone decides"},
		{cron: "0 0 ? * FRI#2", from: y26, want: []string{"2026-01-09T00:00:00Z", "2026-02-13T00:00:00Z"},
			why: "? leaves day-of-month unrestricted"},
		{cron: "0 0 L 2 MON#5", from: "2027-01-01T00:00:00Z", want: []string{"2027-02-28T00:00:00Z", "2028-02-29T00:00:00Z", "2029-02-28T00:00:00Z"},
			why: "a field of only L is restricted, so the union rule applies: the last day of February, or a fifth Monday"},
		// Time zones: the day rules read the zone's civil calendar.
		{cron: "0 0 L * *", zone: "Pacific/Auckland", from: y26, want: []string{"2026-01-31T00:00:00+13:00", "2026-02-28T00:00:00+13:00", "2026-03-31T00:00:00+13:00", "2026-04-30T00:00:00+12:00"},
			why: "midnight of Auckland's last day is the previous day in UTC; DST ends there on 5 April 2026"},
		{cron: "30 2 * 3 SUNL", zone: "Europe/Berlin", from: y26, want: []string{"2026-03-29T03:30:00+02:00", "2027-03-28T03:30:00+02:00"},
			why: "02:30 on the last Sunday of March does not exist in Berlin; shift fires at 03:30 CEST"},
		{cron: "30 2 * 3 SUNL", zone: "Europe/Berlin", gap: "skip", from: y26, want: nil,
			why: "under skip it never fires: every last Sunday of March is the night clocks jump"},
		{cron: "30 2 * 10 7L", zone: "Europe/Berlin", from: y26, want: []string{"2026-10-25T02:30:00+02:00", "2027-10-31T02:30:00+02:00"},
			why: "02:30 on the last Sunday of October happens twice; first is in CEST"},
		{cron: "30 2 * 10 7L", zone: "Europe/Berlin", overlap: "last", from: y26, want: []string{"2026-10-25T02:30:00+01:00", "2027-10-31T02:30:00+01:00"},
			why: "last: the second 02:30, in CET"},
		{cron: "30 2 * 10 7L", zone: "Europe/Berlin", overlap: "both", from: y26, want: []string{"2026-10-25T02:30:00+02:00", "2026-10-25T02:30:00+01:00", "2027-10-31T02:30:00+02:00"},
			why: "both: each 02:30"},
		{cron: "0 12 L-1 12 *", zone: "Pacific/Apia", from: "2011-12-01T00:00:00Z", want: []string{"2011-12-31T12:00:00+14:00", "2012-12-30T12:00:00+14:00"},
			why: "30 December 2011 never happened in Apia (the day was skipped crossing the date line); shift fires its noon 24 h on"},
		{cron: "0 12 L-1 12 *", zone: "Pacific/Apia", gap: "skip", from: "2011-12-01T00:00:00Z", want: []string{"2012-12-30T12:00:00+14:00"},
			why: "skip: no slot in 2011"},
	} {
		spec := schedule.Spec{Cron: []string{c.cron}, Timezone: c.zone, DSTGap: c.gap, DSTOverlap: c.overlap}
		got := upcoming(t, spec, c.from, max(len(c.want), 1))
		if !slices.Equal(got, c.want) {
			t.Errorf("%q in %q (%s):\n got %q\nwant %q", c.cron, c.zone, c.why, got, c.want)
			continue
		}
		if len(c.want) == 0 {
			continue
		}
		// Count takes the arithmetic path, not Next: it must agree.
		s, _ := schedule.Compile(spec)
		from, _ := time.Parse(time.RFC3339, c.from)
		last, _ := time.Parse(time.RFC3339, c.want[len(c.want)-1])
		if n := s.Count(from, last); n != len(c.want) {
			t.Errorf("%q in %q: Count = %d, want %d", c.cron, c.zone, n, len(c.want))
		}
		// Prev walks back to the slot before.
		if len(c.want) > 1 {
			prev, _ := time.Parse(time.RFC3339, c.want[len(c.want)-2])
			if p := s.Prev(last); !p.Equal(prev) {
				t.Errorf("%q in %q: Prev(%s) = %s, want %s", c.cron, c.zone, last, p, prev)
			}
		}
	}
}

// TestExtendedRejections: a misplaced L, W or #, an out-of-range n, and an
// expression that can never match are rejected naming the field.
func TestExtendedRejections(t *testing.T) {
	for _, c := range []struct{ cron, msg string }{
		{"L * * * *", "field 1 (minute)"},
		{"0 L * * *", "field 2 (hour)"},
		{"0 0 * L *", "field 4 (month)"},
		{"0 0 * 5W *", "field 4 (month)"},
		{"0 0 * 1#2 *", "field 4 (month)"},
		{"L 0 0 * * *", "field 1 (second)"},
		{"1W 0 0 * * *", "field 1 (second)"},
		{"0 0 1#2 * *", "field 3 (day-of-month): \"1#2\": # belongs in day-of-week"},
		{"0 0 * * 5W", "field 5 (day-of-week): \"5W\": W belongs in day-of-month"},
		{"0 0 * * LW", "field 5 (day-of-week)"},
		{"0 0 32W * *", "field 3 (day-of-month): \"32W\": the day of nW must be from 1 to 31"},
		{"0 0 0W * *", "field 3 (day-of-month): \"0W\""},
		{"0 0 L-31 * *", "field 3 (day-of-month): \"L-31\": the n of L-n must be from 1 to 30"},
		{"0 0 L-0 * *", "field 3 (day-of-month): \"L-0\""},
		{"0 0 L- * *", "field 3 (day-of-month)"},
		{"0 0 * * FRI#6", "field 5 (day-of-week): \"FRI#6\": the n of d#n must be from 1 to 5"},
		{"0 0 * * FRI#0", "field 5 (day-of-week): \"FRI#0\""},
		{"0 0 * * 8L", "field 5 (day-of-week): \"8L\": 8 is above 7"},
		{"0 0 * * 8#1", "field 5 (day-of-week)"},
		{"0 0 * * 1#", "field 5 (day-of-week): \"1#\": d#n needs an occurrence"},
		{"0 0 * * #2", "field 5 (day-of-week): \"#2\": d#n needs a weekday"},
		{"0 0 * * FRI#2#3", "field 5 (day-of-week)"},
		{"0 0 * * FUN#2", "field 5 (day-of-week)"},
		{"0 0 10-15W * *", "field 3 (day-of-month): \"10-15W\": a range cannot take W"},
		{"0 0 * * 2-4#2", "field 5 (day-of-week): \"2-4#2\": a range cannot take #"},
		{"0 0 * * MON-FRIL", "field 5 (day-of-week)"},
		{"0 0 W * *", "field 3 (day-of-month): a bare W"},
		{"0 0 * * L", "field 5 (day-of-week): a bare L"},
		{"0 0 L/2 * *", "field 3 (day-of-month): \"L/2\": a step cannot apply"},
		{"0 0 1W/2 * *", "field 3 (day-of-month)"},
		{"0 0 * * FRI#2/2", "field 5 (day-of-week)"},
		{"0 0 * * 5L/2", "field 5 (day-of-week)"},
		{"0 0 LW-2 * *", "field 3 (day-of-month): \"LW-2\": LW (the last weekday of the month) takes no offset"},
		{"0 0 L-2W * *", "field 3 (day-of-month)"},
		{"0 0 1-L * *", "field 3 (day-of-month)"},
		{"0 0 5L * *", "field 3 (day-of-month)"},
		{"0 0 15,W * *", "field 3 (day-of-month)"},
		// Never matches.
		{"0 0 31W 2 *", "never matches"},
		{"0 0 31W 4,6,9,11 *", "never matches"},
		{"0 0 L-30 2 *", "never matches"},
		{"0 0 L-29 2 *", "never matches"},
		{"0 0 30 2 *", "never matches"},
		{"0 0 30W 2 ?", "never matches"},
	} {
		_, err := schedule.Compile(schedule.Spec{Cron: []string{c.cron}})
		var se *schedule.Error
		if !errors.As(err, &se) || !errors.Is(err, schedule.ErrInvalid) {
			t.Errorf("%q: want a *schedule.Error, got %v", c.cron, err)
			continue
		}
		if se.Field != "cron" || !strings.Contains(se.Message, c.msg) {
			t.Errorf("%q: got field %q message %q; want field cron and %q", c.cron, se.Field, se.Message, c.msg)
		}
	}
	// Expressions that can match, however rarely, compile.
	for _, cron := range []string{"0 0 L 2 *", "0 0 29W 2 *", "0 0 L-28 2 *", "0 0 * 2 MON#5", "0 0 * 2 SUN#5", "0 0 31W 1-2 *",
		"0 0 L-30 1 *", "0 0 30 2 FRI#2", "0 0 30 2 MON", "0 0 * 2 FRIL", "0 0 LW 2 *", "0 0 1W 2 *"} {
		if _, err := schedule.Compile(schedule.Spec{Cron: []string{cron}}); err != nil {
			t.Errorf("%q: %v", cron, err)
		}
	}
}
