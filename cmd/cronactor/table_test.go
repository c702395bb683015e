package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// testWidth is the width a terminal gives the characters these tests use,
// written out apart from displayWidth so that the test does not check
// the printer against itself: kana, CJK ideographs, Hangul and the emoji
// blocks take two columns, combining accents none, the rest one.
func testWidth(s string) int {
	w := 0
	for _, r := range s {
		switch {
		case r >= 0x0300 && r <= 0x036F:
		case r >= 0x3040 && r <= 0x9FFF, r >= 0xAC00 && r <= 0xD7A3, r >= 0x1F300 && r <= 0x1FAFF:
			w += 2
		default:
			w++
		}
	}
	return w
}

var cellGap = regexp.MustCompile(`\S   +`)

// columnStarts is the display column at which each cell of a table line
// starts (cells are separated by three or more spaces).
func columnStarts(line string) []int {
	starts := []int{0}
	for _, m := range cellGap.FindAllStringIndex(line, -1) {
		starts = append(starts, testWidth(line[:m[1]]))
	}
	return starts
}

// TestTaskListAlignsByDisplayWidth: CJK, emoji and combining marks in
// names and owners keep every column of `task list` at the same display
// column, and a 200-character name is cut with "…" so that no row grows
// past a bound; -o wide shows it whole.
func TestTaskListAlignsByDisplayWidth(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	next := now.Add(30 * time.Second)
	long := strings.Repeat("x", 200)
	names := []struct{ name, owner string }{
		{"inbox", "channel/pop3/42"},
		{"日本語のタスク", "チーム/東京"},
		{"📬 mail 🎉", "owner/😀"},
		{"e\u0301cole", "한국어"},
		{long, "o/" + strings.Repeat("長", 60)},
	}
	var tasks []crontasks.Task
	for i, n := range names {
		tasks = append(tasks, crontasks.Task{ID: uuid.New(), Name: n.name, Owner: n.owner, Kind: "noop",
			Interval: events.Duration(time.Duration(i+1) * time.Minute), Status: "active", NextRun: &next,
			CreatedAt: now.Add(-time.Hour)})
	}
	var out bytes.Buffer
	printTasks(&out, tasks, false, now)
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != len(tasks)+1 {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	want := columnStarts(lines[0])
	if len(want) != 9 {
		t.Fatalf("header %q has %d columns", lines[0], len(want))
	}
	const bound = 160 // ID 36, NAME and OWNER at most 32 each, the rest short; gaps of 3
	for _, l := range lines[1:] {
		if got := columnStarts(l); !equalInts(got, want) {
			t.Errorf("row %q: columns start at %v, the header's at %v", l, got, want)
		}
		if w := testWidth(l); w > bound {
			t.Errorf("row is %d columns wide (bound %d): %q", w, bound, l)
		}
	}
	if !strings.Contains(lines[5], strings.Repeat("x", 31)+"…") || strings.Contains(lines[5], strings.Repeat("x", 33)) {
		t.Errorf("the long name is not cut to 32 columns with …: %q", lines[5])
	}
	out.Reset()
	printTasks(&out, tasks, true, now)
	if !strings.Contains(out.String(), long) || !strings.Contains(out.String(), strings.Repeat("長", 60)) || strings.Contains(out.String(), "…") {
		t.Errorf("-o wide cuts cells:\n%s", out.String())
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDisplayWidth(t *testing.T) {
	for s, want := range map[string]int{
		"abc": 3, "日本": 4, "ｱ": 1, "Ａ": 2, "😀": 2, "👨\u200d👩\u200d👧": 2, "e\u0301": 1, "🇯🇵": 2, "": 0, "…": 1,
	} {
		if got := displayWidth(s); got != want {
			t.Errorf("displayWidth(%q) = %d, want %d", s, got, want)
		}
	}
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"}, {"abcdefghij", 5, "abcd…"}, {"日本語です", 5, "日本…"}, {"😀😀😀", 4, "😀…"},
	} {
		got := truncateCell(c.in, c.max)
		if got != c.want || displayWidth(got) > c.max || !utf8.ValidString(got) {
			t.Errorf("truncateCell(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

// TestTaskListNoNextRunWhenNotRunning: a paused, deleted or finished task
// shows "-" as NEXT RUN (table and wide), though its row keeps a next_run.
func TestTaskListNoNextRunWhenNotRunning(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	soon, past := now.Add(3*time.Second), now.Add(-3*time.Second)
	var tasks []crontasks.Task
	for _, c := range []struct {
		status string
		next   *time.Time
	}{{"active", &soon}, {"paused", &past}, {"deleted", &soon}, {"finished", &soon}} {
		tasks = append(tasks, crontasks.Task{ID: uuid.New(), Name: c.status, Owner: "o", Kind: "noop",
			Interval: events.Duration(time.Minute), Status: c.status, NextRun: c.next, CreatedAt: now.Add(-time.Hour)})
	}
	for _, wide := range []bool{false, true} {
		var out bytes.Buffer
		printTasks(&out, tasks, wide, now)
		lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		col := strings.Index(lines[0], "NEXT RUN")
		for i, l := range lines[1:] {
			cell := strings.Fields(l[col:])[0]
			want := "-"
			if tasks[i].Status == "active" {
				want = "in"
				if wide {
					want = "2026-11-22T12:00:03Z"
				}
			}
			if cell != want {
				t.Errorf("wide %v: %s task shows NEXT RUN %q, want %q\n%s", wide, tasks[i].Status, cell, want, out.String())
			}
		}
	}
}
