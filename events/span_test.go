package events_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
)

// TestSpan: one unit for one size, and the precision that size needs.
func TestSpan(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0 s"},
		{400 * time.Microsecond, "<1 ms"},
		{500 * time.Microsecond, "1 ms"},
		{250 * time.Millisecond, "250 ms"},
		{999*time.Millisecond + 400*time.Microsecond, "999 ms"},
		{999*time.Millisecond + 600*time.Microsecond, "1.0 s"},
		{time.Second, "1 s"},
		{5001327070 * time.Nanosecond, "5.0 s"}, // issue 38: not "5.00132707s"
		{4500 * time.Millisecond, "4.5 s"},
		{4750 * time.Millisecond, "4.8 s"},
		{57 * time.Second, "57 s"},
		{time.Minute, "60 s"},
		{260 * time.Second, "260 s"},
		{260*time.Second + 420*time.Millisecond, "260.4 s"},
		{time.Hour, "1 h"},
		{time.Hour + 30*time.Minute, "1 h 30 min"},
		{2*time.Hour + 5*time.Second, "2 h 5 s"},
		{24*time.Hour - 5*time.Second, "23 h 59 min 55 s"},
		{24 * time.Hour, "1 d"},
		{25 * time.Hour, "1 d 1 h"},
		{840 * time.Hour, "35 d"},
		{time.Hour + 400*time.Millisecond, "1 h"},
		{time.Hour + 600*time.Millisecond, "1 h 1 s"},
		{-90 * time.Second, "-90 s"},
		{-1500 * time.Millisecond, "-1.5 s"},
	} {
		if got := events.Span(c.d); got != c.want {
			t.Errorf("Span(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	// The extremes do not panic nor lose their sign.
	if got := events.Span(math.MinInt64); got[0] != '-' {
		t.Errorf("Span(MinInt64) = %q", got)
	}
	if got := events.Span(math.MaxInt64); got != "106751 d 23 h 47 min 17 s" {
		t.Errorf("Span(MaxInt64) = %q", got)
	}
}

// TestSpans: two durations a sentence compares read in one form; from an
// hour on, both in days, hours, minutes and seconds.
func TestSpans(t *testing.T) {
	for _, c := range []struct {
		a, b         time.Duration
		wantA, wantB string
	}{
		{57 * time.Second, 55 * time.Second, "57 s", "55 s"},
		{5001327070 * time.Nanosecond, 4500 * time.Millisecond, "5.0 s", "4.5 s"},
		{time.Hour, time.Hour - 5*time.Second, "1 h", "59 min 55 s"}, // not "3595 s"
		{59*time.Minute + 30*time.Second, 25 * time.Hour, "59 min 30 s", "1 d 1 h"},
		{24 * time.Hour, 24*time.Hour - 5*time.Second, "1 d", "23 h 59 min 55 s"},
		{time.Hour, 250 * time.Millisecond, "1 h", "250 ms"},
		{-time.Hour, 90 * time.Second, "-1 h", "1 min 30 s"},
	} {
		if a, b := events.Spans(c.a, c.b); a != c.wantA || b != c.wantB {
			t.Errorf("Spans(%v, %v) = %q, %q, want %q, %q", c.a, c.b, a, b, c.wantA, c.wantB)
		}
	}
}

func ExampleSpan() {
	fmt.Println(events.Span(5001327070 * time.Nanosecond))
	fmt.Println(events.Span(250 * time.Millisecond))
	fmt.Println(events.Span(57 * time.Second))
	fmt.Println(events.Span(24*time.Hour - 5*time.Second))
	// Output:
	// 5.0 s
	// 250 ms
	// 57 s
	// 23 h 59 min 55 s
}
