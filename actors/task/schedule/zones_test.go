package schedule_test

import (
	"slices"
	"testing"
	"time"
	_ "time/tzdata" // the vectors must not depend on the host's zone files

	"github.com/cronactor/cronactor/actors/task/schedule"
)

// upcoming compiles the schedule and lists its next n slots after from, in
// RFC 3339 with the zone's offset.
func upcoming(t *testing.T, spec schedule.Spec, from string, n int) []string {
	t.Helper()
	s, err := schedule.Compile(spec)
	if err != nil {
		t.Fatalf("%+v: %v", spec, err)
	}
	f, err := time.Parse(time.RFC3339, from)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, slot := range s.Upcoming(f, n) {
		out = append(out, slot.Format(time.RFC3339))
	}
	return out
}

// TestZoneVectors: slots across both transitions of several zones under
// every policy. The expected values come from the tz database's transitions
// (as zdump prints them), worked out by hand; they are not our output:
//
//	America/New_York    2026-03-08 02:00 EST → 03:00 EDT; 2026-11-01 02:00 EDT → 01:00 EST
//	Europe/Berlin       2026-03-29 02:00 CET → 03:00 CEST; 2026-10-25 03:00 CEST → 02:00 CET
//	America/Santiago    2026-04-05 00:00 -03 → 2026-04-04 23:00 -04; 2026-09-06 00:00 -04 → 01:00 -03
//	Australia/Lord_Howe 2026-04-05 02:00 +11 → 01:30 +1030; 2026-10-04 02:00 +1030 → 02:30 +11
//	Asia/Kolkata        +0530 all year
//	Pacific/Apia        2011-12-29 24:00 -10 → 2011-12-31 00:00 +14 (30 December 2011 never happened)
func TestZoneVectors(t *testing.T) {
	const (
		ny  = "America/New_York"
		ber = "Europe/Berlin"
		scl = "America/Santiago"
		lh  = "Australia/Lord_Howe"
		kol = "Asia/Kolkata"
		apw = "Pacific/Apia"
	)
	for _, c := range []struct {
		name, cron, zone, gap, overlap, from string
		want                                 []string
	}{
		// New York, spring forward: 02:00–02:59 does not exist on 8 March.
		{"ny gap shift", "30 2 * * *", ny, "shift", "", "2026-03-07T00:00:00-05:00",
			[]string{"2026-03-07T02:30:00-05:00", "2026-03-08T03:30:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"ny gap default is shift", "30 2 * * *", ny, "", "", "2026-03-07T12:00:00-05:00",
			[]string{"2026-03-08T03:30:00-04:00"}},
		{"ny gap skip", "30 2 * * *", ny, "skip", "", "2026-03-07T00:00:00-05:00",
			[]string{"2026-03-07T02:30:00-05:00", "2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"}},
		{"ny gap start shift", "0 2 * * *", ny, "shift", "", "2026-03-07T12:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:00:00-04:00"}},
		{"ny shifted slots merge with real ones", "0,30 2,3 * * *", ny, "shift", "", "2026-03-08T00:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-08T03:30:00-04:00", "2026-03-09T02:00:00-04:00"}},
		{"ny gap skip real ones stay", "0,30 2,3 * * *", ny, "skip", "", "2026-03-08T00:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-08T03:30:00-04:00", "2026-03-09T02:00:00-04:00"}},
		{"ny hourly across the gap", "0 * * * *", ny, "shift", "", "2026-03-08T00:30:00-05:00",
			[]string{"2026-03-08T01:00:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T04:00:00-04:00"}},
		// New York, fall back: 01:00–01:59 happens twice on 1 November.
		{"ny overlap first", "30 1 * * *", ny, "", "first", "2026-10-31T12:00:00-04:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"ny overlap default is first", "30 1 * * *", ny, "", "", "2026-10-31T12:00:00-04:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"ny overlap last", "30 1 * * *", ny, "", "last", "2026-10-31T12:00:00-04:00",
			[]string{"2026-11-01T01:30:00-05:00", "2026-11-02T01:30:00-05:00"}},
		{"ny overlap both", "30 1 * * *", ny, "", "both", "2026-10-31T12:00:00-04:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-01T01:30:00-05:00", "2026-11-02T01:30:00-05:00"}},
		{"ny half-hourly first", "*/30 * * * *", ny, "", "first", "2026-11-01T00:00:00-04:00",
			[]string{"2026-11-01T00:30:00-04:00", "2026-11-01T01:00:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T02:00:00-05:00", "2026-11-01T02:30:00-05:00"}},
		{"ny half-hourly last", "*/30 * * * *", ny, "", "last", "2026-11-01T00:00:00-04:00",
			[]string{"2026-11-01T00:30:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T01:30:00-05:00", "2026-11-01T02:00:00-05:00", "2026-11-01T02:30:00-05:00"}},
		{"ny half-hourly both", "*/30 * * * *", ny, "", "both", "2026-11-01T00:00:00-04:00",
			[]string{"2026-11-01T00:30:00-04:00", "2026-11-01T01:00:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-01T01:00:00-05:00", "2026-11-01T01:30:00-05:00", "2026-11-01T02:00:00-05:00"}},
		{"ny overlap first from inside the overlap", "30 1 * * *", ny, "", "first", "2026-11-01T01:45:00-04:00",
			[]string{"2026-11-02T01:30:00-05:00"}},
		{"ny overlap both from inside the overlap", "30 1 * * *", ny, "", "both", "2026-11-01T01:45:00-04:00",
			[]string{"2026-11-01T01:30:00-05:00", "2026-11-02T01:30:00-05:00"}},

		// Berlin: 02:00–02:59 missing on 29 March, 02:00–02:59 twice on 25 October.
		{"berlin gap shift", "30 2 * * *", ber, "shift", "", "2026-03-28T12:00:00+01:00",
			[]string{"2026-03-29T03:30:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"berlin gap skip", "30 2 * * *", ber, "skip", "", "2026-03-28T12:00:00+01:00",
			[]string{"2026-03-30T02:30:00+02:00", "2026-03-31T02:30:00+02:00"}},
		{"berlin overlap first", "30 2 * * *", ber, "", "first", "2026-10-24T12:00:00+02:00",
			[]string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		{"berlin overlap last", "30 2 * * *", ber, "", "last", "2026-10-24T12:00:00+02:00",
			[]string{"2026-10-25T02:30:00+01:00", "2026-10-26T02:30:00+01:00"}},
		{"berlin overlap both", "30 2 * * *", ber, "", "both", "2026-10-24T12:00:00+02:00",
			[]string{"2026-10-25T02:30:00+02:00", "2026-10-25T02:30:00+01:00", "2026-10-26T02:30:00+01:00"}},
		{"berlin weekdays", "0 9 * * MON-FRI", ber, "", "", "2026-03-27T10:00:00+01:00",
			[]string{"2026-03-30T09:00:00+02:00", "2026-03-31T09:00:00+02:00"}},
		{"berlin 03:00 after the fall back is not ambiguous", "0 3 * * *", ber, "", "both", "2026-10-24T12:00:00+02:00",
			[]string{"2026-10-25T03:00:00+01:00", "2026-10-26T03:00:00+01:00"}},

		// Santiago: midnight missing on 6 September, 23:00–23:59 twice on 4 April.
		{"santiago midnight shift", "0 0 * * *", scl, "shift", "", "2026-09-05T12:00:00-04:00",
			[]string{"2026-09-06T01:00:00-03:00", "2026-09-07T00:00:00-03:00"}},
		{"santiago midnight skip", "0 0 * * *", scl, "skip", "", "2026-09-05T12:00:00-04:00",
			[]string{"2026-09-07T00:00:00-03:00", "2026-09-08T00:00:00-03:00"}},
		{"santiago yearly midnight skip waits a year", "0 0 6 9 *", scl, "skip", "", "2026-09-01T00:00:00-04:00",
			[]string{"2027-09-06T00:00:00-03:00"}},
		{"santiago yearly midnight shift", "0 0 6 9 *", scl, "shift", "", "2026-09-01T00:00:00-04:00",
			[]string{"2026-09-06T01:00:00-03:00", "2027-09-06T00:00:00-03:00"}},
		{"santiago overlap first", "30 23 * * *", scl, "", "first", "2026-04-04T12:00:00-03:00",
			[]string{"2026-04-04T23:30:00-03:00", "2026-04-05T23:30:00-04:00"}},
		{"santiago overlap last", "30 23 * * *", scl, "", "last", "2026-04-04T12:00:00-03:00",
			[]string{"2026-04-04T23:30:00-04:00", "2026-04-05T23:30:00-04:00"}},
		{"santiago overlap both", "30 23 * * *", scl, "", "both", "2026-04-04T12:00:00-03:00",
			[]string{"2026-04-04T23:30:00-03:00", "2026-04-04T23:30:00-04:00", "2026-04-05T23:30:00-04:00"}},
		{"santiago midnight after the fall back", "0 0 * * *", scl, "", "both", "2026-04-04T12:00:00-03:00",
			[]string{"2026-04-05T00:00:00-04:00", "2026-04-06T00:00:00-04:00"}},

		// Lord Howe: a 30-minute shift. 01:30–01:59 twice on 5 April,
		// 02:00–02:29 missing on 4 October.
		{"lord howe overlap first", "45 1 * * *", lh, "", "first", "2026-04-04T12:00:00+11:00",
			[]string{"2026-04-05T01:45:00+11:00", "2026-04-06T01:45:00+10:30"}},
		{"lord howe overlap last", "45 1 * * *", lh, "", "last", "2026-04-04T12:00:00+11:00",
			[]string{"2026-04-05T01:45:00+10:30", "2026-04-06T01:45:00+10:30"}},
		{"lord howe overlap both", "45 1 * * *", lh, "", "both", "2026-04-04T12:00:00+11:00",
			[]string{"2026-04-05T01:45:00+11:00", "2026-04-05T01:45:00+10:30", "2026-04-06T01:45:00+10:30"}},
		{"lord howe 01:15 happens once", "15 1 * * *", lh, "", "both", "2026-04-04T12:00:00+11:00",
			[]string{"2026-04-05T01:15:00+11:00", "2026-04-06T01:15:00+10:30"}},
		{"lord howe gap shift", "15 2 * * *", lh, "shift", "", "2026-10-03T12:00:00+10:30",
			[]string{"2026-10-04T02:45:00+11:00", "2026-10-05T02:15:00+11:00"}},
		{"lord howe gap skip", "15 2 * * *", lh, "skip", "", "2026-10-03T12:00:00+10:30",
			[]string{"2026-10-05T02:15:00+11:00", "2026-10-06T02:15:00+11:00"}},

		// Kolkata: no DST, every policy the same.
		{"kolkata shift first", "30 9 * * *", kol, "shift", "first", "2026-03-08T00:00:00+05:30",
			[]string{"2026-03-08T09:30:00+05:30", "2026-03-09T09:30:00+05:30"}},
		{"kolkata skip both", "30 9 * * *", kol, "skip", "both", "2026-03-08T00:00:00+05:30",
			[]string{"2026-03-08T09:30:00+05:30", "2026-03-09T09:30:00+05:30"}},

		// Apia skipped 30 December 2011 (a 24-hour gap): a shifted 09:00
		// lands on 31 December's own 09:00, one slot.
		{"apia daily shift", "0 9 * * *", apw, "shift", "", "2011-12-29T00:00:00-10:00",
			[]string{"2011-12-29T09:00:00-10:00", "2011-12-31T09:00:00+14:00", "2012-01-01T09:00:00+14:00"}},
		{"apia daily skip", "0 9 * * *", apw, "skip", "", "2011-12-29T00:00:00-10:00",
			[]string{"2011-12-29T09:00:00-10:00", "2011-12-31T09:00:00+14:00", "2012-01-01T09:00:00+14:00"}},
		{"apia the missing day shift", "59 23 30 12 *", apw, "shift", "", "2011-12-01T00:00:00-10:00",
			[]string{"2011-12-31T23:59:00+14:00", "2012-12-30T23:59:00+14:00"}},
		{"apia the missing day skip", "59 23 30 12 *", apw, "skip", "", "2011-12-01T00:00:00-10:00",
			[]string{"2012-12-30T23:59:00+14:00"}},

		// Past the zone table (2037), where the zone's rules take over and
		// time.Time.ZoneBounds cuts periods at each new year.
		{"berlin across a new year past the table", "0 9 * * *", ber, "", "", "2040-12-31T10:00:00+01:00",
			[]string{"2041-01-01T09:00:00+01:00", "2041-01-02T09:00:00+01:00"}},
		{"ny gap shift past the table", "30 2 * * *", ny, "shift", "", "2040-03-10T12:00:00-05:00",
			[]string{"2040-03-11T03:30:00-04:00", "2040-03-12T02:30:00-04:00"}},

		// UTC by default.
		{"utc default", "0 12 * * *", "", "", "", "2026-03-08T00:00:00Z",
			[]string{"2026-03-08T12:00:00Z", "2026-03-09T12:00:00Z"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := upcoming(t, schedule.Spec{Cron: []string{c.cron}, Timezone: c.zone, DSTGap: c.gap, DSTOverlap: c.overlap}, c.from, len(c.want))
			if !slices.Equal(got, c.want) {
				t.Errorf("%q in %s (gap %q, overlap %q) after %s:\n got %q\nwant %q", c.cron, c.zone, c.gap, c.overlap, c.from, got, c.want)
			}
		})
	}
}
