package history_test

import (
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
)

// TestScheduleText: a schedule in words, with the DST policies and the
// exclude list of a cron schedule when it has them.
func TestScheduleText(t *testing.T) {
	for _, c := range []struct {
		sc   events.Schedule
		want string
	}{
		{events.Schedule{Interval: events.Duration(time.Minute)}, "every 60 s"},
		{events.Schedule{Cron: []string{"0 9 LW * *"}, Timezone: "Europe/Berlin"}, `cron "0 9 LW * *" in Europe/Berlin`},
		{events.Schedule{Cron: []string{"0 9 * * *"}, Exclude: []string{"2026-12-25", "0 9 * * SAT,SUN"}},
			`cron "0 9 * * *" in UTC, excluding "2026-12-25", "0 9 * * SAT,SUN"`},
		{events.Schedule{Cron: []string{"30 2 * * *"}, Timezone: "America/New_York", DSTGap: "skip", Exclude: []string{"2026-03-08"}},
			`cron "30 2 * * *" in America/New_York (dst_gap skip, dst_overlap first), excluding "2026-03-08"`},
	} {
		if got := history.ScheduleText(c.sc); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}
