package rules

import (
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events"
)

// decideTick is R1 and R8 for an interval task, R10 for cron and at: a
// due, active task gets one run for the slot nextRun stands for, and
// nextRun moves to the tick time plus the interval (the first slot after
// the tick), plus its jitter (R17); skipped whole intervals (slots passed
// over) are counted. Missed intervals are counted only from when the task
// existed: a first_run before its creation reports none from before it.
// When no slot is left (end_at, max_runs, the last of an at list), the run
// is enqueued with TaskFinished in the same decision. R18 comes first, for
// every kind: a task at its bound of waiting runs enqueues nothing and
// keeps its nextRun (see backlogReason).
//
// Before the slot, the retries due (R13) are enqueued, earliest first, as
// far as the bound lets them (a retry due while the task is at its bound
// waits for room); a finished task still makes its retries. Under
// missed_run_policy skip (R14), a slot found later than it fell due +
// missed_after gets no run: SlotsMissed moves nextRun on (see
// decideMissed), whether or not the task is at its bound.
func decideTick(s *State, now time.Time) []events.Event {
	if s.Status != StatusActive && s.Status != StatusFinished {
		return nil
	}
	var out []events.Event
	if len(s.Retries) > 0 {
		out = enqueueRetries(s, now)
	}
	if s.Status != StatusActive || s.NextRun.After(now) {
		return out
	}
	if s.Spec.Policy.MissedRunPolicy == events.MissedSkip {
		if limit, ok := missedLimit(s); ok && now.After(s.NextRun.Add(limit)) {
			return append(out, decideMissed(s, now, limit)...)
		}
	}
	if s.AtBound() {
		return out
	}
	return append(out, decideSlot(s, now)...)
}

// enqueueRetries enqueues the retries due (R13), earliest first, as far as
// the bound lets them (a retry due while the task is at its bound waits for
// room), evolving s by each.
func enqueueRetries(s *State, now time.Time) []events.Event {
	var out []events.Event
	for _, p := range dueRetries(s, now) {
		if s.AtBound() {
			break
		}
		e := retryRun(s, p)
		out = append(out, e)
		*s = Evolve(*s, events.Metadata{Stream: events.TaskStream(s.ID), Version: s.Version, At: now}, e)
	}
	return out
}

// decideSlot enqueues the run of the slot nextRun stands for (R1, R8, R10,
// R18's backlog reason), and finishes the task when no slot is left.
func decideSlot(s *State, now time.Time) []events.Event {
	n := s.Runs + 1
	slot := s.NextSlot
	if slot.IsZero() {
		slot = s.NextRun
	}
	enq := events.RunEnqueued{RunID: events.RunID(s.ID, n), Run: n, Due: s.NextRun, Slot: slot, Priority: s.Spec.Priority,
		Reason: backlogReason(s, now)}
	var next time.Time
	finished := ""
	if s.Spec.Schedule.IsInterval() {
		sched := Compile(s.Spec.Schedule)
		next, enq.Missed = sched.Next(now), sched.Missed(missedFrom(s), now)
		switch end, m := s.Spec.Window.End(), s.Spec.Window.MaxRuns; {
		case m > 0 && s.Scheduled+1 >= m:
			finished = fmt.Sprintf("max_runs %d reached", m)
		case !end.IsZero() && next.After(end):
			finished = "no slot is left before end_at " + end.UTC().Format(time.RFC3339)
		}
	} else {
		c, err := Compiled(s.Spec)
		if err != nil {
			// A recorded schedule that no longer compiles (a zone gone from
			// the tz database): the task stays due and enqueues nothing.
			return nil
		}
		st := c.Advance(slot, now, s.Scheduled+1)
		enq.Spacing, enq.Missed, next = events.Duration(s.NextSpacing), st.Missed, st.Next
		switch m := s.Spec.Window.MaxRuns; {
		case st.Finished && m > 0 && s.Scheduled+1 >= m:
			finished = fmt.Sprintf("max_runs %d reached", m)
		case st.Finished:
			finished = noSlotLeft(s)
		default:
			enq.NextSpacing = events.Duration(dueSpacing(s.ID, s.Spec.Window.Jitter.D(), st.Prev, st.Next))
		}
	}
	if finished != "" {
		return []events.Event{enq, events.TaskFinished{Runs: s.Scheduled + 1, Reason: finished}}
	}
	next = next.UTC()
	enq.NextRun, enq.NextSlot = jittered(s.ID, next, s.Spec.Window.Jitter.D())
	return []events.Event{enq}
}

