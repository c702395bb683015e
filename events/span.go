package events

import (
	"strconv"
	"strings"
	"time"
)

// Span says a duration the way every text cronactor prints says one: the
// rows of `cronactor history`, `explain` and `simulate`, and the details its
// decisions record. One unit for one size, with the precision that size
// needs (docs/events.md, "Durations in words"):
//
//   - zero: "0 s";
//   - under a second: whole milliseconds, "250 ms" ("<1 ms" when less
//     than half a millisecond);
//   - under an hour: seconds, whole when exact ("57 s", "600 s"), else to
//     a tenth ("5.0 s": the decimal says the value was rounded);
//   - from an hour on: days, hours, minutes and seconds, the parts that
//     are not zero, to the second ("1 d", "1 d 1 h", "23 h 59 min 55 s").
//
// A negative duration gets a leading "-". The JSON forms (API bodies, the
// history's "backoff") keep Go's duration strings; Span is for words.
func Span(d time.Duration) string {
	if d < 0 {
		if d == -d { // math.MinInt64 has no positive counterpart
			d++
		}
		return "-" + Span(-d)
	}
	switch {
	case d == 0:
		return "0 s"
	case d < time.Second:
		ms := (d + time.Millisecond/2) / time.Millisecond
		switch {
		case ms == 0:
			return "<1 ms"
		case ms < 1000:
			return strconv.FormatInt(int64(ms), 10) + " ms"
		}
		return "1.0 s"
	case d < time.Hour:
		if d%time.Second == 0 {
			return strconv.FormatInt(int64(d/time.Second), 10) + " s"
		}
		tenths := int64((d + 50*time.Millisecond) / (100 * time.Millisecond))
		return strconv.FormatInt(tenths/10, 10) + "." + strconv.FormatInt(tenths%10, 10) + " s"
	}
	return parts(d)
}

// Spans says two durations that a sentence compares ("1 h after …, needs ≥
// 59 min 55 s") in one form: when either is an hour or more, both are said
// in days, hours, minutes and seconds, so that the reader never compares
// "1 h" with "3595 s"; otherwise each as Span says it.
func Spans(a, b time.Duration) (string, string) {
	long := func(d time.Duration) bool { return d >= time.Hour || d <= -time.Hour }
	if !long(a) && !long(b) {
		return Span(a), Span(b)
	}
	say := func(d time.Duration) string {
		switch {
		case d < 0:
			if d == -d {
				d++
			}
			return "-" + parts(-d)
		case d < time.Second:
			return Span(d)
		}
		return parts(d)
	}
	return say(a), say(b)
}

// parts says d, at least a second, in days, hours, minutes and seconds,
// the parts that are not zero, to the second.
func parts(d time.Duration) string {
	s := int64(d / time.Second) // rounded below; d + 0.5 s may overflow
	if d%time.Second >= time.Second/2 {
		s++
	}
	out := make([]string, 0, 4)
	for _, u := range []struct {
		secs int64
		name string
	}{{86400, "d"}, {3600, "h"}, {60, "min"}, {1, "s"}} {
		if n := s / u.secs; n > 0 {
			out = append(out, strconv.FormatInt(n, 10)+" "+u.name)
			s -= n * u.secs
		}
	}
	return strings.Join(out, " ")
}
