package schedule_test

import (
	"fmt"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
)

// A 02:30 job in New York on the night 02:30 does not exist (8 March 2026)
// and on the night it happens twice (1 November 2026), under the default
// policies (dst_gap shift, dst_overlap first).
func Example() {
	s, err := schedule.Compile(schedule.Spec{Cron: []string{"30 2 * * *", "30 1 1 11 *"}, Timezone: "America/New_York"})
	if err != nil {
		panic(err)
	}
	for _, from := range []string{"2026-03-07T12:00:00Z", "2026-10-31T12:00:00Z"} {
		after, _ := time.Parse(time.RFC3339, from)
		for _, slot := range s.Upcoming(after, 3) {
			fmt.Println(slot.Format(time.RFC3339))
		}
	}
	// Output:
	// 2026-03-08T03:30:00-04:00
	// 2026-03-09T02:30:00-04:00
	// 2026-03-10T02:30:00-04:00
	// 2026-11-01T01:30:00-04:00
	// 2026-11-01T02:30:00-05:00
	// 2026-11-02T02:30:00-05:00
}

// Advance is what a tick does to a cron task (R10): the slot due gets one
// run, the slots the tick passed over are counted, and the next slot's
// spacing (R11) is measured from the last of them.
func ExampleSchedule_Advance() {
	s, _ := schedule.Compile(schedule.Spec{Cron: []string{"*/10 * * * *"}})
	slot := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	tick := slot.Add(35 * time.Minute) // the scheduler was down
	st := s.Advance(slot, tick, 1)
	fmt.Println("missed:", st.Missed)
	fmt.Println("next:", st.Next.Format(time.RFC3339), "spacing:", st.Next.Sub(st.Prev))
	fmt.Println("tolerance:", schedule.DefaultTolerance(st.Next.Sub(st.Prev)), "timebox:", s.DefaultTimebox(slot))
	// Output:
	// missed: 3
	// next: 2026-03-02T10:40:00Z spacing: 10m0s
	// tolerance: 5s timebox: 5m0s
}

// The day forms of DESIGN §8.4: the last weekday of the month (LW) and the
// second Friday (FRI#2), in Berlin. 31 January 2026 is a Saturday, so LW
// is Friday the 30th.
func Example_dayForms() {
	s, _ := schedule.Compile(schedule.Spec{Cron: []string{"0 9 LW * *", "0 9 * * FRI#2"}, Timezone: "Europe/Berlin"})
	for _, slot := range s.Upcoming(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 4) {
		fmt.Println(slot.Format("2006-01-02 Mon 15:04 -07:00"))
	}
	// Output:
	// 2026-01-09 Fri 09:00 +01:00
	// 2026-01-30 Fri 09:00 +01:00
	// 2026-02-13 Fri 09:00 +01:00
	// 2026-02-27 Fri 09:00 +01:00
}

// Exclude takes dates and expressions out of a schedule: weekdays at 09:00
// less Christmas and New Year's Day.
func Example_exclude() {
	s, _ := schedule.Compile(schedule.Spec{Cron: []string{"0 9 * * MON-FRI"}, Exclude: []string{"2026-12-25", "2027-01-01"}})
	for _, slot := range s.Upcoming(time.Date(2026, 12, 24, 0, 0, 0, 0, time.UTC), 4) {
		fmt.Println(slot.Format("2006-01-02 Mon"))
	}
	// Output:
	// 2026-12-24 Thu
	// 2026-12-28 Mon
	// 2026-12-29 Tue
	// 2026-12-30 Wed
}
