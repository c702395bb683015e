package schedule_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func compile(t *testing.T, spec schedule.Spec) *schedule.Schedule {
	t.Helper()
	s, err := schedule.Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestListIsAUnion: weekdays at 09:00 and Saturdays at 12:00; an instant
// two expressions share is one slot.
func TestListIsAUnion(t *testing.T) {
	got := upcoming(t, schedule.Spec{Cron: []string{"0 9 * * MON-FRI", "0 12 * * SAT", "0 9 * * FRI"}, Timezone: "Europe/Berlin"},
		"2026-03-05T10:00:00+01:00", 4)
	want := []string{"2026-03-06T09:00:00+01:00", "2026-03-07T12:00:00+01:00", "2026-03-09T09:00:00+01:00", "2026-03-10T09:00:00+01:00"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestAtList: instants sorted and de-duplicated, shown in the zone.
func TestAtList(t *testing.T) {
	spec := schedule.Spec{Timezone: "America/New_York", At: []time.Time{
		mustTime(t, "2026-05-01T14:00:00Z"), mustTime(t, "2026-04-01T14:00:00Z"), mustTime(t, "2026-05-01T10:00:00-04:00"),
	}}
	got := upcoming(t, spec, "2026-01-01T00:00:00Z", 5)
	want := []string{"2026-04-01T10:00:00-04:00", "2026-05-01T10:00:00-04:00"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	s := compile(t, spec)
	if s.Once() {
		t.Error("two instants are not a one-time task")
	}
	if got := s.Next(mustTime(t, "2026-04-01T14:00:00Z")); !got.Equal(mustTime(t, "2026-05-01T14:00:00Z")) {
		t.Errorf("strictly after an instant: %s", got)
	}
	if got := s.Next(mustTime(t, "2026-05-01T14:00:00Z")); !got.IsZero() {
		t.Errorf("after the last instant: %s, want none", got)
	}
	one := compile(t, schedule.Spec{At: []time.Time{mustTime(t, "2026-04-01T14:00:00.5Z")}})
	if !one.Once() || one.DefaultTimebox(mustTime(t, "2026-01-01T00:00:00Z")) != time.Hour {
		t.Error("a single instant is a one-time task with a 1 h timebox")
	}
	if got := one.Next(mustTime(t, "2026-04-01T14:00:00Z")); !got.Equal(mustTime(t, "2026-04-01T14:00:00.5Z")) {
		t.Errorf("sub-second instant: %s", got)
	}
}

// TestWindow: no slot before start_at (one at start_at counts), none after
// end_at (one at end_at counts).
func TestWindow(t *testing.T) {
	spec := schedule.Spec{Cron: []string{"0 * * * *"},
		StartAt: mustTime(t, "2026-03-02T10:00:00Z"), EndAt: mustTime(t, "2026-03-02T12:00:00Z")}
	got := upcoming(t, spec, "2026-03-01T00:00:00Z", 10)
	want := []string{"2026-03-02T10:00:00Z", "2026-03-02T11:00:00Z", "2026-03-02T12:00:00Z"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	spec.StartAt = mustTime(t, "2026-03-02T10:00:00.5Z")
	if got := upcoming(t, spec, "2026-03-01T00:00:00Z", 1); !slices.Equal(got, []string{"2026-03-02T11:00:00Z"}) {
		t.Errorf("start_at between slots: %q", got)
	}
	at := schedule.Spec{At: []time.Time{mustTime(t, "2026-01-01T00:00:00Z"), mustTime(t, "2026-02-01T00:00:00Z"), mustTime(t, "2026-03-01T00:00:00Z")},
		StartAt: mustTime(t, "2026-01-15T00:00:00Z"), EndAt: mustTime(t, "2026-02-15T00:00:00Z")}
	if got := upcoming(t, at, "2025-01-01T00:00:00Z", 10); !slices.Equal(got, []string{"2026-02-01T00:00:00Z"}) {
		t.Errorf("window on an at list: %q", got)
	}
}

// TestAdvance: R10's step — missed slots, the predecessor of the next slot,
// and the end of the schedule (last slot, max_runs).
func TestAdvance(t *testing.T) {
	s := compile(t, schedule.Spec{Cron: []string{"*/10 * * * *"}, MaxRuns: 5})
	slot := mustTime(t, "2026-03-02T10:00:00Z")
	// On time: nothing missed; the next slot's predecessor is the slot.
	st := s.Advance(slot, slot.Add(time.Second), 1)
	if st.Missed != 0 || !st.Prev.Equal(slot) || !st.Next.Equal(mustTime(t, "2026-03-02T10:10:00Z")) || st.Finished {
		t.Errorf("on time: %+v", st)
	}
	// Found 35 minutes late: 10:10, 10:20, 10:30 passed over.
	st = s.Advance(slot, slot.Add(35*time.Minute), 2)
	if st.Missed != 3 || !st.Prev.Equal(mustTime(t, "2026-03-02T10:30:00Z")) || !st.Next.Equal(mustTime(t, "2026-03-02T10:40:00Z")) {
		t.Errorf("late: %+v", st)
	}
	// A tick exactly on a later slot passes over that slot too.
	st = s.Advance(slot, mustTime(t, "2026-03-02T10:20:00Z"), 2)
	if st.Missed != 2 || !st.Next.Equal(mustTime(t, "2026-03-02T10:30:00Z")) {
		t.Errorf("tick on a slot: %+v", st)
	}
	// The fifth run is the last.
	if st = s.Advance(slot, slot, 5); !st.Finished || !st.Next.IsZero() {
		t.Errorf("max_runs: %+v", st)
	}
	// An at list finishes with its last instant.
	at := compile(t, schedule.Spec{At: []time.Time{slot, slot.Add(time.Hour)}})
	if st = at.Advance(slot, slot, 1); st.Finished || !st.Next.Equal(slot.Add(time.Hour)) {
		t.Errorf("first of two: %+v", st)
	}
	if st = at.Advance(slot, slot.Add(2*time.Hour), 1); !st.Finished || st.Missed != 1 {
		t.Errorf("both passed: %+v", st)
	}
	// A long downtime of a per-second schedule is counted exactly, fast:
	// every second of 400 days but one hour — the wall times of 25 October
	// 2026 02:00–02:59 happen twice and fire at their first instants only.
	// (On the spring-forward nights each missing wall time shifts onto a
	// second that has its own slot: one slot each.)
	sec := compile(t, schedule.Spec{Cron: []string{"* * * * * *"}, Timezone: "Europe/Berlin"})
	tick := slot.Add(400*24*time.Hour + 500*time.Millisecond)
	st = sec.Advance(slot, tick, 1)
	if st.Missed != 400*24*3600-3600 || !st.Next.Equal(tick.Truncate(time.Second).Add(time.Second)) || !st.Prev.Equal(tick.Truncate(time.Second)) {
		t.Errorf("a long downtime: %+v", st)
	}
	// A list of expressions is counted one by one, up to MaxMissed.
	list := compile(t, schedule.Spec{Cron: []string{"* * * * * *", "*/2 * * * * *"}})
	if st = list.Advance(slot, tick, 1); st.Missed != schedule.MaxMissed || !st.Next.Equal(tick.Truncate(time.Second).Add(time.Second)) {
		t.Errorf("a list: %+v", st)
	}
}

// TestSpacing: R11's spacing is the time from the slot before.
func TestSpacing(t *testing.T) {
	s := compile(t, schedule.Spec{Cron: []string{"0 9 * * MON-FRI"}, Timezone: "Europe/Berlin"})
	for _, c := range []struct {
		slot string
		want time.Duration
	}{
		{"2026-03-03T09:00:00+01:00", 24 * time.Hour}, // Tuesday after Monday
		{"2026-03-09T09:00:00+01:00", 72 * time.Hour}, // Monday after Friday
		{"2026-03-30T09:00:00+02:00", 71 * time.Hour}, // across the spring-forward weekend
		{"2026-10-26T09:00:00+01:00", 73 * time.Hour}, // across the fall-back weekend
	} {
		if got := s.Spacing(mustTime(t, c.slot)); got != c.want {
			t.Errorf("spacing of %s: %s, want %s", c.slot, got, c.want)
		}
	}
	first := compile(t, schedule.Spec{Cron: []string{"0 9 * * *"}, StartAt: mustTime(t, "2026-03-02T00:00:00Z")})
	if got := first.Spacing(mustTime(t, "2026-03-02T09:00:00Z")); got != 0 {
		t.Errorf("the first slot has no spacing, got %s", got)
	}
	if got := first.Prev(mustTime(t, "2026-03-05T09:00:00Z")); !got.Equal(mustTime(t, "2026-03-04T09:00:00Z")) {
		t.Errorf("prev: %s", got)
	}
	sparse := compile(t, schedule.Spec{Cron: []string{"* * * 2 *"}})
	if got := sparse.Prev(mustTime(t, "2027-01-31T00:00:00Z")); !got.Equal(mustTime(t, "2026-02-28T23:59:00Z")) {
		t.Errorf("prev of a sparse schedule: %s", got)
	}
}

// TestDefaults: R11's tolerance and timebox.
func TestDefaults(t *testing.T) {
	for _, c := range []struct{ spacing, want time.Duration }{
		{time.Hour, 5 * time.Second}, {50 * time.Second, 5 * time.Second}, {30 * time.Second, 3 * time.Second},
		{time.Second, 100 * time.Millisecond}, {0, 5 * time.Second},
	} {
		if got := schedule.DefaultTolerance(c.spacing); got != c.want {
			t.Errorf("tolerance for %s: %s, want %s", c.spacing, got, c.want)
		}
	}
	from := mustTime(t, "2026-03-01T00:00:00Z")
	for _, c := range []struct {
		spec schedule.Spec
		want time.Duration
	}{
		{schedule.Spec{Cron: []string{"0 9 * * MON-FRI"}}, 12 * time.Hour},
		{schedule.Spec{Cron: []string{"0 9,17 * * *"}}, 4 * time.Hour},
		{schedule.Spec{Cron: []string{"*/3 * * * * *"}}, 1500 * time.Millisecond},
		// On the spring-forward night 02:30 fires at 03:30, two hours before 05:30.
		{schedule.Spec{Cron: []string{"30 2,5 * * *"}, Timezone: "America/New_York"}, time.Hour},
		{schedule.Spec{Cron: []string{"0 9 * * *"}, MaxRuns: 1}, time.Hour},
		{schedule.Spec{Cron: []string{"0 9 * * *"}, EndAt: mustTime(t, "2026-03-01T12:00:00Z")}, time.Hour},
		{schedule.Spec{At: []time.Time{from.Add(time.Hour), from.Add(3 * time.Hour), from.Add(10 * time.Hour)}}, time.Hour},
	} {
		if got := compile(t, c.spec).DefaultTimebox(from); got != c.want {
			t.Errorf("timebox of %+v: %s, want %s", c.spec, got, c.want)
		}
	}
}

// TestJitter: in [0, jitter), the same for the same task and slot, and
// spread over the range.
func TestJitter(t *testing.T) {
	a := [16]byte{1, 2, 3}
	b := [16]byte{4, 5, 6}
	slot := mustTime(t, "2026-03-02T09:00:00Z")
	const j = 10 * time.Minute
	if first, again := schedule.Jitter(a, slot, j), schedule.Jitter(a, slot, j); first != again {
		t.Fatal("jitter differs between calls")
	}
	if schedule.Jitter(a, slot, 0) != 0 {
		t.Fatal("no jitter configured")
	}
	seen := map[time.Duration]bool{}
	var lo, hi int
	for i := range 1000 {
		for _, id := range [][16]byte{a, b} {
			d := schedule.Jitter(id, slot.Add(time.Duration(i)*time.Hour), j)
			if d < 0 || d >= j || d%time.Millisecond != 0 {
				t.Fatalf("jitter %s outside [0, %s) or not whole ms", d, j)
			}
			seen[d] = true
			if d < j/2 {
				lo++
			} else {
				hi++
			}
		}
	}
	if len(seen) < 1900 || lo < 900 || hi < 900 {
		t.Errorf("poorly spread: %d distinct, %d low, %d high", len(seen), lo, hi)
	}
	if d := schedule.Jitter(a, slot, 500*time.Microsecond); d < 0 || d >= 500*time.Microsecond {
		t.Errorf("sub-millisecond jitter %s", d)
	}
	// A golden value: a change of hash would move every task's slots.
	if got := schedule.Jitter([16]byte{0x0f, 0x6c}, slot, time.Hour); got != goldenJitter {
		t.Errorf("jitter changed: %s, was %s", got, goldenJitter)
	}
}

const goldenJitter = 31*time.Minute + 3993*time.Millisecond

// TestLive: a schedule with no slot left after now is rejected at create,
// naming the field to blame.
func TestLive(t *testing.T) {
	now := mustTime(t, "2026-03-02T10:00:00Z")
	for _, c := range []struct {
		spec  schedule.Spec
		field string
	}{
		{schedule.Spec{At: []time.Time{now.Add(-time.Hour), now}}, "at"},
		{schedule.Spec{At: []time.Time{now.Add(time.Hour)}, StartAt: now.Add(2 * time.Hour)}, "at"},
		{schedule.Spec{Cron: []string{"@daily"}, EndAt: now.Add(-time.Hour)}, "end_at"},
		{schedule.Spec{Cron: []string{"0 0 1 1 *"}, EndAt: now.Add(24 * time.Hour)}, "end_at"},
		{schedule.Spec{Cron: []string{"0 0 6 9 *"}, Timezone: "America/Santiago", DSTGap: "skip", StartAt: mustTime(t, "2026-09-06T12:00:00Z"), EndAt: mustTime(t, "2026-09-06T23:00:00Z")}, "end_at"},
	} {
		err := compile(t, c.spec).Live(now)
		var se *schedule.Error
		if !errors.As(err, &se) || se.Field != c.field {
			t.Errorf("%+v: %v, want a rejection of %s", c.spec, err, c.field)
		}
	}
	for _, spec := range []schedule.Spec{
		{At: []time.Time{now.Add(-time.Hour), now.Add(time.Second)}},
		{Cron: []string{"0 0 29 2 *"}},
		{Cron: []string{"@hourly"}, EndAt: now.Add(time.Hour)},
	} {
		if err := compile(t, spec).Live(now); err != nil {
			t.Errorf("%+v: %v", spec, err)
		}
	}
}
