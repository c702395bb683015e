package schedule_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
)

// TestNote: what a DST policy did to each slot, in words, on nights worked
// out from the tz database's transitions (2026: New York jumps 02:00 EST →
// 03:00 EDT on 8 March and falls back 02:00 EDT → 01:00 EST on 1 November;
// Santiago skips 00:00–01:00 on 6 September and repeats 23:00–24:00 on
// 4 April; Lord Howe skips 02:00–02:30 on 4 October; Apia skipped
// 30 December 2011 whole). Each slot prints as "instant note".
func TestNote(t *testing.T) {
	const ny = "America/New_York"
	for _, c := range []struct {
		cron, zone, gap, overlap, from string
		n                              int
		want                           []string
	}{
		{"30 1,2 * * *", ny, "", "", "2026-03-08T00:00:00-05:00", 3, []string{
			"2026-03-08T01:30:00-05:00",
			"2026-03-08T03:30:00-04:00 shifted from 02:30 (does not exist)",
			"2026-03-09T01:30:00-04:00"}},
		{"30 1,2 * * *", ny, "skip", "", "2026-03-08T00:00:00-05:00", 2, []string{
			"2026-03-08T01:30:00-05:00", "2026-03-09T01:30:00-04:00"}},
		{"30 1,2 * * *", ny, "", "first", "2026-11-01T00:00:00-04:00", 3, []string{
			"2026-11-01T01:30:00-04:00 first of two 01:30",
			"2026-11-01T02:30:00-05:00",
			"2026-11-02T01:30:00-05:00"}},
		{"30 1,2 * * *", ny, "", "last", "2026-11-01T00:00:00-04:00", 2, []string{
			"2026-11-01T01:30:00-05:00 second of two 01:30",
			"2026-11-01T02:30:00-05:00"}},
		{"30 1,2 * * *", ny, "", "both", "2026-11-01T00:00:00-04:00", 3, []string{
			"2026-11-01T01:30:00-04:00 first of two 01:30",
			"2026-11-01T01:30:00-05:00 second of two 01:30",
			"2026-11-01T02:30:00-05:00"}},
		// A shifted wall time that lands on a slot of its own is one slot.
		{"0,30 2,3 * * *", ny, "", "", "2026-03-08T00:00:00-05:00", 2, []string{
			"2026-03-08T03:00:00-04:00 also shifted from 02:00 (does not exist)",
			"2026-03-08T03:30:00-04:00 also shifted from 02:30 (does not exist)"}},
		// 02:00:15 does not exist and 03:00:15 is a slot of its own.
		{"15 0 * * * *", ny, "", "", "2026-03-08T01:30:00-05:00", 2, []string{
			"2026-03-08T03:00:15-04:00 also shifted from 02:00:15 (does not exist)",
			"2026-03-08T04:00:15-04:00"}},
		{"15 30 2 * * *", ny, "", "", "2026-03-08T00:00:00-05:00", 1, []string{
			"2026-03-08T03:30:15-04:00 shifted from 02:30:15 (does not exist)"}},
		{"0 0 * * *", "America/Santiago", "", "", "2026-09-05T12:00:00-04:00", 2, []string{
			"2026-09-06T01:00:00-03:00 shifted from 00:00 (does not exist)",
			"2026-09-07T00:00:00-03:00"}},
		{"30 23 * * *", "America/Santiago", "", "both", "2026-04-04T12:00:00-03:00", 3, []string{
			"2026-04-04T23:30:00-03:00 first of two 23:30",
			"2026-04-04T23:30:00-04:00 second of two 23:30",
			"2026-04-05T23:30:00-04:00"}},
		{"15 2 * * *", "Australia/Lord_Howe", "", "", "2026-10-04T00:00:00+10:30", 1, []string{
			"2026-10-04T02:45:00+11:00 shifted from 02:15 (does not exist)"}},
		{"0 12 L-1 12 *", "Pacific/Apia", "", "", "2011-12-01T00:00:00Z", 1, []string{
			"2011-12-31T12:00:00+14:00 shifted from 2011-12-30 12:00 (does not exist)"}},
		{"0 9 * * *", "Europe/Berlin", "", "", "2026-03-28T12:00:00Z", 2, []string{
			"2026-03-29T09:00:00+02:00", "2026-03-30T09:00:00+02:00"}},
	} {
		s, err := schedule.Compile(schedule.Spec{Cron: []string{c.cron}, Timezone: c.zone, DSTGap: c.gap, DSTOverlap: c.overlap})
		if err != nil {
			t.Fatal(err)
		}
		from, _ := time.Parse(time.RFC3339, c.from)
		var got []string
		for _, slot := range s.Upcoming(from, c.n) {
			line := slot.Format(time.RFC3339)
			if n := s.Note(slot); n != "" {
				line += " " + n
			}
			got = append(got, line)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q in %s (gap %q, overlap %q):\n got %q\nwant %q", c.cron, c.zone, c.gap, c.overlap, got, c.want)
		}
	}
	// An at schedule has no DST policy.
	at, _ := schedule.Compile(schedule.Spec{At: []time.Time{time.Date(2026, 3, 8, 7, 30, 0, 0, time.UTC)}, Timezone: ny})
	if n := at.Note(time.Date(2026, 3, 8, 7, 30, 0, 0, time.UTC)); n != "" {
		t.Errorf("at: %q", n)
	}
}

// ExampleSchedule_Note shows a preview of a nightly 02:30 job across New
// York's spring-forward night, with what the DST policy did.
func ExampleSchedule_Note() {
	s, _ := schedule.Compile(schedule.Spec{Cron: []string{"30 2 * * *"}, Timezone: "America/New_York"})
	for _, slot := range s.Upcoming(time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC), 3) {
		if note := s.Note(slot); note != "" {
			fmt.Println(slot.Format(time.RFC3339), note)
		} else {
			fmt.Println(slot.Format(time.RFC3339))
		}
	}
	// Output:
	// 2026-03-08T03:30:00-04:00 shifted from 02:30 (does not exist)
	// 2026-03-09T02:30:00-04:00
	// 2026-03-10T02:30:00-04:00
}
