package schedule

import (
	"math"
	"time"
)

// Note says, in words, what a daylight-saving policy did to slot, a slot of
// s (as Next gives it), or "" when it did nothing:
//
//   - "shifted from 02:30 (does not exist)": a wall time inside a gap,
//     fired as far after the gap as it was into it (dst_gap shift); the
//     date is added when the gap moved it to another day
//     ("shifted from 2011-12-30 12:00 (does not exist)"); "also shifted
//     from 02:00 (does not exist)" when the slot is a wall time of its
//     own as well;
//   - "first of two 01:30", "second of two 01:30": a wall time an overlap
//     shows twice, at its first or its second instant (dst_overlap).
//
// It is for people reading a preview (cronactor schedule preview -o wide);
// the decisions never read it.
func (s *Schedule) Note(slot time.Time) string {
	if len(s.crons) == 0 {
		return ""
	}
	u := slot.Unix()
	off, start, end := zoneAt(s.loc, u)
	wall := u + off
	if start != math.MinInt64 {
		prev := offsetAt(s.loc, start-1)
		switch {
		case prev < off && s.crons[0].gap == GapShift && u < start+(off-prev):
			// Read with the offset before the gap, the slot is a wall time
			// the clock never showed.
			if w := u + prev; s.matchesWall(w) {
				if s.matchesWall(wall) {
					return "also shifted from " + wallText(w, wall) + " (does not exist)"
				}
				return "shifted from " + wallText(w, wall) + " (does not exist)"
			}
		case prev > off && wall >= start+off && wall < start+prev:
			return "second of two " + wallText(wall, wall)
		}
	}
	if end != math.MaxInt64 {
		if next := offsetAt(s.loc, end); next < off && wall >= end+next && wall < end+off {
			return "first of two " + wallText(wall, wall)
		}
	}
	return ""
}

// matchesWall reports whether any expression of s matches the wall time w.
func (s *Schedule) matchesWall(w int64) bool {
	for _, c := range s.crons {
		if c.e.matches(w) && (c.ex == nil || !c.ex.excludes(w)) {
			return true
		}
	}
	return false
}

// matches reports whether the expression matches the wall time w.
func (e *expr) matches(w int64) bool {
	day := floorDiv(w, secondsPerDay)
	y, m, d := civilFromDays(day)
	sod := int(w - day*secondsPerDay)
	return e.set[fMonth]&(1<<m) != 0 && e.dayMatches(day, y, m, d) &&
		e.set[fHour]&(1<<(sod/3600)) != 0 && e.set[fMinute]&(1<<(sod/60%60)) != 0 && e.set[fSecond]&(1<<(sod%60)) != 0
}

// wallText writes the wall time w as 15:04 (15:04:05 with seconds), with
// its date when that differs from the date of the wall time ref.
func wallText(w, ref int64) string {
	t := time.Unix(w, 0).UTC()
	layout := "15:04"
	if t.Second() != 0 {
		layout = "15:04:05"
	}
	if floorDiv(w, secondsPerDay) != floorDiv(ref, secondsPerDay) {
		layout = "2006-01-02 " + layout
	}
	return t.Format(layout)
}
