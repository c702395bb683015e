package schedule

import "math/bits"

// Civil ("wall clock") arithmetic on plain integers: a wall time is the
// number of seconds since 1970-01-01 00:00 as the clock on the wall reads it,
// with no zone. A slot's instant is its wall time minus the zone's offset.

const secondsPerDay = 86400

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// daysFromCivil is the day number (days since 1970-01-01) of y-m-d, in the
// proleptic Gregorian calendar (H. Hinnant's algorithm).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// weekday of a day number: 0 Sunday … 6 Saturday (1970-01-01 was a Thursday).
func weekday(day int64) int {
	w := (day + 4) % 7
	if w < 0 {
		w += 7
	}
	return int(w)
}

func daysInMonth(y int64, m int) int {
	if m == 2 && !(y%4 == 0 && (y%100 != 0 || y%400 == 0)) {
		return 28
	}
	return daysIn[m]
}

// days is the set of days (bit d for day d) that the day fields match in a
// month of dim days whose 1st is weekday f (0 Sunday), under the union rule:
// when both day fields are restricted a day matches if either does,
// otherwise both must.
func (e *expr) days(dim, f int) uint64 {
	month := allDays & (uint64(1)<<(dim+1) - 1)
	dom := e.set[fDom] & month
	dow := uint64(e.weekDays[f]) & month
	if e.ext {
		dom |= e.monthDom(dim, f)
		dow |= e.monthDow(dim, f)
	}
	if e.domStar || e.dowStar {
		return dom & dow
	}
	return dom | dow
}

// monthDom is the set of days the day-of-month forms L, L-n, nW and LW
// name in a month of dim days whose 1st is weekday f.
func (e *expr) monthDom(dim, f int) uint64 {
	var set uint64
	for b := e.lastBefore; b != 0; b &= b - 1 {
		if d := dim - bits.TrailingZeros32(b); d >= 1 {
			set |= 1 << d
		}
	}
	for b := e.nearest; b != 0; b &= b - 1 {
		if n := bits.TrailingZeros32(b); n <= dim {
			set |= 1 << nearestWeekday(n, dim, f)
		}
	}
	if e.lastWeekday {
		set |= 1 << nearestWeekday(dim, dim, f)
	}
	return set
}

// nearestWeekday is the weekday (Monday to Friday) nearest day n of a month
// of dim days whose 1st is weekday f, without leaving the month: a Saturday
// moves to the Friday before, or on the 1st to Monday the 3rd; a Sunday to
// the Monday after, or on the last day to Friday the day before yesterday.
// For n = dim it is the month's last weekday (LW).
func nearestWeekday(n, dim, f int) int {
	switch (f + n - 1) % 7 {
	case 6:
		if n == 1 {
			return 3
		}
		return n - 1
	case 0:
		if n == dim {
			return n - 2
		}
		return n + 1
	}
	return n
}

// monthDow is the set of days the day-of-week forms d#n and dL name in a
// month of dim days whose 1st is weekday f.
func (e *expr) monthDow(dim, f int) uint64 {
	var set uint64
	for d, occ := range e.nth {
		first := 1 + (d-f+7)%7 // the first weekday d of the month
		for b := occ; b != 0; b &= b - 1 {
			if day := first + 7*(bits.TrailingZeros8(b)-1); day <= dim {
				set |= 1 << day
			}
		}
	}
	if e.lastOf != 0 {
		lastWd := (f + dim - 1) % 7
		for b := e.lastOf; b != 0; b &= b - 1 {
			set |= 1 << (dim - (lastWd-bits.TrailingZeros8(b)+7)%7)
		}
	}
	return set
}

// nextWall is the first wall time in [lo, hi) the expression matches.
// Each step moves to the next candidate month, day or time of day, so the
// loop runs at most a few times per month between lo and hi.
func (e *expr) nextWall(lo, hi int64) (int64, bool) {
	day := floorDiv(lo, secondsPerDay)
	sod := int(lo - day*secondsPerDay)
	for day*secondsPerDay < hi {
		y, m, d := civilFromDays(day)
		if e.set[fMonth]&(1<<m) == 0 {
			nm := nextBit(e.set[fMonth], m+1)
			if nm > 12 {
				y++
				nm = nextBit(e.set[fMonth], 1)
			}
			day, sod = daysFromCivil(y, nm, 1), 0
			continue
		}
		dim := daysInMonth(y, m)
		nd := nextBit(e.days(dim, weekday(day-int64(d-1))), d)
		if nd > dim {
			// No day left this month: its last day, then the 1st after.
			day, sod = day+int64(dim-d+1), 0
			continue
		}
		if nd != d {
			day, sod = day+int64(nd-d), 0
			if day*secondsPerDay >= hi {
				break
			}
		}
		if t, ok := e.nextTimeOfDay(sod); ok {
			w := day*secondsPerDay + int64(t)
			if w >= hi {
				return 0, false
			}
			return w, true
		}
		day, sod = day+1, 0
	}
	return 0, false
}

// dayMatches reports whether the day fields match day (a day number), the
// d-th of its month.
func (e *expr) dayMatches(day int64, y int64, m, d int) bool {
	return e.days(daysInMonth(y, m), weekday(day-int64(d-1)))&(1<<d) != 0
}

// nextTimeOfDay is the first matching second of the day at or after sod.
func (e *expr) nextTimeOfDay(sod int) (int, bool) {
	h, mi, s := sod/3600, sod/60%60, sod%60
	for {
		nh := nextBit(e.set[fHour], h)
		if nh >= 24 {
			return 0, false
		}
		if nh != h {
			h, mi, s = nh, 0, 0
		}
		for {
			nm := nextBit(e.set[fMinute], mi)
			if nm >= 60 {
				break
			}
			if nm != mi {
				mi, s = nm, 0
			}
			if ns := nextBit(e.set[fSecond], s); ns < 60 {
				return h*3600 + mi*60 + ns, true
			}
			mi, s = mi+1, 0
		}
		h, mi, s = h+1, 0, 0
	}
}
