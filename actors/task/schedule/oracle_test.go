package schedule_test

import (
	"fmt"
	"math/rand/v2"
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

// civilDay is one calendar day as the brute-force day matcher sees it.
type civilDay struct {
	d, dim int
	m      time.Month
	wd     time.Weekday
}

// dayItem is one item of a generated day or month field: its text and,
// written from the definitions (DESIGN §2b, §8.4) without the engine's
// code, whether it matches a day.
type dayItem struct {
	text  string
	match func(c civilDay) bool
}

// weekdayOf is the weekday of day x of c's month.
func (c civilDay) weekdayOf(x int) time.Weekday {
	return (c.wd + time.Weekday((x-c.d)%7+7)) % 7
}

func (c civilDay) isWeekday(x int) bool {
	wd := c.weekdayOf(x)
	return wd != time.Saturday && wd != time.Sunday
}

// nearestWeekday: the Monday-to-Friday day of the month closest to n (no
// ties occur: a Saturday has Friday at 1 and Monday at 2, a Sunday Monday
// at 1 and Friday at 2), found by searching the month.
func (c civilDay) nearestWeekday(n int) int {
	best := 0
	for x := 1; x <= c.dim; x++ {
		if c.isWeekday(x) && (best == 0 || abs(x-n) < abs(best-n)) {
			best = x
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

var dayNames = []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}

// genDom makes a random day-of-month item.
func genDom(r *rand.Rand) dayItem {
	switch r.IntN(9) {
	case 0:
		n := 1 + r.IntN(31)
		return dayItem{fmt.Sprint(n), func(c civilDay) bool { return c.d == n }}
	case 1:
		a := 1 + r.IntN(31)
		b := a + r.IntN(32-a)
		k := 1 + r.IntN(7)
		return dayItem{fmt.Sprintf("%d-%d/%d", a, b, k), func(c civilDay) bool { return c.d >= a && c.d <= b && (c.d-a)%k == 0 }}
	case 2:
		k := 2 + r.IntN(10)
		return dayItem{fmt.Sprintf("*/%d", k), func(c civilDay) bool { return (c.d-1)%k == 0 }}
	case 3:
		return dayItem{[]string{"L", "l"}[r.IntN(2)], func(c civilDay) bool { return c.d == c.dim }}
	case 4, 5:
		n := 1 + r.IntN(30)
		return dayItem{fmt.Sprintf("L-%d", n), func(c civilDay) bool { return c.d == c.dim-n }}
	case 6, 7:
		n := 1 + r.IntN(31)
		if r.IntN(3) == 0 {
			n = []int{1, 28, 29, 30, 31}[r.IntN(5)]
		}
		return dayItem{fmt.Sprintf("%dW", n), func(c civilDay) bool { return n <= c.dim && c.d == c.nearestWeekday(n) }}
	}
	return dayItem{"LW", func(c civilDay) bool {
		last := c.dim
		for !c.isWeekday(last) {
			last--
		}
		return c.d == last
	}}
}

// genDow makes a random day-of-week item.
func genDow(r *rand.Rand) dayItem {
	name := func(d int) string {
		if r.IntN(2) == 0 || d == 7 {
			return fmt.Sprint(d)
		}
		return dayNames[d]
	}
	switch r.IntN(6) {
	case 0:
		d := r.IntN(8)
		return dayItem{name(d), func(c civilDay) bool { return int(c.wd) == d%7 }}
	case 1:
		// A range; one ending at Sunday (SUN or 0) ends at 7.
		a := r.IntN(7)
		b := a + r.IntN(8-a)
		text := name(a) + "-" + name(b)
		if b == 7 && a > 0 && r.IntN(2) == 0 {
			text = name(a) + "-" + []string{"SUN", "sun", "0"}[r.IntN(3)]
		}
		k := 1 + r.IntN(3)
		if k > 1 {
			text += fmt.Sprintf("/%d", k)
		}
		return dayItem{text, func(c civilDay) bool {
			for v := a; v <= b; v += k {
				if int(c.wd) == v%7 {
					return true
				}
			}
			return false
		}}
	case 2, 3:
		d, n := r.IntN(8), 1+r.IntN(5)
		return dayItem{fmt.Sprintf("%s#%d", name(d), n), func(c civilDay) bool { return int(c.wd) == d%7 && (c.d-1)/7+1 == n }}
	}
	d := r.IntN(8)
	return dayItem{name(d) + []string{"L", "l"}[r.IntN(2)], func(c civilDay) bool { return int(c.wd) == d%7 && c.d+7 > c.dim }}
}

// genField joins 1–3 items, or is * or ? (unrestricted) one time in four.
func genField(r *rand.Rand, gen func(*rand.Rand) dayItem) (string, func(civilDay) bool, bool) {
	if r.IntN(4) == 0 {
		return []string{"*", "?"}[r.IntN(2)], func(civilDay) bool { return true }, true
	}
	var texts []string
	var items []dayItem
	for range 1 + r.IntN(3) {
		it := gen(r)
		texts = append(texts, it.text)
		items = append(items, it)
	}
	return strings.Join(texts, ","), func(c civilDay) bool {
		for _, it := range items {
			if it.match(c) {
				return true
			}
		}
		return false
	}, false
}

// TestDaysAgainstBruteForce runs random expressions mixing every day form
// through the engine and through a day-by-day matcher built from the
// definitions (with time.Date for the calendar): the same slots, the same
// count, and a rejection only when no day of a whole 400-year Gregorian
// cycle matches. The zones have no DST, so each slot is its wall time.
func TestDaysAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 1))
	zones := []string{"UTC", "Asia/Kolkata", "Pacific/Kiritimati", "America/Panama"}
	const k = 8
	compiled, rejected := 0, 0
	for i := range 2000 {
		dom, domMatch, domStar := genField(r, genDom)
		dow, dowMatch, dowStar := genField(r, genDow)
		months := "*"
		monthOK := func(time.Month) bool { return true }
		if r.IntN(2) == 0 {
			a := 1 + r.IntN(12)
			b := a + r.IntN(13-a)
			months = fmt.Sprintf("%d-%d", a, b)
			if r.IntN(3) == 0 {
				months = fmt.Sprintf("%d", a)
				b = a
			}
			monthOK = func(m time.Month) bool { return int(m) >= a && int(m) <= b }
		}
		if r.IntN(10) == 0 {
			// February alone, where day-of-month items often never occur.
			var items []dayItem
			var texts []string
			for range 1 + r.IntN(2) {
				n := 27 + r.IntN(5)
				it := []dayItem{
					{fmt.Sprint(n), func(c civilDay) bool { return c.d == n }},
					{fmt.Sprintf("%dW", n), func(c civilDay) bool { return n <= c.dim && c.d == c.nearestWeekday(n) }},
					{fmt.Sprintf("L-%d", n-1), func(c civilDay) bool { return c.d == c.dim-(n-1) }},
				}[r.IntN(3)]
				items, texts = append(items, it), append(texts, it.text)
			}
			dom, domStar = strings.Join(texts, ","), false
			domMatch = func(c civilDay) bool { return slices.ContainsFunc(items, func(it dayItem) bool { return it.match(c) }) }
			dow, dowMatch, dowStar = "*", func(civilDay) bool { return true }, true
			months, monthOK = "2", func(m time.Month) bool { return m == 2 }
		}
		hour := []int{0, 9, 23}[r.IntN(3)]
		cron := fmt.Sprintf("0 %d %s %s %s", hour, dom, months, dow)
		zone := zones[r.IntN(len(zones))]
		loc, _ := time.LoadLocation(zone)
		matches := func(y int, m time.Month, d int) bool {
			day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
			c := civilDay{d: d, m: m, wd: day.Weekday(), dim: time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()}
			if !monthOK(m) {
				return false
			}
			if domStar || dowStar {
				return domMatch(c) && dowMatch(c)
			}
			return domMatch(c) || dowMatch(c)
		}
		s, err := schedule.Compile(schedule.Spec{Cron: []string{cron}, Timezone: zone})
		if err != nil {
			rejected++
			for y := 2000; y < 2400; y++ {
				for m := time.January; m <= time.December; m++ {
					if !monthOK(m) {
						continue
					}
					for d := 1; d <= time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day(); d++ {
						if matches(y, m, d) {
							t.Fatalf("case %d: %q rejected (%v), but %d-%02d-%02d matches", i, cron, err, y, m, d)
						}
					}
				}
			}
			continue
		}
		compiled++
		from := time.Date(1990+r.IntN(300), time.Month(1+r.IntN(12)), 1+r.IntN(28), r.IntN(24), 0, 0, 0, loc)
		var want []string
		wall := from
		for day := 0; len(want) < k && day < 120*366; day++ {
			y, m, d := wall.Date()
			if slot := time.Date(y, m, d, hour, 0, 0, 0, loc); slot.After(from) && matches(y, m, d) {
				want = append(want, slot.Format(time.RFC3339))
			}
			wall = time.Date(y, m, d+1, 0, 0, 0, 0, loc)
		}
		var got []string
		for _, slot := range s.Upcoming(from, len(want)) {
			got = append(got, slot.Format(time.RFC3339))
		}
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: %q in %s after %s:\n got %q\nwant %q", i, cron, zone, from.Format(time.RFC3339), got, want)
		}
		if len(want) > 0 {
			last, _ := time.Parse(time.RFC3339, want[len(want)-1])
			if n := s.Count(from, last); n != len(want) {
				t.Fatalf("case %d: %q in %s: Count(%s, %s) = %d, want %d", i, cron, zone, from.Format(time.RFC3339), want[len(want)-1], n, len(want))
			}
		}
	}
	t.Logf("%d expressions compiled and matched, %d rejected and confirmed never to match", compiled, rejected)
	if rejected < 30 || compiled < 1500 {
		t.Fatalf("the generator is off: %d compiled, %d rejected", compiled, rejected)
	}
}
