package history

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// printable shows free text (task names, errors a handler returned, drop
// details) so that it cannot drive the terminal it is printed on or change
// how the text around it reads: control characters (ANSI escape sequences
// start with one), the bidirectional formatting characters, the line and
// paragraph separators and bytes that are not UTF-8 are written as Go
// escapes (\x1b, \u202e, \xff). Other text is left as it is.
func printable(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case hidden(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || hidden(r) {
			return true
		}
		i += n
	}
	return false
}

func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}
