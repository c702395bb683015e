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
// value v matches; day-of-week folded to 0–6).
type expr struct {
	set [nFields]uint64
	// domStar and dowStar: the day field was written exactly "*" or "?".
	// Only when neither is does a day match on either field (Vixie's OR).
	domStar, dowStar bool
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
		set, err := parseField(f, parts[f])
		if err != nil {
			return nil, fmt.Errorf("field %d (%s): %v", f-first+1, fieldInfo[f].name, err)
		}
		e.set[f] = set
	}
	if e.set[fDow]&(1<<7) != 0 {
		e.set[fDow] = e.set[fDow]&^(1<<7) | 1
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

// checkSatisfiable rejects an expression whose days can never occur, such as
// the 30th of February. With a restricted day-of-week there is always a day
// (every month has every weekday), so only day-of-month alone can fail.
func (e *expr) checkSatisfiable(first int) error {
	if !e.dowStar {
		return nil
	}
	for m := 1; m <= 12; m++ {
		if e.set[fMonth]&(1<<m) != 0 && e.set[fDom]&(1<<(daysIn[m]+1)-1) != 0 {
			return nil
		}
	}
	return fmt.Errorf("never matches: no day of field %d (day-of-month) occurs in the months of field %d (month)", fDom-first+1, fMonth-first+1)
}

func parseField(f int, s string) (uint64, error) {
	if s == "" {
		return 0, fmt.Errorf("is empty")
	}
	var set uint64
	for _, item := range strings.Split(s, ",") {
		b, err := parseItem(f, item)
		if err != nil {
			return 0, err
		}
		set |= b
	}
	return set, nil
}

// parseItem parses one list item: *, ?, a, a-b, each optionally /step
// (a/step means a-max/step).
func parseItem(f int, item string) (uint64, error) {
	info := fieldInfo[f]
	if item == "" {
		return 0, fmt.Errorf("empty list item")
	}
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
