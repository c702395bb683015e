package schedule

import (
	"fmt"
	"iter"
	"slices"
	"time"
)

// Spec is a task's schedule as written: exactly one of Cron and At, and the
// fields that qualify it (docs/schedules.md; the task fields of the HTTP API).
type Spec struct {
	// Cron is one or more cron expressions; the slots are their union.
	Cron []string
	// At is a list of instants (one instant: a one-time task).
	At []time.Time
	// Timezone is the IANA zone cron expressions are read in (default UTC);
	// slots are shown in it.
	Timezone string
	// DSTGap is "shift" (default) or "skip"; DSTOverlap "first" (default),
	// "last" or "both".
	DSTGap, DSTOverlap string
	// StartAt: no slot before it; EndAt: no slot after it (zero: unbounded).
	StartAt, EndAt time.Time
	// MaxRuns is the most scheduled runs the task makes; 0 means no limit.
	MaxRuns int
	// Exclude takes wall times out of a cron schedule: each entry an RFC
	// 3339 date (2026-12-25, the whole day on the zone's calendar) or a
	// cron expression read like Cron. A wall time it matches is no slot —
	// neither run nor missed. It applies to the wall times the expressions
	// name, before the DST policies: excluding 30 2 * * * also drops the
	// 03:30 a shifted 02:30 would fire at.
	Exclude []string
}

// Schedule is a compiled Spec: an immutable, pure function from an instant
// to the slots after it. Safe for concurrent use.
type Schedule struct {
	crons          []*Cron
	at             []time.Time // sorted, without repeats
	loc            *time.Location
	startAt, endAt time.Time
	maxRuns        int
}

// Compile checks spec and compiles it. A rejection is an *Error naming the
// field (and, for cron, the position inside the expression).
func Compile(spec Spec) (*Schedule, error) {
	switch {
	case len(spec.Cron) == 0 && len(spec.At) == 0:
		return nil, &Error{Field: "cron", Message: "a schedule needs cron or at"}
	case len(spec.Cron) > 0 && len(spec.At) > 0:
		return nil, &Error{Field: "at", Message: "give cron or at, not both"}
	}
	loc, err := LoadZone(spec.Timezone)
	if err != nil {
		return nil, err
	}
	gap, err := ParseGap(spec.DSTGap)
	if err != nil {
		return nil, err
	}
	overlap, err := ParseOverlap(spec.DSTOverlap)
	if err != nil {
		return nil, err
	}
	s := &Schedule{loc: loc, startAt: spec.StartAt, endAt: spec.EndAt, maxRuns: spec.MaxRuns}
	for i, text := range spec.Cron {
		c, err := ParseCron(text, loc, gap, overlap)
		if err != nil {
			if len(spec.Cron) > 1 {
				err.(*Error).Field = fmt.Sprintf("cron[%d]", i)
			}
			return nil, err
		}
		s.crons = append(s.crons, c)
	}
	ex, err := parseExclude(spec.Exclude)
	if err != nil {
		return nil, err
	}
	if ex != nil {
		if len(spec.Cron) == 0 {
			return nil, &Error{Field: "exclude", Message: "applies to cron schedules only"}
		}
		covered := true
		for _, c := range s.crons {
			days, all := c.e.coveredBy(ex.exprs)
			c.ex, c.coveredDays = ex, days
			covered = covered && all
		}
		if covered {
			return nil, &Error{Field: "exclude", Message: "excludes every slot of cron"}
		}
	}
	for i, t := range spec.At {
		if t.IsZero() {
			return nil, &Error{Field: "at", Message: fmt.Sprintf("instant %d is empty", i+1)}
		}
		if t.Year() < 1 || t.Year() > 9999 {
			return nil, &Error{Field: "at", Message: fmt.Sprintf("instant %d is outside the years 1–9999", i+1)}
		}
	}
	s.at = slices.Clone(spec.At)
	slices.SortFunc(s.at, func(a, b time.Time) int { return a.Compare(b) })
	s.at = slices.CompactFunc(s.at, func(a, b time.Time) bool { return a.Equal(b) })
	if !s.startAt.IsZero() && !s.endAt.IsZero() && s.endAt.Before(s.startAt) {
		return nil, &Error{Field: "end_at", Message: "is before start_at"}
	}
	if s.maxRuns < 0 {
		return nil, &Error{Field: "max_runs", Message: "must not be negative (0: no limit)"}
	}
	return s, nil
}

// Location is the zone slots are read and shown in.
func (s *Schedule) Location() *time.Location { return s.loc }

// MaxRuns is the most scheduled runs (0: no limit).
func (s *Schedule) MaxRuns() int { return s.maxRuns }

// Once reports a schedule of a single instant (a one-time task).
func (s *Schedule) Once() bool { return len(s.crons) == 0 && len(s.at) == 1 }

// Next is the first slot strictly after after that lies in the window
// [start_at, end_at], in the schedule's zone; the zero time when no slot is
// left (none within Horizon for cron). It does not count runs: see Advance
// for max_runs.
func (s *Schedule) Next(after time.Time) time.Time {
	if !s.startAt.IsZero() && after.Before(s.startAt) {
		after = s.startAt.Add(-time.Nanosecond)
	}
	var best time.Time
	for _, c := range s.crons {
		if t := c.Next(after); !t.IsZero() && (best.IsZero() || t.Before(best)) {
			best = t
		}
	}
	if len(s.at) > 0 {
		i, found := slices.BinarySearchFunc(s.at, after, func(a, t time.Time) int { return a.Compare(t) })
		if found {
			i++
		}
		if i < len(s.at) {
			best = s.at[i]
		}
	}
	if best.IsZero() || (!s.endAt.IsZero() && best.After(s.endAt)) {
		return time.Time{}
	}
	return best.In(s.loc)
}

