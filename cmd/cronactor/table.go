package main

import (
	"io"
	"strings"

	"github.com/mattn/go-runewidth"
)

// cellWidth measures text as a terminal shows it: East Asian wide and
// fullwidth characters and emoji take two columns, combining marks none,
// a grapheme cluster (a ZWJ emoji sequence, a flag) counts once. The
// condition is fixed rather than read from the locale, so that a table
// is laid out the same everywhere (ambiguous-width characters count one).
var cellWidth = &runewidth.Condition{EastAsianWidth: false, StrictEmojiNeutral: true}

// displayWidth is the number of terminal columns s takes.
func displayWidth(s string) int { return cellWidth.StringWidth(s) }

// truncateCell shortens s to at most max columns, ending it with "…"
// when something was cut.
func truncateCell(s string, max int) string {
	return cellWidth.Truncate(s, max, "…")
}

// table lays out rows in columns by display width (text/tabwriter counts
// runes, so a CJK or emoji cell pushed the columns after it out of line).
// Each column but the last is padded to its widest cell plus three spaces,
// as tabwriter.NewWriter(w, 0, 2, 3, ' ', 0) did; cells of the columns in
// limits are cut to that many columns first.
type table struct {
	rows   [][]string
	limits map[int]int
}

// row adds one row of cells.
func (t *table) row(cells ...string) {
	if t.limits != nil {
		for i, c := range cells {
			if max, ok := t.limits[i]; ok {
				cells[i] = truncateCell(c, max)
			}
		}
	}
	t.rows = append(t.rows, cells)
}

// write writes the table to w.
func (t *table) write(w io.Writer) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i == len(r)-1 {
				break // the last cell of a row is not part of a column
			}
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-displayWidth(c)+3))
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
