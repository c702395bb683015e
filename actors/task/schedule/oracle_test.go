package schedule_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
)

// TestAgainstBruteForce checks every transition of many zones, 2010–2027,
// against a brute-force reading of the policies that asks the zone only
// "what does the wall clock show at this instant?" (time.Time.In), minute by
// minute: a wall time the clock shows is a slot at each instant it shows it
// (first, last or both of them); a wall time it skips fires read with the
// offset before the skip (shift) or not at all (skip).
func TestAgainstBruteForce(t *testing.T) {
	zones := []string{"America/New_York", "Europe/Berlin", "America/Santiago", "Australia/Lord_Howe", "Asia/Kolkata",
		"Pacific/Apia", "America/Sao_Paulo", "Europe/London", "Australia/Sydney", "Pacific/Chatham", "Asia/Tehran",
		"America/Havana", "Africa/Casablanca", "Europe/Dublin", "Antarctica/Troll", "America/St_Johns", "Asia/Gaza",
		"America/Asuncion", "Europe/Moscow", "Asia/Pyongyang", "America/Caracas", "Pacific/Norfolk", "Asia/Amman"}
	exprs := []struct {
		cron    string
		hours   []int // nil: every hour
		minutes []int
	}{
		{"*/15 * * * *", nil, []int{0, 15, 30, 45}},
		{"0,30 * * * *", nil, []int{0, 30}},
		{"45 0-3,22,23 * * *", []int{0, 1, 2, 3, 22, 23}, []int{45}},
		{"0 0 * * *", []int{0}, []int{0}},
		{"30 23 * * *", []int{23}, []int{30}},
		{"10,50 1,2 * * *", []int{1, 2}, []int{10, 50}},
	}
	policies := []struct{ gap, overlap string }{
		{"shift", "first"}, {"shift", "last"}, {"shift", "both"}, {"skip", "first"}, {"skip", "last"}, {"skip", "both"},
	}
	checked := 0
	for _, name := range zones {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		offset := func(u int64) int64 { _, o := time.Unix(u, 0).In(loc).Zone(); return int64(o) }
		// Transitions found by scanning offsets every 15 minutes.
		var transitions []int64
		start := time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
		end := time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
		for u := start; u < end; u += 900 {
			if offset(u) != offset(u+900) {
				lo, hi := u, u+900 // offset(lo) != offset(hi): find the second it changes
				for hi-lo > 1 {
					if mid := (lo + hi) / 2; offset(mid) == offset(lo) {
						lo = mid
					} else {
						hi = mid
					}
				}
				transitions = append(transitions, hi)
			}
		}
		for _, tr := range transitions {
			jump := offset(tr) - offset(tr-1)
			if jump < 0 {
				jump = -jump
			}
			a := tr - jump - 3*3600
			a -= a % 60
			b := tr + jump + 3*3600
			for _, e := range exprs {
				match := func(w int64) bool {
					sod := ((w % 86400) + 86400) % 86400
					return sod%60 == 0 && (e.hours == nil || slices.Contains(e.hours, int(sod/3600))) && slices.Contains(e.minutes, int(sod/60%60))
				}
				for _, p := range policies {
					var want []int64
					for i := a; i < b; i += 60 {
						off := offset(i)
						if w := i + off; match(w) {
							earlier, later := false, false
							for _, o2 := range []int64{offset(a - 1), offset(b)} {
								if i2 := w - o2; o2 != off && offset(i2) == o2 {
									earlier = earlier || i2 < i
									later = later || i2 > i
								}
							}
							if p.overlap == "both" || (p.overlap == "first" && !earlier) || (p.overlap == "last" && !later) {
								want = append(want, i)
							}
						}
						if prev := offset(i - 1); prev < off && p.gap == "shift" {
							for w := i + prev; w < i+off; w += 60 {
								if match(w) {
									want = append(want, w-prev)
								}
							}
						}
					}
					slices.Sort(want)
					want = slices.Compact(want)
					s, err := schedule.Compile(schedule.Spec{Cron: []string{e.cron}, Timezone: name, DSTGap: p.gap, DSTOverlap: p.overlap})
					if err != nil {
						t.Fatal(err)
					}
					var got []int64
					for slot := range s.Slots(time.Unix(a-1, 0)) {
						if slot.Unix() >= b {
							break
						}
						got = append(got, slot.Unix())
					}
					if !slices.Equal(got, want) {
						t.Errorf("%s %q gap %s overlap %s around %s:\n got %s\nwant %s", name, e.cron, p.gap, p.overlap,
							time.Unix(tr, 0).In(loc).Format(time.RFC3339), show(got, loc), show(want, loc))
					}
					if n := s.Count(time.Unix(a-1, 0), time.Unix(b-1, 0)); n != len(want) {
						t.Errorf("%s %q gap %s overlap %s around %s: Count %d, want %d", name, e.cron, p.gap, p.overlap,
							time.Unix(tr, 0).In(loc).Format(time.RFC3339), n, len(want))
					}
					checked++
				}
			}
		}
	}
	t.Logf("%d transition windows checked", checked)
}

func show(us []int64, loc *time.Location) string {
	var b strings.Builder
	for _, u := range us {
		fmt.Fprintf(&b, " %s", time.Unix(u, 0).In(loc).Format("01-02T15:04-07:00"))
	}
	return b.String()
}
