package rules

import (
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of a task's name and owner. They are counted in characters
// (Unicode code points) of valid UTF-8; a name or owner is shown in tables,
// logs and terminals, so it may not carry anything that changes how the
// text around it is displayed.
const (
	MaxNameChars  = 200
	MaxOwnerChars = 200
)

// Times a spec may record: a first run or a new nextRun before 1970 or
// after year 9999 is refused (the zero time, 0001-01-01T00:00:00Z, is never
// taken as "unset" by mistake, and every time stays writable as RFC 3339).
var (
	MinTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// validateIdentity checks the name and the owner: both are required, at
// most MaxNameChars/MaxOwnerChars characters of valid UTF-8, with no
// character that TextProblem refuses.
func validateIdentity(s Spec) error {
	for _, f := range []struct {
		field, v string
		max      int
	}{{"name", s.Name, MaxNameChars}, {"owner", s.Owner, MaxOwnerChars}} {
		if f.v == "" {
			return &FieldError{f.field, "is required"}
		}
		if msg := TextProblem(f.v, f.max); msg != "" {
			return &FieldError{f.field, msg}
		}
	}
	return nil
}

// TextProblem says what is wrong with s as a name or owner (at most max
// characters), or "" when nothing is. Refused: bytes that are not UTF-8,
// control characters (C0 and C1, so NUL, newlines, tabs and the ESC of
// terminal escape sequences), the bidirectional formatting characters
// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, which can make
// text display in another order than it is stored), the line and paragraph
// separators U+2028 and U+2029, and text that is only white space.
func TextProblem(s string, max int) string {
	if !utf8.ValidString(s) {
		return "must be valid UTF-8"
	}
	n, blank := 0, true
	for i, r := range s {
		n++
		switch {
		case unicode.IsControl(r):
			return fmt.Sprintf("must not contain control characters (%U at byte %d)", r, i)
		case unicode.Is(unicode.Bidi_Control, r):
			return fmt.Sprintf("must not contain bidirectional formatting characters (%U at byte %d)", r, i)
		case r == '\u2028' || r == '\u2029':
			return fmt.Sprintf("must not contain line or paragraph separators (%U at byte %d)", r, i)
		}
		if !unicode.IsSpace(r) {
			blank = false
		}
	}
	switch {
	case n > max:
		return fmt.Sprintf("must be at most %d characters, got %d", max, n)
	case blank:
		return "must not be only white space"
	}
	return ""
}

// TimeProblem says what is wrong with t as a time a spec records (a first
// run, a new nextRun), or "" when nothing is: it must lie between MinTime
// and MaxTime, so the zero time is refused rather than read as unset.
func TimeProblem(t time.Time) string {
	switch {
	case t.IsZero():
		return "must be a time, not the zero time 0001-01-01T00:00:00Z (leave the field out for its default)"
	case t.Before(MinTime) || t.After(MaxTime):
		return fmt.Sprintf("must be between %s and %s, got %s", MinTime.Format(time.RFC3339), MaxTime.Format(time.RFC3339), t.UTC().Format(time.RFC3339Nano))
	}
	return ""
}

// atLeastHalf reports whether 2·d ≥ whole, for a whole that is not
// negative, without overflowing: d*2 wraps around for a d over 2562047h
// (a tolerance of "2562047h" doubled is negative, and passed as "less than
// half"), whole-d cannot once d is not negative.
func atLeastHalf(d, whole time.Duration) bool { return d >= 0 && d >= whole-d }
