package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestAccount integrates a made-up schedule on 2 Ps: goroutine 1 runs
// throughout; goroutine 2 runs, then enters an fdatasync at 2 ms for
// 3 ms; goroutine 3 is runnable from 3 ms to 4 ms (while 2 holds its P in
// the call), then runs until 6 ms; goroutine 4 has been in a read since
// 0 — too long ago to hold a P.
func TestAccount(t *testing.T) {
	ms := func(f float64) int64 { return int64(f * 1e6) }
	trs := []transition{
		{at: ms(0), g: 1, to: running},
		{at: ms(0), g: 2, to: running},
		{at: ms(0), g: 4, to: inSyscall, syscall: "read"},
		{at: ms(2), g: 2, to: inSyscall, syscall: "fdatasync"},
		{at: ms(3), g: 3, to: runnable},
		{at: ms(4), g: 3, to: running},
		{at: ms(5), g: 2, to: runnable},
		{at: ms(6), g: 3, to: other},
		{at: ms(6), g: 2, to: running},
		{at: ms(8), g: 1, to: other},
		{at: ms(9), g: 2, to: other},
	}
	u := account(trs, 2)
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	// 2 running: 0–2, 4–8; 1 running: 2–4, 8–9; none: never.
	if !near(u.total, 0.009) || !near(u.running[2], 0.006) || !near(u.running[1], 0.003) || !near(u.running[0], 0) {
		t.Fatalf("total %v, running %v", u.total, u.running)
	}
	// Starved: 3–4 (3 runnable, 1 running, 2 in fdatasync since 2 ms; 4's
	// read began 3 ms before, beyond recent), and 5–6? No: two ran then.
	if !near(u.starved, 0.001) || !near(u.starvedBy["fdatasync"], 0.001) || len(u.starvedBy) != 1 {
		t.Fatalf("starved %v by %v", u.starved, u.starvedBy)
	}
	var b bytes.Buffer
	report(&b, u)
	for _, want := range []string{"trace: 0.009 s", "2 goroutines running: 0.006 s (66.7%)",
		"runnable: 0.001 s (11.1%)", "0.001 s (11.1%)  fdatasync"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestAccountNothing(t *testing.T) {
	var b bytes.Buffer
	report(&b, account(nil, 2))
	if !strings.Contains(b.String(), "no goroutine transitions") {
		t.Fatalf("report of nothing: %q", b.String())
	}
}
