package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func ms(f float64) int64 { return int64(f * 1e6) }

func near(got, want float64) bool { return math.Abs(got-want) < 1e-9 }

// TestAccount integrates a made-up schedule on 2 Ps (times in ms):
//   - goroutine 1 runs 0–8;
//   - goroutine 2 runs 0–2, is in an fdatasync on P 1 from 2 to 5 (its P
//     taken by the runtime at 4.5), runnable 5–6, runs 6–9;
//   - goroutine 3 is runnable 3–4, runs 4–5;
//   - goroutine 4 has been in a read since 0, its P (P 7) taken at 0.5;
//   - at 5 the trace restates goroutine 1's state (as at a generation).
func TestAccount(t *testing.T) {
	trs := []transition{
		{at: ms(0), g: 1, to: running},
		{at: ms(0), g: 2, to: running},
		{at: ms(0), g: 4, to: inSyscall, p: 7, syscall: "read"},
		{at: ms(0.5), p: 7},
		{at: ms(2), g: 2, to: inSyscall, p: 1, syscall: "fdatasync"},
		{at: ms(3), g: 3, to: runnable},
		{at: ms(4), g: 3, to: running},
		{at: ms(4.5), p: 1},
		{at: ms(5), g: 2, to: runnable},
		{at: ms(5), g: 1, to: running},
		{at: ms(5), g: 3, to: other},
		{at: ms(6), g: 2, to: running},
		{at: ms(8), g: 1, to: other},
		{at: ms(9), g: 2, to: other},
	}
	u := account(trs, 2)
	// 2 running: 0–2, 4–5 (1 and 3), 6–8; 1 running: 2–4, 5–6, 8–9.
	if !near(u.total, 0.009) || !near(u.running[2], 0.005) || !near(u.running[1], 0.004) || !near(u.running[0], 0) {
		t.Fatalf("total %v, running %v", u.total, u.running)
	}
	// Starved: 3–4 (3 runnable, 1 running, one P missing: held by the
	// fdatasync) and 5–6 (2 runnable, 1 running, the missing P held by
	// nothing). The read's P was taken at 0.5 and counts for nothing.
	if !near(u.starved, 0.002) || !near(u.starvedBy["fdatasync"], 0.001) || !near(u.starvedBy[""], 0.001) || len(u.starvedBy) != 2 {
		t.Fatalf("starved %v by %v", u.starved, u.starvedBy)
	}
	var b bytes.Buffer
	report(&b, u)
	for _, want := range []string{"trace: 0.009 s, 2 Ps", "goroutines running: 2 for 0.005 s (55.6%)",
		"runnable: 0.002 s (22.2%)", "0.001 s (11.1%)  fdatasync", "0.001 s (11.1%)  (held by no system call"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// TestAccountShares: with no goroutine running on 2 Ps and one runnable,
// one P held by a write and the other by a read, each call gets half;
// with one of them returned, the call gets half and the free P the other.
func TestAccountShares(t *testing.T) {
	trs := []transition{
		{at: ms(0), g: 1, to: inSyscall, p: 0, syscall: "write"},
		{at: ms(0), g: 2, to: inSyscall, p: 1, syscall: "read"},
		{at: ms(0), g: 3, to: runnable},
		{at: ms(2), g: 2, to: other},
		{at: ms(4), g: 3, to: running},
	}
	u := account(trs, 2)
	if !near(u.running[0], 0.004) || !near(u.starved, 0.004) {
		t.Fatalf("running %v, starved %v", u.running, u.starved)
	}
	if !near(u.starvedBy["write"], 0.002) || !near(u.starvedBy["read"], 0.001) || !near(u.starvedBy[""], 0.001) {
		t.Fatalf("starved by %v, want write 2 ms, read 1 ms, no call 1 ms", u.starvedBy)
	}
}

// TestAccountRestatedCall: a call the trace restates (syscall → syscall,
// at a generation) keeps the P it held, and its state is not counted twice.
func TestAccountRestatedCall(t *testing.T) {
	trs := []transition{
		{at: ms(0), g: 1, to: running},
		{at: ms(0), g: 2, to: inSyscall, p: 1, syscall: "fdatasync"},
		{at: ms(0), g: 3, to: runnable},
		{at: ms(1), g: 2, to: inSyscall, p: 1, syscall: "restated"},
		{at: ms(2), g: 2, to: other},
		{at: ms(3), g: 3, to: running},
	}
	u := account(trs, 2)
	if !near(u.starvedBy["fdatasync"], 0.002) || !near(u.starvedBy[""], 0.001) || u.starvedBy["restated"] != 0 {
		t.Fatalf("starved by %v, want fdatasync 2 ms and no call 1 ms", u.starvedBy)
	}
}

func TestAccountNothing(t *testing.T) {
	var b bytes.Buffer
	report(&b, account(nil, 2))
	if !strings.Contains(b.String(), "no goroutine transitions") {
		t.Fatalf("report of nothing: %q", b.String())
	}
}
