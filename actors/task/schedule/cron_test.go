package schedule_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
)

// TestSyntax: each form of cron syntax docs/schedules.md lists, in UTC, against slots worked out from
// the calendar (2026-03-02 is a Monday).
func TestSyntax(t *testing.T) {
	const from = "2026-03-01T23:59:59Z" // a Sunday
	for _, c := range []struct {
		cron string
		want []string
	}{
		{"* * * * *", []string{"2026-03-02T00:00:00Z", "2026-03-02T00:01:00Z"}},
		{"* * * * * *", []string{"2026-03-02T00:00:00Z", "2026-03-02T00:00:01Z"}},
		{"*/20 * * * * *", []string{"2026-03-02T00:00:00Z", "2026-03-02T00:00:20Z", "2026-03-02T00:00:40Z", "2026-03-02T00:01:00Z"}},
		{"? ? ? ? ?", []string{"2026-03-02T00:00:00Z"}},
		{"5,10-11 7 * * *", []string{"2026-03-02T07:05:00Z", "2026-03-02T07:10:00Z", "2026-03-02T07:11:00Z", "2026-03-03T07:05:00Z"}},
		{"10-40/15 9 * * *", []string{"2026-03-02T09:10:00Z", "2026-03-02T09:25:00Z", "2026-03-02T09:40:00Z", "2026-03-03T09:10:00Z"}},
		{"50/5 9 * * *", []string{"2026-03-02T09:50:00Z", "2026-03-02T09:55:00Z", "2026-03-03T09:50:00Z"}},
		{"0 0 1 jan,Jul *", []string{"2026-07-01T00:00:00Z", "2027-01-01T00:00:00Z"}},
		{"0 0 1 JUN-aug *", []string{"2026-06-01T00:00:00Z", "2026-07-01T00:00:00Z", "2026-08-01T00:00:00Z", "2027-06-01T00:00:00Z"}},
		{"0 9 * * mon-FRI", []string{"2026-03-02T09:00:00Z", "2026-03-03T09:00:00Z", "2026-03-04T09:00:00Z", "2026-03-05T09:00:00Z", "2026-03-06T09:00:00Z", "2026-03-09T09:00:00Z"}},
		{"0 9 * * 0", []string{"2026-03-08T09:00:00Z"}},
		{"0 9 * * 7", []string{"2026-03-08T09:00:00Z"}},
		{"0 9 * * Sun", []string{"2026-03-08T09:00:00Z"}},
		{"0 9 * * 5-7", []string{"2026-03-06T09:00:00Z", "2026-03-07T09:00:00Z", "2026-03-08T09:00:00Z", "2026-03-13T09:00:00Z"}},
		{"0 9 * * MON/2", []string{"2026-03-02T09:00:00Z", "2026-03-04T09:00:00Z", "2026-03-06T09:00:00Z", "2026-03-09T09:00:00Z"}},
		{"0 9 * * */3", []string{"2026-03-04T09:00:00Z", "2026-03-07T09:00:00Z", "2026-03-08T09:00:00Z"}},
		// Both day fields restricted: either matches (the 13th, or a Friday).
		{"0 0 13 * FRI", []string{"2026-03-06T00:00:00Z", "2026-03-13T00:00:00Z", "2026-03-20T00:00:00Z", "2026-03-27T00:00:00Z", "2026-04-03T00:00:00Z", "2026-04-10T00:00:00Z", "2026-04-13T00:00:00Z"}},
		// A step is a restriction too: the 1st, 6th, … or a Monday.
		{"0 0 */5 * MON", []string{"2026-03-02T00:00:00Z", "2026-03-06T00:00:00Z", "2026-03-09T00:00:00Z", "2026-03-11T00:00:00Z"}},
		// One day field is * or ?: both must match.
		{"0 0 * * FRI", []string{"2026-03-06T00:00:00Z", "2026-03-13T00:00:00Z"}},
		{"0 0 13 * ?", []string{"2026-03-13T00:00:00Z", "2026-04-13T00:00:00Z"}},
		{"0 0 ? * FRI", []string{"2026-03-06T00:00:00Z", "2026-03-13T00:00:00Z"}},
		{"0 0 31 * *", []string{"2026-03-31T00:00:00Z", "2026-05-31T00:00:00Z", "2026-07-31T00:00:00Z"}},
		{"0 0 29 2 *", []string{"2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z"}},
		{"@yearly", []string{"2027-01-01T00:00:00Z"}},
		{"@annually", []string{"2027-01-01T00:00:00Z"}},
		{"@monthly", []string{"2026-04-01T00:00:00Z"}},
		{"@weekly", []string{"2026-03-08T00:00:00Z"}},
		{"@daily", []string{"2026-03-02T00:00:00Z", "2026-03-03T00:00:00Z"}},
		{"@MIDNIGHT", []string{"2026-03-02T00:00:00Z"}},
		{"@hourly", []string{"2026-03-02T00:00:00Z", "2026-03-02T01:00:00Z"}},
		{"  0   12  * * *  ", []string{"2026-03-02T12:00:00Z"}},
	} {
		got := upcoming(t, schedule.Spec{Cron: []string{c.cron}}, from, len(c.want))
		if !slices.Equal(got, c.want) {
			t.Errorf("%q:\n got %q\nwant %q", c.cron, got, c.want)
		}
	}
	// 2100 is not a leap year: 29 February waits eight years.
	if got := upcoming(t, schedule.Spec{Cron: []string{"0 0 29 2 *"}}, "2096-03-01T00:00:00Z", 1); !slices.Equal(got, []string{"2104-02-29T00:00:00Z"}) {
		t.Errorf("29 February after 2096: %q", got)
	}
}