// missedFrom is when an interval task's missed intervals are counted from:
// its nextRun, or its creation when that is later.
func missedFrom(s *State) time.Time {
	if s.CreatedAt.After(s.NextRun) {
		return s.CreatedAt
	}
	return s.NextRun
}

// noSlotLeft is the reason a cron or at task finishes without max_runs.
func noSlotLeft(s *State) string {
	r := "no slot is left"
	if end := s.Spec.Window.End(); !end.IsZero() {
		r += " before end_at " + end.UTC().Format(time.RFC3339)
	}
	return r
}

// decideMissed is R14's skip: the slot nextRun stands for was found by a
// tick later than it fell due + limit (missed_after), so no run is made
// for it. nextRun moves to the first slot after the tick (an interval
// task: the tick's time + interval), with its jitter, and the slot counts
// as missed with those passed over (R8's count + 1). No run is made, so
// max_runs counts nothing; a task with no slot left finishes.
func decideMissed(s *State, now time.Time, limit time.Duration) []events.Event {
	slot := s.NextSlot
	if slot.IsZero() {
		slot = s.NextRun
	}
	ev := events.SlotsMissed{Due: s.NextRun, Slot: slot, MissedAfter: events.Duration(limit)}
	var next time.Time
	finished := ""
	if s.Spec.Schedule.IsInterval() {
		sched := Compile(s.Spec.Schedule)
		next, ev.Missed = sched.Next(now), sched.Missed(missedFrom(s), now)+1
		if end := s.Spec.Window.End(); !end.IsZero() && next.After(end) {
			finished = "no slot is left before end_at " + end.UTC().Format(time.RFC3339)
		}
	} else {
		c, err := Compiled(s.Spec)
		if err != nil {
			return nil
		}
		st := c.Advance(slot, now, s.Scheduled)
		ev.Missed, next = st.Missed+1, st.Next
		if st.Finished {
			finished = noSlotLeft(s)
		} else {
			ev.NextSpacing = events.Duration(dueSpacing(s.ID, s.Spec.Window.Jitter.D(), st.Prev, st.Next))
		}
	}
	late := now.Sub(s.NextRun)
	ev.Detail = fmt.Sprintf("found %s after it fell due at %s, later than missed_after %s: no run (missed_run_policy skip); %d missed",
		events.Span(late), s.NextRun.UTC().Format(time.RFC3339Nano), events.Span(limit), ev.Missed)
	if finished != "" {
		return []events.Event{ev, events.TaskFinished{Runs: s.Scheduled, Reason: finished}}
	}
	ev.NextRun, ev.NextSlot = jittered(s.ID, next.UTC(), s.Spec.Window.Jitter.D())
	return []events.Event{ev}
}

// decideTrigger is R15: one run now, outside the schedule — due now, for a
// slot at now, attempt 1, marked manual. It moves neither nextRun nor the
// count of scheduled runs (nor, once started, lastRun) and is not held to
// R3's spacing; R12 applies when it asks to start. A paused, finished or
// deleted task refuses it, and so does a task at its bound of waiting runs
// (R18): a trigger is an explicit request, better refused with the reason
// than left waiting.
func decideTrigger(s State, now time.Time) ([]events.Event, error) {
	switch s.Status {
	case StatusPaused:
		return nil, fmt.Errorf("%w: the task is paused", ErrCannotTrigger)
	case StatusFinished:
		return nil, fmt.Errorf("%w: the task is finished (no slot is left)", ErrCannotTrigger)
	case StatusDeleted:
		return nil, fmt.Errorf("%w: the task is deleted", ErrCannotTrigger)
	}
	if s.AtBound() {
		b := s.Spec.WaitingBound()
		return nil, fmt.Errorf("%w: the task has %d runs waiting, its max_waiting (%d)", ErrCannotTrigger, b, b)
	}
	n := s.Runs + 1
	e := events.RunEnqueued{RunID: events.RunID(s.ID, n), Run: n, Due: now, Slot: now, Priority: s.Spec.Priority,
		Attempt: 1, Trigger: events.TriggerManual}
	return []events.Event{asItStands(&s, e)}, nil
}

// backlogReason is R18's mark: the run a tick enqueues after the task fell
// due at its bound (it is late: its due time, the nextRun kept meanwhile,
// is before the tick) carries the reason backlog. Its missed count is R8's
// (R10's slots passed over), counted from that kept nextRun.
func backlogReason(s *State, now time.Time) string {
	if s.Backlog && s.NextRun.Before(now) {
		return events.EnqueueBacklog
	}
	return ""
}
