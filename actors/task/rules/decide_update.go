package rules

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/cronactor/cronactor/events"
)

// decideUpdate applies the fields an Update sets to the current spec.
func decideUpdate(s State, c Update, now time.Time) ([]events.Event, error) {
	if s.Status == StatusDeleted {
		return nil, ErrTaskDeleted
	}
	if c.PayloadKind != "" && c.PayloadKind != s.Spec.Kind {
		return nil, &FieldError{"payload", fmt.Sprintf("was checked for kind %q, but the task is now of kind %q (it was created again); send the update again", c.PayloadKind, s.Spec.Kind)}
	}
	spec := s.Spec
	spec.ToleranceSet = true
	kinds := 0
	for _, set := range []bool{c.Interval != nil, c.Cron != nil, c.At != nil} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		return nil, &FieldError{"schedule", "give at most one of interval, cron and at"}
	}
	old := s.Spec.Schedule
	switch {
	case c.Interval != nil:
		spec.Schedule = events.Schedule{Interval: events.Duration(*c.Interval)}
	case c.Cron != nil:
		spec.Schedule = events.Schedule{Cron: slices.Clone(*c.Cron), Timezone: old.Timezone}
		if len(old.Cron) > 0 {
			spec.Schedule.DSTGap, spec.Schedule.DSTOverlap, spec.Schedule.Exclude = old.DSTGap, old.DSTOverlap, old.Exclude
		}
	case c.At != nil:
		spec.Schedule = events.Schedule{At: slices.Clone(*c.At), Timezone: old.Timezone}
	}
	if c.Timezone != nil {
		spec.Schedule.Timezone = *c.Timezone
	}
	if c.DSTGap != nil {
		spec.Schedule.DSTGap = *c.DSTGap
	}
	if c.DSTOverlap != nil {
		spec.Schedule.DSTOverlap = *c.DSTOverlap
	}
	if c.Exclude != nil {
		spec.Schedule.Exclude = nil
		if len(*c.Exclude) > 0 {
			spec.Schedule.Exclude = slices.Clone(*c.Exclude)
		}
	}
	if c.StartAt != nil {
		spec.Window.StartAt = events.TimePtr(*c.StartAt)
	}
	if c.EndAt != nil {
		spec.Window.EndAt = events.TimePtr(*c.EndAt)
	}
	if c.MaxRuns != nil {
		spec.Window.MaxRuns = *c.MaxRuns
	}
	if c.Jitter != nil {
		spec.Window.Jitter = events.Duration(*c.Jitter)
	}
	scheduleChanged := !spec.Schedule.Equal(old)
	windowChanged := !spec.Window.Equal(s.Spec.Window)
	kindChanged := spec.Schedule.Kind() != old.Kind()
	// An interval task whose interval alone changed keeps its nextRun (R1
	// as before schedules); any other change of the schedule or its window
	// is a reschedule.
	rescheduled := windowChanged || kindChanged || (scheduleChanged && !spec.Schedule.IsInterval())
	if scheduleChanged {
		// A new schedule takes the default tolerance and timebox for it
		// unless they are given too.
		spec.Tolerance, spec.ToleranceSet, spec.Timebox = 0, false, 0
	}
	if c.Tolerance != nil {
		spec.Tolerance, spec.ToleranceSet = *c.Tolerance, true
	}
	if c.Timebox != nil {
		if *c.Timebox <= 0 {
			return nil, &FieldError{"timebox", fmt.Sprintf("must be positive, got %s", *c.Timebox)}
		}
		spec.Timebox = *c.Timebox
	}
	if c.Payload != nil {
		spec.Payload = c.Payload
	}
	if c.Priority != nil {
		spec.Priority = *c.Priority
	}
	if c.MaxWaiting != nil {
		spec.MaxWaiting = *c.MaxWaiting
	}
	if c.HistoryRetention != nil {
		spec.HistoryRetention = *c.HistoryRetention
	}
	spec.Policy = updatedPolicy(spec.Policy, c)
	if m := spec.Window.MaxRuns; rescheduled && m > 0 && s.Scheduled >= m {
		return nil, &FieldError{"max_runs", fmt.Sprintf("the task has made %d scheduled runs already, got %d", s.Scheduled, m)}
	}
	var err error
	if spec, err = prepare(spec, now, validateSpec); err != nil {
		return nil, err
	}
	next, nextSlot := s.NextRun, s.NextSlot
	if rescheduled {
		from := now // a task that becomes an interval task is first due an interval from now
		if spec.Schedule.IsInterval() {
			from = now.Add(spec.Schedule.Interval.D())
		}
		if next, nextSlot, err = firstSlot(s.ID, spec, from, now); err != nil {
			return nil, err
		}
		if spec.Schedule.IsInterval() && !kindChanged && !s.NextSlot.IsZero() {
			// The interval stays: nextRun stays, unless the window moved it.
			next, nextSlot, err = firstSlot(s.ID, spec, s.NextSlot, now)
			if err != nil {
				return nil, err
			}
		}
	}
	if c.NextRun != nil {
		if msg := TimeProblem(*c.NextRun); msg != "" {
			return nil, &FieldError{"next_run", msg}
		}
		next, nextSlot = c.NextRun.UTC(), c.NextRun.UTC()
	}
	if spec.Schedule.Equal(s.Spec.Schedule) && spec.Window.Equal(s.Spec.Window) && spec.Tolerance == s.Spec.Tolerance &&
		spec.Timebox == s.Spec.Timebox && spec.Priority == s.Spec.Priority && bytes.Equal(spec.Payload, s.Spec.Payload) &&
		next.Equal(s.NextRun) && spec.MaxWaiting == s.Spec.MaxWaiting && samePolicy(spec.Policy, s.Spec.Policy) &&
		spec.HistoryRetention == s.Spec.HistoryRetention {
		return nil, nil
	}
	u := events.TaskUpdated{Payload: spec.Payload, Schedule: spec.Schedule, Window: spec.Window,
		Tolerance: events.Duration(spec.Tolerance), Timebox: events.Duration(spec.Timebox),
		Priority: spec.Priority, NextRun: next, Rescheduled: rescheduled,
		MaxWaiting: spec.MaxWaiting, Policy: spec.Policy, HistoryRetention: events.Duration(spec.HistoryRetention)}
	if !nextSlot.Equal(next) {
		u.NextSlot = events.TimePtr(nextSlot)
	}
	return []events.Event{u}, nil
}

// updatedPolicy is p with the policy fields an Update sets (nil keeps).
func updatedPolicy(p events.Policy, c Update) events.Policy {
	if c.Queue != nil {
		p.Queue = *c.Queue
	}
	if c.Retry != nil {
		r := *c.Retry
		p.Retry = &r
	}
	if c.MissedRunPolicy != nil {
		p.MissedRunPolicy = *c.MissedRunPolicy
	}
	if c.Overlap != nil {
		p.Overlap = *c.Overlap
	}
	if c.PauseAfterFailures != nil {
		p.PauseAfterFailures = *c.PauseAfterFailures
	}
	for _, f := range []struct {
		from *time.Duration
		to   *events.Duration
	}{{c.MissedAfter, &p.MissedAfter}, {c.StartDeadline, &p.StartDeadline}, {c.HeartbeatTimeout, &p.HeartbeatTimeout}} {
		if f.from != nil {
			*f.to = events.Duration(*f.from)
		}
	}
	return p
}