// TestRejections: every rejection names the schedule field and, inside an
// expression, the field's position and name.
func TestRejections(t *testing.T) {
	for _, c := range []struct {
		spec  schedule.Spec
		field string
		msg   string // a part of the message
	}{
		{schedule.Spec{Cron: []string{"0 24 * * *"}}, "cron", "field 2 (hour): 24 is above 23"},
		{schedule.Spec{Cron: []string{"60 * * * *"}}, "cron", "field 1 (minute): 60 is above 59"},
		{schedule.Spec{Cron: []string{"60 * * * * *"}}, "cron", "field 1 (second): 60 is above 59"},
		{schedule.Spec{Cron: []string{"0 0 0 * *"}}, "cron", "field 3 (day-of-month): 0 is below 1"},
		{schedule.Spec{Cron: []string{"0 0 32 * *"}}, "cron", "field 3 (day-of-month): 32 is above 31"},
		{schedule.Spec{Cron: []string{"* * * 13 *"}}, "cron", "field 4 (month): 13 is above 12"},
		{schedule.Spec{Cron: []string{"* * * 0 *"}}, "cron", "field 4 (month): 0 is below 1"},
		{schedule.Spec{Cron: []string{"* * * * 8"}}, "cron", "field 5 (day-of-week): 8 is above 7"},
		{schedule.Spec{Cron: []string{"* * * * * 8"}}, "cron", "field 6 (day-of-week): 8 is above 7"},
		{schedule.Spec{Cron: []string{"* * * FOO *"}}, "cron", `field 4 (month): "FOO" is not a number or a month name`},
		{schedule.Spec{Cron: []string{"* * * * FUN"}}, "cron", `field 5 (day-of-week): "FUN" is not a number or a day name`},
		{schedule.Spec{Cron: []string{"* * * * JAN"}}, "cron", "field 5 (day-of-week)"},
		{schedule.Spec{Cron: []string{"* MON * * *"}}, "cron", "field 2 (hour)"},
		{schedule.Spec{Cron: []string{"*/0 * * * *"}}, "cron", "field 1 (minute): step 0 must be at least 1"},
		{schedule.Spec{Cron: []string{"30-10 * * * *"}}, "cron", "field 1 (minute): range 30-10 runs backwards"},
		{schedule.Spec{Cron: []string{"1,,2 * * * *"}}, "cron", "field 1 (minute): empty list item"},
		{schedule.Spec{Cron: []string{"1- * * * *"}}, "cron", "field 1 (minute)"},
		{schedule.Spec{Cron: []string{"/5 * * * *"}}, "cron", "field 1 (minute)"},
		{schedule.Spec{Cron: []string{"*/x * * * *"}}, "cron", "field 1 (minute)"},
		{schedule.Spec{Cron: []string{"-1 * * * *"}}, "cron", "field 1 (minute)"},
		{schedule.Spec{Cron: []string{"99999999999999999999 * * * *"}}, "cron", "field 1 (minute)"},
		{schedule.Spec{Cron: []string{"0 0 30 2 *"}}, "cron", "never matches"},
		{schedule.Spec{Cron: []string{"0 0 31 4,6,9,11 *"}}, "cron", "never matches"},
		{schedule.Spec{Cron: []string{"0 0 0 30 2 ?"}}, "cron", "never matches"},
		{schedule.Spec{Cron: []string{"CRON_TZ=Europe/Berlin 0 9 * * *"}}, "cron", "use timezone"},
		{schedule.Spec{Cron: []string{"TZ=UTC 0 9 * * *"}}, "cron", "use timezone"},
		{schedule.Spec{Cron: []string{"* * * *"}}, "cron", "has 4 fields"},
		{schedule.Spec{Cron: []string{"* * * * * * *"}}, "cron", "has 7 fields"},
		{schedule.Spec{Cron: []string{""}}, "cron", "is empty"},
		{schedule.Spec{Cron: []string{"@every 5m"}}, "cron", "unknown macro"},
		{schedule.Spec{Cron: []string{"@daily 1"}}, "cron", "takes no fields"},
		{schedule.Spec{Cron: []string{"0 9 * * *", "0 25 * * *"}}, "cron[1]", "field 2 (hour): 25 is above 23"},
		{schedule.Spec{}, "cron", "needs cron or at"},
		{schedule.Spec{Cron: []string{"@daily"}, At: []time.Time{time.Now()}}, "at", "not both"},
		{schedule.Spec{Cron: []string{"@daily"}, Timezone: "Mars/Olympus_Mons"}, "timezone", "unknown zone"},
		{schedule.Spec{Cron: []string{"@daily"}, Timezone: "Local"}, "timezone", "IANA"},
		{schedule.Spec{Cron: []string{"@daily"}, DSTGap: "sideways"}, "dst_gap", "shift or skip"},
		{schedule.Spec{Cron: []string{"@daily"}, DSTOverlap: "twice"}, "dst_overlap", "first, last or both"},
		{schedule.Spec{Cron: []string{"@daily"}, StartAt: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), EndAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, "end_at", "before start_at"},
		{schedule.Spec{Cron: []string{"@daily"}, MaxRuns: -1}, "max_runs", "negative"},
		{schedule.Spec{At: []time.Time{{}}}, "at", "empty"},
	} {
		_, err := schedule.Compile(c.spec)
		var se *schedule.Error
		if !errors.As(err, &se) || !errors.Is(err, schedule.ErrInvalid) {
			t.Errorf("%+v: want a *schedule.Error, got %v", c.spec, err)
			continue
		}
		if se.Field != c.field || !strings.Contains(se.Message, c.msg) {
			t.Errorf("%+v: got field %q message %q; want field %q and %q", c.spec, se.Field, se.Message, c.field, c.msg)
		}
	}
	// The message reads as the contract shows it.
	_, err := schedule.Compile(schedule.Spec{Cron: []string{"0 24 * * *"}})
	if got := err.Error(); got != "cron: field 2 (hour): 24 is above 23" {
		t.Errorf("message %q", got)
	}
}
