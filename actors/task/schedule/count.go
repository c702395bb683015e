package schedule

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

// count is the number of slots in (a, b], exactly, for a single expression:
// slot by slot (Next) within an hour or so of each zone transition, where
// the DST policies act, and by arithmetic on wall times everywhere else,
// where a period's slots are exactly its matching wall times minus its
// offset. A year of a per-second schedule costs a few hundred day steps.
func (c *Cron) count(a, b int64) int {
	n := 0
	x := a // every slot at or before x is counted
	for x < b {
		off, start, end := zoneAt(c.loc, x+1)
		safeLo, safeHi := int64(math.MinInt64), int64(math.MaxInt64)
		if start != math.MinInt64 {
			safeLo = start + abs(off-offsetAt(c.loc, start-1))
		}
		if end != math.MaxInt64 {
			safeHi = end - abs(offsetAt(c.loc, end)-off)
		}
		if x >= safeLo && x < safeHi-1 {
			stop := min(b, safeHi-1)
			n += c.e.countWalls(x+off+1, stop+off+1)
			x = stop
			continue
		}
		t := c.Next(time.Unix(x, 0))
		if t.IsZero() || t.Unix() > b {
			return n
		}
		n++
		x = t.Unix()
	}
	return n
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// countWalls is the number of wall times in [lo, hi) the expression matches.
func (e *expr) countWalls(lo, hi int64) int {
	if lo >= hi {
		return 0
	}
	perDay := bits.OnesCount64(e.set[fHour]) * bits.OnesCount64(e.set[fMinute]) * bits.OnesCount64(e.set[fSecond])
	n := 0
	day := floorDiv(lo, secondsPerDay)
	last := floorDiv(hi-1, secondsPerDay)
	for d := day; d <= last; d++ {
		y, m, dom := civilFromDays(d)
		if e.set[fMonth]&(1<<m) == 0 || !e.dayMatches(d, y, m, dom) {
			continue
		}
		from, to := 0, secondsPerDay
		if d == day {
			from = int(lo - d*secondsPerDay)
		}
		if d == last {
			to = int(hi - d*secondsPerDay)
		}
		if from == 0 && to == secondsPerDay {
			n += perDay
		} else {
			n += e.todBefore(to) - e.todBefore(from)
		}
	}
	return n
}

// todBefore is the number of matching times of day before x seconds
// (0 ≤ x ≤ 86400).
func (e *expr) todBefore(x int) int {
	secs := bits.OnesCount64(e.set[fSecond])
	perHour := bits.OnesCount64(e.set[fMinute]) * secs
	h := x / 3600
	n := bits.OnesCount64(e.set[fHour]&(1<<h-1)) * perHour
	if h < 24 && e.set[fHour]&(1<<h) != 0 {
		m := x % 3600 / 60
		n += bits.OnesCount64(e.set[fMinute]&(1<<m-1)) * secs
		if e.set[fMinute]&(1<<m) != 0 {
			n += bits.OnesCount64(e.set[fSecond] & (1<<(x%60) - 1))
		}
	}
	return n
}

// Count is the number of slots strictly after a and at or before b, inside
// the window [start_at, end_at]. Exact and fast for a single cron expression
// or an at list; for a list of expressions (whose slots may coincide) or a
// schedule with exclusions it counts slot by slot and stops at MaxMissed.
func (s *Schedule) Count(a, b time.Time) int {
	if !s.startAt.IsZero() && a.Before(s.startAt) {
		a = s.startAt.Add(-time.Nanosecond)
	}
	if !s.endAt.IsZero() && b.After(s.endAt) {
		b = s.endAt
	}
	if !a.Before(b) {
		return 0
	}
	switch {
	case len(s.at) > 0:
		after := func(t time.Time) int {
			i, found := slices.BinarySearchFunc(s.at, t, func(x, t time.Time) int { return x.Compare(t) })
			if found {
				i++
			}
			return i
		}
		return after(b) - after(a)
	case len(s.crons) == 1 && s.crons[0].ex == nil:
		au, bu := a.Unix(), b.Unix()
		au = max(au, minUnix-1)
		bu = min(bu, maxUnix)
		if au >= bu {
			return 0
		}
		return s.crons[0].count(au, bu)
	}
	n := 0
	for t := s.Next(a); !t.IsZero() && !t.After(b) && n < MaxMissed; t = s.Next(t) {
		n++
	}
	return n
}
