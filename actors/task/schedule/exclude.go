package schedule

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"
)

// MaxExclude bounds a schedule's exclude list; at most MaxExcludeCron of
// its entries may be cron expressions (the dates are a sorted list).
const (
	MaxExclude     = 1000
	MaxExcludeCron = 64
)

// exclusion is a schedule's exclude list compiled: wall times it takes out
// of the schedule before the DST policies apply. It is shared, read-only,
// by the schedule's expressions.
type exclusion struct {
	exprs []*expr
	days  []int64 // day numbers excluded whole, sorted
}

// parseExclude compiles the exclude list: each entry an RFC 3339 date
// (2026-12-25: that whole day on the zone's calendar) or a cron expression
// of the same syntax as cron. A rejection names the entry.
func parseExclude(list []string) (*exclusion, error) {
	if len(list) == 0 {
		return nil, nil
	}
	if len(list) > MaxExclude {
		return nil, &Error{Field: "exclude", Message: fmt.Sprintf("has %d entries; at most %d", len(list), MaxExclude)}
	}
	x := &exclusion{}
	for i, entry := range list {
		text := strings.TrimSpace(entry)
		if looksLikeDate(text) {
			d, err := time.Parse(time.DateOnly, text)
			if err != nil {
				return nil, &Error{Field: "exclude", Message: fmt.Sprintf("entry %d: %q is not a date (YYYY-MM-DD, e.g. 2026-12-25)", i+1, entry)}
			}
			x.days = append(x.days, daysFromCivil(int64(d.Year()), int(d.Month()), d.Day()))
			continue
		}
		e, err := parseExpr(text)
		if err != nil {
			return nil, &Error{Field: "exclude", Message: fmt.Sprintf("entry %d: %v", i+1, err)}
		}
		if len(x.exprs) == MaxExcludeCron {
			return nil, &Error{Field: "exclude", Message: fmt.Sprintf("has more than %d cron expressions", MaxExcludeCron)}
		}
		x.exprs = append(x.exprs, e)
	}
	slices.Sort(x.days)
	x.days = slices.Compact(x.days)
	return x, nil
}

// looksLikeDate: the entry is meant as a date (digits and dashes, a dash
// after the year), not a cron expression (which has spaces or starts
// with @).
func looksLikeDate(s string) bool {
	return len(s) >= 5 && strings.Trim(s, "0123456789-") == "" && strings.IndexByte(s, '-') == 4
}

// excludes reports whether the wall time w is excluded.
func (x *exclusion) excludes(w int64) bool {
	if _, found := slices.BinarySearch(x.days, floorDiv(w, secondsPerDay)); found {
		return true
	}
	for _, b := range x.exprs {
		if b.matches(w) {
			return true
		}
	}
	return false
}

// skip is the first wall time at or after w that is not excluded, or hi
// when there is none before hi. It jumps over each excluded stretch whole
// (a date to the next day, an expression to the first wall time it does
// not match), so an excluded day costs a step, not a step per slot.
func (x *exclusion) skip(w, hi int64) int64 {
	for w < hi {
		j := w
		if _, found := slices.BinarySearch(x.days, floorDiv(j, secondsPerDay)); found {
			j = (floorDiv(j, secondsPerDay) + 1) * secondsPerDay
		}
		for _, b := range x.exprs {
			if j < hi && b.matches(j) {
				j = b.pastMatch(j, hi)
			}
		}
		if j == w {
			return w
		}
		w = j
	}
	return hi
}

// pastMatch is the first wall time at or after w the expression does not
// match (hi when there is none before hi).
func (e *expr) pastMatch(w, hi int64) int64 {
	day := floorDiv(w, secondsPerDay)
	if t := e.todNonMatch(int(w - day*secondsPerDay)); t < secondsPerDay {
		return day*secondsPerDay + int64(t)
	}
	first := e.todNonMatch(0) // the same every day
	for day++; day*secondsPerDay < hi; day++ {
		if !e.matchesDay(day) {
			return day * secondsPerDay
		}
		if first < secondsPerDay {
			return day*secondsPerDay + int64(first)
		}
	}
	return hi
}

// matchesDay reports whether the month and day fields match day.
func (e *expr) matchesDay(day int64) bool {
	y, m, d := civilFromDays(day)
	return e.set[fMonth]&(1<<m) != 0 && e.dayMatches(day, y, m, d)
}

