package schedule_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
)

// TestAgreesWithRobfigV3 holds the cases of robfig/cron v3's TestNext,
// written out by hand. v3 skips a wall time in a gap and fires both
// instants of one in an overlap, so each case runs with dst_gap skip and
// dst_overlap both. v3 reads an expression without a zone in the zone of
// its argument; those cases run in UTC here. The two expressions v3 answers
// with "never" (30 February, 31 April) are rejected at compile here.
func TestAgreesWithRobfigV3(t *testing.T) {
	const ny, sp = "America/New_York", "America/Sao_Paulo"
	for _, c := range []struct {
		from, cron, zone, want string
	}{
		// Simple cases.
		{"2012-07-09T14:45:00Z", "0 0/15 * * * *", "", "2012-07-09T15:00:00Z"},
		{"2012-07-09T14:59:00Z", "0 0/15 * * * *", "", "2012-07-09T15:00:00Z"},
		{"2012-07-09T14:59:59Z", "0 0/15 * * * *", "", "2012-07-09T15:00:00Z"},
		// Wrapping around hours.
		{"2012-07-09T15:45:00Z", "0 20-35/15 * * * *", "", "2012-07-09T16:20:00Z"},
		// Wrapping around days.
		{"2012-07-09T23:46:00Z", "0 */15 * * * *", "", "2012-07-10T00:00:00Z"},
		{"2012-07-09T23:45:00Z", "0 20-35/15 * * * *", "", "2012-07-10T00:20:00Z"},
		{"2012-07-09T23:35:51Z", "15/35 20-35/15 * * * *", "", "2012-07-10T00:20:15Z"},
		{"2012-07-09T23:35:51Z", "15/35 20-35/15 1/2 * * *", "", "2012-07-10T01:20:15Z"},
		{"2012-07-09T23:35:51Z", "15/35 20-35/15 10-12 * * *", "", "2012-07-10T10:20:15Z"},
		{"2012-07-09T23:35:51Z", "15/35 20-35/15 1/2 */2 * *", "", "2012-07-11T01:20:15Z"},
		{"2012-07-09T23:35:51Z", "15/35 20-35/15 * 9-20 * *", "", "2012-07-10T00:20:15Z"},
		{"2012-07-09T23:35:51Z", "15/35 20-35/15 * 9-20 Jul *", "", "2012-07-10T00:20:15Z"},
		// Wrapping around months.
		{"2012-07-09T23:35:00Z", "0 0 0 9 Apr-Oct ?", "", "2012-08-09T00:00:00Z"},
		{"2012-07-09T23:35:00Z", "0 0 0 */5 Apr,Aug,Oct Mon", "", "2012-08-01T00:00:00Z"},
		{"2012-07-09T23:35:00Z", "0 0 0 */5 Oct Mon", "", "2012-10-01T00:00:00Z"},
		// Wrapping around years.
		{"2012-07-09T23:35:00Z", "0 0 0 * Feb Mon", "", "2013-02-04T00:00:00Z"},
		{"2012-07-09T23:35:00Z", "0 0 0 * Feb Mon/2", "", "2013-02-01T00:00:00Z"},
		// Wrapping around minute, hour, day, month and year at once.
		{"2012-12-31T23:59:45Z", "0 * * * * *", "", "2013-01-01T00:00:00Z"},
		// Leap year.
		{"2012-07-09T23:35:00Z", "0 0 0 29 Feb ?", "", "2016-02-29T00:00:00Z"},
		// New York, 2 a.m. EST → 3 a.m. EDT on 11 March 2012.
		{"2012-03-11T00:00:00-05:00", "0 30 2 11 Mar ?", ny, "2013-03-11T02:30:00-04:00"},
		{"2012-03-11T00:00:00-05:00", "0 0 * * * ?", ny, "2012-03-11T01:00:00-05:00"},
		{"2012-03-11T01:00:00-05:00", "0 0 * * * ?", ny, "2012-03-11T03:00:00-04:00"},
		{"2012-03-11T03:00:00-04:00", "0 0 * * * ?", ny, "2012-03-11T04:00:00-04:00"},
		{"2012-03-11T04:00:00-04:00", "0 0 * * * ?", ny, "2012-03-11T05:00:00-04:00"},
		{"2012-03-11T00:00:00-05:00", "0 0 1 * * ?", ny, "2012-03-11T01:00:00-05:00"},
		{"2012-03-11T01:00:00-05:00", "0 0 1 * * ?", ny, "2012-03-12T01:00:00-04:00"},
		{"2012-03-11T00:00:00-05:00", "0 0 2 * * ?", ny, "2012-03-12T02:00:00-04:00"},
		// New York, 2 a.m. EDT → 1 a.m. EST on 4 November 2012.
		{"2012-11-04T00:00:00-04:00", "0 30 2 04 Nov ?", ny, "2012-11-04T02:30:00-05:00"},
		{"2012-11-04T01:45:00-04:00", "0 30 1 04 Nov ?", ny, "2012-11-04T01:30:00-05:00"},
		{"2012-11-04T00:00:00-04:00", "0 0 * * * ?", ny, "2012-11-04T01:00:00-04:00"},
		{"2012-11-04T01:00:00-04:00", "0 0 * * * ?", ny, "2012-11-04T01:00:00-05:00"},
		{"2012-11-04T01:00:00-05:00", "0 0 * * * ?", ny, "2012-11-04T02:00:00-05:00"},
		{"2012-11-04T00:00:00-04:00", "0 0 1 * * ?", ny, "2012-11-04T01:00:00-04:00"},
		{"2012-11-04T01:00:00-04:00", "0 0 1 * * ?", ny, "2012-11-04T01:00:00-05:00"},
		{"2012-11-04T01:00:00-05:00", "0 0 1 * * ?", ny, "2012-11-05T01:00:00-05:00"},
		{"2012-11-04T00:00:00-04:00", "0 0 2 * * ?", ny, "2012-11-04T02:00:00-05:00"},
		{"2012-11-04T02:00:00-05:00", "0 0 2 * * ?", ny, "2012-11-05T02:00:00-05:00"},
		{"2012-11-04T00:00:00-04:00", "0 0 3 * * ?", ny, "2012-11-04T03:00:00-05:00"},
		{"2012-11-04T03:00:00-05:00", "0 0 3 * * ?", ny, "2012-11-05T03:00:00-05:00"},
		// Never: rejected.
		{"2012-07-09T23:35:00Z", "0 0 0 30 Feb ?", "", ""},
		{"2012-07-09T23:35:00Z", "0 0 0 31 Apr ?", "", ""},
		// Monthly.
		{"2012-11-04T00:00:00-04:00", "0 0 3 3 * ?", ny, "2012-12-03T03:00:00-05:00"},
		// São Paulo, where midnight did not exist on 4 November 2018.
		{"2018-10-17T05:00:00-04:00", "0 0 9 10 * ?", sp, "2018-11-10T06:00:00-05:00"},
		{"2018-02-14T05:00:00-05:00", "0 0 9 22 * ?", sp, "2018-02-22T07:00:00-05:00"},
	} {
		s, err := schedule.Compile(schedule.Spec{Cron: []string{c.cron}, Timezone: c.zone, DSTGap: "skip", DSTOverlap: "both"})
		if c.want == "" {
			if !errors.Is(err, schedule.ErrInvalid) {
				t.Errorf("%q: want a rejection, got %v", c.cron, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.cron, err)
			continue
		}
		from, _ := time.Parse(time.RFC3339, c.from)
		want, _ := time.Parse(time.RFC3339, c.want)
		if got := s.Next(from); !got.Equal(want) {
			t.Errorf("%q in %q after %s: got %s, want %s", c.cron, c.zone, c.from, got.Format(time.RFC3339), c.want)
		}
	}
}
