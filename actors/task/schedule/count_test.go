package schedule_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
)

// TestCountAgreesWithNext: Count's arithmetic gives what walking the slots
// one by one gives, over random expressions, zones, policies and ranges
// that cross transitions.
func TestCountAgreesWithNext(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 5))
	exprs := []string{"* * * * *", "*/7 * * * *", "0,30 * * * *", "*/10 0-3 * * *", "30 2 * * *", "15,45 1,2,23 * * *",
		"0 0 * * *", "*/20 * * * * *", "0 9 * * MON-FRI", "0 0 13 * FRI", "0 12 1,15 * *", "0 0 29 2 *", "@hourly"}
	zones := []string{"", "America/New_York", "Europe/Berlin", "America/Santiago", "Australia/Lord_Howe", "Asia/Kolkata", "Pacific/Apia", "Antarctica/Troll"}
	base := time.Date(2011, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 400; i++ {
		spec := schedule.Spec{Cron: []string{exprs[r.IntN(len(exprs))]}, Timezone: zones[r.IntN(len(zones))],
			DSTGap: []string{"shift", "skip"}[r.IntN(2)], DSTOverlap: []string{"first", "last", "both"}[r.IntN(3)]}
		s := compile(t, spec)
		a := base.Add(time.Duration(r.Int64N(int64(16 * 365 * 24 * time.Hour))))
		b := a.Add(time.Duration(r.Int64N(int64(20 * 24 * time.Hour))))
		want := 0
		for slot := range s.Slots(a) {
			if slot.After(b) {
				break
			}
			want++
		}
		if got := s.Count(a, b); got != want {
			t.Errorf("%+v: Count(%s, %s) = %d, walking gives %d", spec, a, b, got, want)
		}
	}
}
