package rules

import (
	"strconv"
	"sync"
	"time"

	"github.com/cronactor/cronactor/actors/task/schedule"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Schedule says when an interval task falls due next (R1, R8). Cron and at
// tasks are compiled by package schedule instead (R10); see Compiled.
type Schedule interface {
	// Next is the first due time after a tick at t (R1: the tick time, not
	// the old due time, so missed slots merge into one run).
	Next(t time.Time) time.Time
	// Missed counts the due times skipped between due and t (R8).
	Missed(due, t time.Time) int
}

// Every is an interval schedule.
type Every time.Duration

// Next implements Schedule.
func (e Every) Next(t time.Time) time.Time { return t.Add(time.Duration(e)) }

// Missed implements Schedule: whole intervals between due and t.
func (e Every) Missed(due, t time.Time) int {
	if e <= 0 || !t.After(due) {
		return 0
	}
	return int(t.Sub(due) / time.Duration(e))
}

// Compile turns an interval schedule into its Schedule.
func Compile(s events.Schedule) Schedule { return Every(s.Interval) }

// ScheduleSpec is a cron or at task's schedule and window in the form
// package schedule compiles.
func ScheduleSpec(s events.Schedule, w events.Window) schedule.Spec {
	return schedule.Spec{Cron: s.Cron, At: s.At, Timezone: s.Timezone, DSTGap: s.DSTGap, DSTOverlap: s.DSTOverlap, Exclude: s.Exclude,
		StartAt: w.Start(), EndAt: w.End(), MaxRuns: w.MaxRuns}
}

// compiledCache memoizes compiled schedules by their written form: a
// compiled schedule is immutable and a pure function of that form, so the
// cache changes no decision, only how often an expression is parsed. It is
// shared by every scheduler of the process and bounded (cacheLimit), so
// it is memory, not state: docs/embedding.md says so to embedders.
var compiledCache = struct {
	sync.Mutex
	m map[string]*schedule.Schedule
}{m: map[string]*schedule.Schedule{}}

// cacheLimit bounds compiledCache; a form that finds it full empties it
// first, so the forms in use come back and one long gone does not keep
// its place for ever.
const cacheLimit = 4096

// Compiled compiles a cron or at spec's schedule with its window. A
// rejection is a *FieldError naming the field (and the position inside an
// expression: "cron: field 2 (hour): 24 is above 23").
//
// Every tick of a cron or at task asks for its schedule, so the lookup
// builds its key on the stack and allocates nothing when the schedule is
// cached.
func Compiled(s Spec) (*schedule.Schedule, error) {
	var buf [256]byte
	key := compiledKey(buf[:0], &s)
	compiledCache.Lock()
	c, ok := compiledCache.m[string(key)]
	compiledCache.Unlock()
	if ok {
		return c, nil
	}
	c, err := schedule.Compile(ScheduleSpec(s.Schedule, s.Window))
	if err != nil {
		return nil, fieldError(err)
	}
	compiledCache.Lock()
	if len(compiledCache.m) >= cacheLimit {
		clear(compiledCache.m)
	}
	compiledCache.m[string(key)] = c
	compiledCache.Unlock()
	return c, nil
}

// compiledKey appends the written form of s's schedule and window that
// Compiled caches by: every field the compiled schedule depends on, strings
// quoted and lists counted, so that different forms never share a key.
func compiledKey(b []byte, s *Spec) []byte {
	sc, w := &s.Schedule, &s.Window
	b = strconv.AppendInt(b, int64(len(sc.Cron)), 10)
	for _, c := range sc.Cron {
		b = strconv.AppendQuote(append(b, ' '), c)
	}
	b = strconv.AppendInt(append(b, '|'), int64(len(sc.At)), 10)
	for _, t := range sc.At {
		b = strconv.AppendInt(append(b, ' '), t.UnixNano(), 10)
	}
	b = strconv.AppendQuote(append(b, '|'), sc.Timezone)
	b = strconv.AppendQuote(append(b, '|'), sc.DSTGap)
	b = strconv.AppendQuote(append(b, '|'), sc.DSTOverlap)
	b = strconv.AppendInt(append(b, '|'), int64(len(sc.Exclude)), 10)
	for _, x := range sc.Exclude {
		b = strconv.AppendQuote(append(b, ' '), x)
	}
	b = strconv.AppendInt(append(b, '|'), w.Start().UnixNano(), 10)
	b = strconv.AppendInt(append(b, '|'), w.End().UnixNano(), 10)
	return strconv.AppendInt(append(b, '|'), int64(w.MaxRuns), 10)
}

// fieldError turns the schedule engine's rejection into the rules' one.
func fieldError(err error) error {
	if se, ok := err.(*schedule.Error); ok {
		return &FieldError{Field: se.Field, Message: se.Message}
	}
	return err
}

// jittered is a slot moved by the task's jitter (R17), and the slot to
// record beside it when they differ.
func jittered(id uuid.UUID, slot time.Time, jitter time.Duration) (time.Time, *time.Time) {
	j := schedule.Jitter(id, slot, jitter)
	if j == 0 || slot.IsZero() {
		return slot, nil
	}
	return slot.Add(j), events.TimePtr(slot)
}

// dueSpacing is R11's spacing of slot next after slot prev, measured
// between the instants they fall due (each moved by its jitter, R17), so
// that jitter never makes R3 drop a run: with no jitter, next - prev.
func dueSpacing(id uuid.UUID, jitter time.Duration, prev, next time.Time) time.Duration {
	return next.Add(schedule.Jitter(id, next, jitter)).Sub(prev.Add(schedule.Jitter(id, prev, jitter)))
}

// spacingSlots is how many upcoming slots R11's defaults look at.
const spacingSlots = 1000

// shortestSpacing is what R11's defaults need of a cron or at schedule:
// the shortest spacing among its next 1,000 slots after from (within
// max_runs); zero when fewer than two are left.
func shortestSpacing(c *schedule.Schedule, from time.Time) time.Duration {
	n := spacingSlots
	if m := c.MaxRuns(); m > 0 {
		n = min(n, m)
	}
	var prev time.Time
	var shortest time.Duration
	for t := range c.Slots(from) {
		if n == 0 {
			break
		}
		n--
		if d := t.Sub(prev); !prev.IsZero() && (shortest == 0 || d < shortest) {
			shortest = d
		}
		prev = t
	}
	return shortest
}

// Upcoming is the next n slots of a task strictly after after, in the
// task's zone, without jitter, capped by the runs max_runs leaves it;
// none once it is finished.
func Upcoming(s State, after time.Time, n int) ([]time.Time, error) {
	if s.Status == StatusFinished || s.Status == StatusDeleted || n <= 0 {
		return nil, nil
	}
	left := -1
	if m := s.Spec.Window.MaxRuns; m > 0 {
		left = max(m-s.Scheduled, 0)
		n = min(n, left)
	}
	var out []time.Time
	if s.Spec.Schedule.IsInterval() {
		// The interval's slots: nextRun's slot, then every interval after it.
		iv := s.Interval()
		t := s.NextSlot
		for len(out) < n && iv > 0 && !t.IsZero() {
			if end := s.Spec.Window.End(); !end.IsZero() && t.After(end) {
				break
			}
			if t.After(after) {
				out = append(out, t.UTC())
			}
			t = t.Add(iv)
		}
		return out, nil
	}
	c, err := Compiled(s.Spec)
	if err != nil {
		return nil, err
	}
	// The slot nextRun stands for may lie at or before after (due, not yet
	// ticked): it is still to come.
	from := after
	if !s.NextSlot.IsZero() && !s.NextSlot.After(after) {
		out = append(out, s.NextSlot.In(c.Location()))
		from = s.NextSlot
	}
	return append(out, c.Upcoming(from, n-len(out))...), nil
}