// Slots yields the slots strictly after after, in order, while they last.
func (s *Schedule) Slots(after time.Time) iter.Seq[time.Time] {
	return func(yield func(time.Time) bool) {
		for t := s.Next(after); !t.IsZero(); t = s.Next(t) {
			if !yield(t) {
				return
			}
		}
	}
}

// Upcoming is the next n slots strictly after after (fewer when the
// schedule ends), ignoring max_runs.
func (s *Schedule) Upcoming(after time.Time, n int) []time.Time {
	out := make([]time.Time, 0, min(n, 1000))
	for t := range s.Slots(after) {
		if len(out) >= n {
			break
		}
		out = append(out, t)
	}
	return out
}

// Prev is the last slot strictly before before, or the zero time when there
// is none (within Horizon, inside the window).
func (s *Schedule) Prev(before time.Time) time.Time {
	// Find lo with a slot in (lo, before), going back in doubling steps;
	// hi has no slot in (hi, before).
	hi := before
	var lo time.Time
	for d := time.Second; ; d *= 2 {
		a := before.Add(-d)
		if n := s.Next(a); !n.IsZero() && n.Before(before) {
			lo = a
			break
		}
		hi = a
		if d > Horizon || (!s.startAt.IsZero() && a.Before(s.startAt)) {
			return time.Time{}
		}
	}
	for {
		p := s.Next(lo)
		q := s.Next(p)
		if q.IsZero() || !q.Before(before) {
			return p
		}
		// More than one slot in (lo, before): narrow the search.
		lo = p
		if mid := lo.Add(hi.Sub(lo) / 2); mid.After(lo) {
			if n := s.Next(mid); !n.IsZero() && n.Before(before) {
				lo = mid
			} else {
				hi = mid
			}
		}
	}
}

// Spacing is the time between slot and the slot before it (R11), or 0 when
// it is the first.
func (s *Schedule) Spacing(slot time.Time) time.Duration {
	p := s.Prev(slot)
	if p.IsZero() {
		return 0
	}
	return slot.Sub(p)
}

// MaxMissed bounds the count of missed slots of a list of several cron
// expressions (whose slots may coincide, so they are counted one by one):
// after a long downtime of such a list that fires every second, counting
// stops there. A single expression and an at list are counted exactly.
const MaxMissed = 1 << 20

// Step is what a tick that finds a slot due does to the schedule (R10).
type Step struct {
	// Next is the first slot strictly after the tick: the task's new
	// nextRun. Zero when Finished.
	Next time.Time
	// Prev is the last slot at or before the tick (the slot due, or the
	// last one passed over): Next's predecessor, so Next's spacing is
	// Next - Prev.
	Prev time.Time
	// Missed counts the slots passed over: after the slot due, at or before
	// the tick.
	Missed int
	// Finished: no slot is left after this run, or it is the max_runs-th.
	Finished bool
}

// Advance is R10's step: on a tick at or after slot, one run is made for
// slot; runs is the number of scheduled runs the task has made including
// this one (for max_runs).
func (s *Schedule) Advance(slot, tick time.Time, runs int) Step {
	st := Step{Prev: slot, Next: s.Next(slot)}
	if !st.Next.IsZero() && !st.Next.After(tick) {
		st.Missed = s.Count(slot, tick)
		st.Next = s.Next(tick)
		if p := s.Prev(tick.Add(time.Nanosecond)); !p.IsZero() {
			st.Prev = p
		}
	}
	if st.Next.IsZero() || (s.maxRuns > 0 && runs >= s.maxRuns) {
		st.Next, st.Finished = time.Time{}, true
	}
	return st
}

// First is a new task's first slot: the first strictly after created (at or
// after start_at when that is later); zero when the schedule has none.
func (s *Schedule) First(created time.Time) time.Time { return s.Next(created) }

// Live checks, at a task's creation or update, that the schedule has a slot
// strictly after now — a task with none would finish before it began. The
// rejection names the field to blame: at (every instant has passed), end_at
// (passed, or no slot falls before it), or cron (no slot within Horizon).
func (s *Schedule) Live(now time.Time) error {
	if !s.Next(now).IsZero() {
		return nil
	}
	switch {
	case len(s.at) > 0 && !s.at[len(s.at)-1].After(now):
		return &Error{Field: "at", Message: "every instant is in the past"}
	case !s.endAt.IsZero() && !s.endAt.After(now):
		return &Error{Field: "end_at", Message: "is in the past: no slot is left"}
	case !s.endAt.IsZero():
		return &Error{Field: "end_at", Message: "no slot falls between start_at (or now) and end_at"}
	case len(s.at) > 0:
		return &Error{Field: "at", Message: "no instant falls at or after start_at"}
	case s.crons[0].ex != nil && !s.withoutExclude().Next(now).IsZero():
		return &Error{Field: "exclude", Message: "excludes every slot left"}
	}
	return &Error{Field: "cron", Message: fmt.Sprintf("has no slot in the %d years after now", int(Horizon/(366*24*time.Hour)))}
}

// withoutExclude is s with its exclude list dropped.
func (s *Schedule) withoutExclude() *Schedule {
	t := *s
	t.crons = make([]*Cron, len(s.crons))
	for i, c := range s.crons {
		cc := *c
		cc.ex = nil
		t.crons[i] = &cc
	}
	return &t
}
