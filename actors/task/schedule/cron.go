package schedule

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// The six fields of an expression, in the order of the 6-field form.
const (
	fSecond = iota
	fMinute
	fHour
	fDom
	fMonth
	fDow
	nFields
)

var fieldInfo = [nFields]struct {
	name     string
	min, max int
	names    []string // index = value - min, for month and day-of-week
}{
	fSecond: {name: "second", min: 0, max: 59},
	fMinute: {name: "minute", min: 0, max: 59},
	fHour:   {name: "hour", min: 0, max: 23},
	fDom:    {name: "day-of-month", min: 1, max: 31},
	fMonth: {name: "month", min: 1, max: 12, names: []string{
		"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
	// Day-of-week accepts 0–7; 7 is Sunday like 0.
	fDow: {name: "day-of-week", min: 0, max: 7, names: []string{
		"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}},
}

var macros = map[string]string{
	"@yearly":   "0 0 0 1 1 *",
	"@annually": "0 0 0 1 1 *",
	"@monthly":  "0 0 0 1 * *",
	"@weekly":   "0 0 0 * * 0",
	"@daily":    "0 0 0 * * *",
	"@midnight": "0 0 0 * * *",
	"@hourly":   "0 0 * * * *",
}

// expr is one parsed cron expression: a bit set per field (bit v set when
// value v matches; day-of-week folded to 0–6) and the day forms that
// depend on the month (L, L-n, nW, LW, d#n, dL).
type expr struct {
	set [nFields]uint64
	// domStar and dowStar: the day field was written exactly "*" or "?".
	// Only when neither is does a day match on either field (the union
	// rule). A field of only L, W or # items is restricted.
	domStar, dowStar bool
	// weekDays[f] is the set of days of a month whose 1st is weekday f
	// (0 Sunday) that the plain day-of-week values match.
	weekDays [7]uint32
	// The month-dependent forms; all zero when the expression has none
	// (ext false), so the common case pays nothing for them.
	ext bool
	// lastBefore: bit n for L-n (bit 0 for L).
	lastBefore uint32
	// nearest: bit n for nW.
	nearest uint32
	// lastWeekday: LW.
	lastWeekday bool
	// nth[d]: bit n for d#n.
	nth [7]uint8
	// lastOf: bit d for dL.
	lastOf uint8
}

// parseExpr parses one expression: 5 fields (minute hour day-of-month month
// day-of-week), 6 (seconds first) or a macro. Errors are plain messages;
// the caller adds the schedule field.
func parseExpr(s string) (*expr, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("is empty; want 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first)")
	}
	parts := strings.Fields(s)
	if p := strings.ToUpper(parts[0]); strings.HasPrefix(p, "CRON_TZ=") || strings.HasPrefix(p, "TZ=") {
		return nil, fmt.Errorf("a %s prefix is not accepted; use timezone (an IANA zone name)", parts[0][:strings.IndexByte(parts[0], '=')+1])
	}
	if strings.HasPrefix(parts[0], "@") {
		m, ok := macros[strings.ToLower(parts[0])]
		if !ok {
			return nil, fmt.Errorf("unknown macro %q (want @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)", parts[0])
		}
		if len(parts) > 1 {
			return nil, fmt.Errorf("macro %s takes no fields, got %q after it", parts[0], parts[1])
		}
		parts = strings.Fields(m)
		e, err := parseFields(parts, 0)
		if err != nil {
			panic("schedule: bad macro " + m + ": " + err.Error())
		}
		return e, nil
	}
	switch len(parts) {
	case 5:
		return parseFields(append([]string{"0"}, parts...), 1)
	case 6:
		return parseFields(parts, 0)
	}
	return nil, fmt.Errorf("has %d fields; want 5 (minute hour day-of-month month day-of-week) or 6 (seconds first)", len(parts))
}

// parseFields parses the six fields; first is the index of the first field
// as written (1 for the 5-field form, whose seconds are implied).
func parseFields(parts []string, first int) (*expr, error) {
	e := &expr{}
	for f := 0; f < nFields; f++ {
		if err := e.parseField(f, parts[f]); err != nil {
			return nil, fmt.Errorf("field %d (%s): %v", f-first+1, fieldInfo[f].name, err)
		}
	}
	if e.set[fDow]&(1<<7) != 0 {
		e.set[fDow] = e.set[fDow]&^(1<<7) | 1
	}
	for f := range e.weekDays {
		// Day k+1 of the month falls on weekday (f+k)%7: rotate the week
		// so bit k is that weekday, then repeat it over five weeks.
		b := e.set[fDow]
		r := (b>>f | b<<(7-f)) & 0x7f
		e.weekDays[f] = uint32((r | r<<7 | r<<14 | r<<21 | r<<28) << 1 & allDays)
	}
	e.domStar = parts[fDom] == "*" || parts[fDom] == "?"
	e.dowStar = parts[fDow] == "*" || parts[fDow] == "?"
	if err := e.checkSatisfiable(first); err != nil {
		return nil, err
	}
	return e, nil
}

// daysIn is the most days a month can have (February: 29, in leap years).
var daysIn = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

// allDays is the set of days 1–31.
const allDays = uint64(1)<<32 - 2

// checkSatisfiable rejects an expression whose days can never occur, such as
// the 30th of February. Which days of a month match depends only on the
// month, its length and the weekday of its 1st, and every month occurs with
// every such weekday (February with 28 and with 29 days), so trying each
// is exact. Without the month-dependent forms a restricted day-of-week
// always has a day (every month has every weekday), so only day-of-month
// alone can fail, and the check is a mask per month.
func (e *expr) checkSatisfiable(first int) error {
	if !e.ext && !e.dowStar {
		return nil
	}
	for m := 1; m <= 12; m++ {
		if e.set[fMonth]&(1<<m) == 0 {
			continue
		}
		if !e.ext {
			if e.set[fDom]&(1<<(daysIn[m]+1)-1) != 0 {
				return nil
			}
			continue
		}
		lengths := []int{daysIn[m]}
		if m == 2 {
			lengths = []int{28, 29}
		}
		for _, dim := range lengths {
			for f := 0; f < 7; f++ {
				if e.days(dim, f) != 0 {
					return nil
				}
			}
		}
	}
	switch {
	case e.dowStar:
		return fmt.Errorf("never matches: no day of field %d (day-of-month) occurs in the months of field %d (month)", fDom-first+1, fMonth-first+1)
	case e.domStar:
		return fmt.Errorf("never matches: no day of field %d (day-of-week) occurs in the months of field %d (month)", fDow-first+1, fMonth-first+1)
	}
	return fmt.Errorf("never matches: no day of field %d (day-of-month) or field %d (day-of-week) occurs in the months of field %d (month)", fDom-first+1, fDow-first+1, fMonth-first+1)
}

// parseField parses field f into e: a comma-separated list of items.
func (e *expr) parseField(f int, s string) error {
	if s == "" {
		return fmt.Errorf("is empty")
	}
	for _, item := range strings.Split(s, ",") {
		if item == "" {
			return fmt.Errorf("empty list item")
		}
		up := strings.ToUpper(item)
		// The L, W and # outside the field's names (JUL, WED).
		bare := up
		if strings.ContainsAny(up, "LW#") {
			for _, n := range fieldInfo[f].names {
				bare = strings.ReplaceAll(bare, n, "")
			}
		}
		switch {
		case !strings.ContainsAny(bare, "LW#"):
		case f == fDom:
			if err := e.parseDomForm(item, up); err != nil {
				return err
			}
			e.ext = true
			continue
		case f == fDow:
			if err := e.parseDowForm(item, up, bare); err != nil {
				return err
			}
			e.ext = true
			continue
		default:
			return fmt.Errorf("%q: L, W and # are only for day-of-month (L, L-n, nW, LW) and day-of-week (d#n, dL)", item)
		}
		b, err := parseItem(f, item)
		if err != nil {
			return err
		}
		e.set[f] |= b
	}
	return nil
}

// parseDomForm parses a day-of-month item holding L or W (# is refused):
// L, L-n (1 ≤ n ≤ 30), LW, nW (1 ≤ n ≤ 31). up is item in upper case.
func (e *expr) parseDomForm(item, up string) error {
	switch {
	case strings.Contains(up, "#"):
		return fmt.Errorf("%q: # belongs in day-of-week (d#n, e.g. FRI#2), not day-of-month", item)
	case strings.Contains(up, "/"):
		return fmt.Errorf("%q: a step cannot apply to L or W", item)
	case up == "L":
		e.lastBefore |= 1
	case up == "LW":
		e.lastWeekday = true
	case strings.HasPrefix(up, "LW"):
		return fmt.Errorf("%q: LW (the last weekday of the month) takes no offset", item)
	case strings.HasPrefix(up, "L-"):
		n, err := number(up[2:])
		if err != nil {
			return fmt.Errorf("%q: want L-n, n days before the last day, with n a number from 1 to 30", item)
		}
		if n < 1 || n > 30 {
			return fmt.Errorf("%q: the n of L-n must be from 1 to 30, got %d", item, n)
		}
		e.lastBefore |= 1 << n
	case strings.HasSuffix(up, "W"):
		body := up[:len(up)-1]
		switch {
		case body == "":
			return fmt.Errorf("a bare W needs a day: nW (the weekday nearest day n, 1W–31W) or LW")
		case strings.Contains(body, "-"):
			return fmt.Errorf("%q: a range cannot take W (nW names one day: 15W)", item)
		}
		n, err := number(body)
		if err != nil {
			return fmt.Errorf("%q: want nW with n a day from 1 to 31, or LW", item)
		}
		if n < 1 || n > 31 {
			return fmt.Errorf("%q: the day of nW must be from 1 to 31, got %d", item, n)
		}
		e.nearest |= 1 << n
	default:
		return fmt.Errorf("%q: L and W in day-of-month are written L, L-n, nW or LW", item)
	}
	return nil
}

// parseDowForm parses a day-of-week item holding L or # (W is refused):
// d#n (1 ≤ n ≤ 5) and dL, d a number 0–7 or a name. up is item in upper
// case, bare up without day names.
func (e *expr) parseDowForm(item, up, bare string) error {
	switch {
	case strings.Contains(bare, "W"):
		return fmt.Errorf("%q: W belongs in day-of-month (nW, LW), not day-of-week", item)
	case strings.Contains(up, "/"):
		return fmt.Errorf("%q: a step cannot apply to L or #", item)
	case strings.Contains(up, "#"):
		day, occ, _ := strings.Cut(up, "#")
		switch {
		case strings.Contains(day, "-"):
			return fmt.Errorf("%q: a range cannot take # (d#n names one weekday: FRI#2)", item)
		case day == "":
			return fmt.Errorf("%q: d#n needs a weekday before # (FRI#2)", item)
		case occ == "":
			return fmt.Errorf("%q: d#n needs an occurrence from 1 to 5 after # (FRI#2)", item)
		case strings.ContainsAny(day, "L#") || strings.ContainsAny(occ, "L#"):
			return fmt.Errorf("%q: want d#n, the n-th weekday d of the month (FRI#2)", item)
		}
		d, err := value(fDow, day)
		if err != nil {
			return fmt.Errorf("%q: %v", item, err)
		}
		n, err := number(occ)
		if err != nil {
			return fmt.Errorf("%q: the n of d#n must be a number from 1 to 5", item)
		}
		if n < 1 || n > 5 {
			return fmt.Errorf("%q: the n of d#n must be from 1 to 5, got %d", item, n)
		}
		e.nth[d%7] |= 1 << n
	case strings.HasSuffix(up, "L"):
		day := up[:len(up)-1]
		switch {
		case day == "":
			return fmt.Errorf("a bare L is not a day-of-week; write dL for the last weekday d of the month (FRIL, 5L)")
		case strings.Contains(day, "-"):
			return fmt.Errorf("%q: a range cannot take L (dL names one weekday: FRIL)", item)
		case strings.Contains(day, "L"):
			return fmt.Errorf("%q: want dL, the last weekday d of the month (FRIL, 5L)", item)
		}
		d, err := value(fDow, day)
		if err != nil {
			return fmt.Errorf("%q: %v", item, err)
		}
		e.lastOf |= 1 << (d % 7)
	default:
		return fmt.Errorf("%q: L and # in day-of-week are written dL or d#n (FRIL, FRI#2)", item)
	}
	return nil
}

// parseItem parses one list item: *, ?, a, a-b, each optionally /step
// (a/step means a-max/step).
func parseItem(f int, item string) (uint64, error) {
	info := fieldInfo[f]
	rng, stepText, hasStep := strings.Cut(item, "/")
	step := 1
	if hasStep {
		n, err := number(stepText)
		if err != nil {
			return 0, fmt.Errorf("step %q: %v", stepText, err)
		}
		if n < 1 {
			return 0, fmt.Errorf("step %d must be at least 1", n)
		}
		step = n
	}
	lo, hi := info.min, info.max
	if f == fDow {
		// 7 is only another name for Sunday: "*" and "a/n" run over 0–6,
		// so MON/2 is Monday, Wednesday, Friday.
		hi = 6
	}
	switch {
	case rng == "*" || rng == "?":
	case rng == "":
		return 0, fmt.Errorf("%q has no value before the step", item)
	default:
		a, b, isRange := strings.Cut(rng, "-")
		var err error
		if lo, err = value(f, a); err != nil {
			return 0, err
		}
		switch {
		case isRange:
			if hi, err = value(f, b); err != nil {
				return 0, err
			}
			if f == fDow && hi == 0 && lo > 0 {
				// A range ending at Sunday ends at 7: WED-SUN is 3–7.
				hi = 7
			}
			if lo > hi {
				return 0, fmt.Errorf("range %s runs backwards (%d is above %d)", rng, lo, hi)
			}
		case !hasStep || lo > hi:
			hi = lo
		}
	}
	var set uint64
	for v := lo; v <= hi; v += step {
		set |= 1 << v
	}
	return set, nil
}

// value reads a number or a name of field f and checks its bounds.
func value(f int, s string) (int, error) {
	info := fieldInfo[f]
	if s == "" {
		return 0, fmt.Errorf("a range needs a value on each side of '-'")
	}
	if s[0] < '0' || s[0] > '9' {
		up := strings.ToUpper(s)
		for i, n := range info.names {
			if up == n {
				return info.min + i, nil
			}
		}
		switch f {
		case fMonth:
			return 0, fmt.Errorf("%q is not a number or a month name (JAN–DEC)", s)
		case fDow:
			return 0, fmt.Errorf("%q is not a number or a day name (SUN–SAT)", s)
		}
		return 0, fmt.Errorf("%q is not a number", s)
	}
	n, err := number(s)
	if err != nil {
		return 0, err
	}
	if n < info.min {
		return 0, fmt.Errorf("%d is below %d", n, info.min)
	}
	if n > info.max {
		return 0, fmt.Errorf("%d is above %d", n, info.max)
	}
	return n, nil
}

// number parses a plain decimal number; long ones are refused before they
// could overflow.
func number(s string) (int, error) {
	if s == "" || len(s) > 9 || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	n, _ := strconv.Atoi(s)
	return n, nil
}

// nextBit is the lowest set bit of set at or above i, or 64 when none.
func nextBit(set uint64, i int) int {
	if i >= 64 {
		return 64
	}
	return bits.TrailingZeros64(set >> uint(i) << uint(i))
}