// todNonMatch is the first second of the day at or after sod whose hour,
// minute or second the expression does not match; secondsPerDay when the
// rest of the day matches throughout.
func (e *expr) todNonMatch(sod int) int {
	const all60 = 1<<60 - 1
	nonS := ^e.set[fSecond] & all60
	nonM := ^e.set[fMinute] & all60
	nonH := ^e.set[fHour] & (1<<24 - 1)
	for t := sod; t < secondsPerDay; {
		h, mi, s := t/3600, t/60%60, t%60
		if nonH&(1<<h) != 0 || nonM&(1<<mi) != 0 || nonS&(1<<s) != 0 {
			return t
		}
		if ns := nextBit(nonS, s+1); ns < 60 {
			return h*3600 + mi*60 + ns
		}
		if nonS != 0 {
			// The next minute has a second that does not match.
			t = h*3600 + (mi+1)*60
			continue
		}
		if nm := nextBit(nonM, mi+1); nm < 60 {
			return h*3600 + nm*60
		}
		if nonM != 0 {
			// The next hour has a minute that does not match.
			t = (h + 1) * 3600
			continue
		}
		if nh := nextBit(nonH, h+1); nh < 24 {
			return nh * 3600
		}
		return secondsPerDay
	}
	return secondsPerDay
}

// coveredBy tells, for each set of the expressions bs (a bit per index)
// that match together on a day a matches, whether they match every time of
// day a matches — so that Next can pass over such a day whole — and
// whether they match every wall time a matches. Which days a month has
// that match depends only on the month, its length and the weekday of its
// 1st, so trying each (as the never-matches check does) is exact.
func (a *expr) coveredBy(bs []*expr) (days map[uint64]bool, all bool) {
	cache := map[uint64]bool{}
	all = len(bs) > 0
	bDays := make([]uint64, len(bs))
	for m := 1; m <= 12; m++ {
		if a.set[fMonth]&(1<<m) == 0 {
			continue
		}
		lengths := []int{daysIn[m]}
		if m == 2 {
			lengths = []int{28, 29}
		}
		for _, dim := range lengths {
			for f := 0; f < 7; f++ {
				for i, b := range bs {
					bDays[i] = 0
					if b.set[fMonth]&(1<<m) != 0 {
						bDays[i] = b.days(dim, f)
					}
				}
				for da := a.days(dim, f); da != 0; da &= da - 1 {
					d := bits.TrailingZeros64(da)
					var sub uint64
					for i := range bs {
						if bDays[i]&(1<<d) != 0 {
							sub |= 1 << i
						}
					}
					if sub == 0 {
						all = false
						continue
					}
					ok, seen := cache[sub]
					if !seen {
						ok = a.timesCoveredBy(bs, sub)
						cache[sub] = ok
					}
					all = all && ok
				}
			}
		}
	}
	return cache, all
}

// dayExcluded reports whether every wall time of day the expression
// matches is excluded: the day is a date of the list, or the expressions
// of the list matching it together match all its times of day.
func (c *Cron) dayExcluded(day int64) bool {
	x := c.ex
	if _, found := slices.BinarySearch(x.days, day); found {
		return true
	}
	y, m, d := civilFromDays(day)
	dim, f := daysInMonth(y, m), weekday(day-int64(d-1))
	var sub uint64
	for i, b := range x.exprs {
		if b.set[fMonth]&(1<<m) != 0 && b.days(dim, f)&(1<<d) != 0 {
			sub |= 1 << i
		}
	}
	return sub != 0 && c.coveredDays[sub]
}

// timesCoveredBy reports whether the expressions of bs in sub (a bit per
// index) together match every time of day a matches.
func (a *expr) timesCoveredBy(bs []*expr, sub uint64) bool {
	for hs := a.set[fHour]; hs != 0; hs &= hs - 1 {
		h := bits.TrailingZeros64(hs)
		for ms := a.set[fMinute]; ms != 0; ms &= ms - 1 {
			mi := bits.TrailingZeros64(ms)
			var secs uint64
			for b := sub; b != 0; b &= b - 1 {
				e := bs[bits.TrailingZeros64(b)]
				if e.set[fHour]&(1<<h) != 0 && e.set[fMinute]&(1<<mi) != 0 {
					secs |= e.set[fSecond]
				}
			}
			if a.set[fSecond]&^secs != 0 {
				return false
			}
		}
	}
	return true
}

// nextWall is the expression's nextWall less the excluded wall times. A
// day whose times the exclusions cover whole is passed in one step; inside
// a day, each excluded stretch is.
func (c *Cron) nextWall(lo, hi int64) (int64, bool) {
	for {
		w, ok := c.e.nextWall(lo, hi)
		if !ok || c.ex == nil {
			return w, ok
		}
		if day := floorDiv(w, secondsPerDay); c.dayExcluded(day) {
			lo = (day + 1) * secondsPerDay
			continue
		}
		j := c.ex.skip(w, hi)
		if j == w {
			return w, true
		}
		if j >= hi {
			return 0, false
		}
		lo = j
	}
}
