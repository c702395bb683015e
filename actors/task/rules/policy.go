package rules

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/cronactor/cronactor/events"
)

// Limits of a run policy (R12–R16).
const (
	// MaxAttemptsLimit is the largest retry.max_attempts.
	MaxAttemptsLimit = 100
	// MaxQueueChars is the longest queue name.
	MaxQueueChars = 64
)

// QueueProblem says what is wrong with name as a queue name, or "" when
// nothing is: it must be 1..MaxQueueChars characters of A–Z, a–z, 0–9, "_",
// "." and "-". (A spec's empty queue is not a name: it means
// events.DefaultQueue.)
func QueueProblem(name string) string {
	if name == "" {
		return "must not be empty (leave it out for the default queue)"
	}
	if len(name) > MaxQueueChars {
		return fmt.Sprintf("must be at most %d characters, got %d", MaxQueueChars, len(name))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return fmt.Sprintf("may hold only letters A-Z and a-z, digits, '_', '.' and '-' (%q at byte %d)", rune(c), i)
		}
	}
	return ""
}

// validatePolicy checks a spec's run policy (after its timebox is settled).
// Errors are *FieldError naming the JSON field.
func validatePolicy(s Spec) error {
	p := s.Policy
	if p.Queue != "" {
		if msg := QueueProblem(p.Queue); msg != "" {
			return &FieldError{"queue", msg}
		}
	}
	if err := validateRetry(p.Retry); err != nil {
		return err
	}
	switch p.MissedRunPolicy {
	case "", events.MissedRunOnce, events.MissedSkip:
	default:
		return &FieldError{"missed_run_policy", fmt.Sprintf("must be %q or %q, got %q", events.MissedRunOnce, events.MissedSkip, p.MissedRunPolicy)}
	}
	switch p.Overlap {
	case "", events.OverlapSkip, events.OverlapBufferOne, events.OverlapCancelOther, events.OverlapAllow:
	default:
		return &FieldError{"overlap", fmt.Sprintf("must be %q, %q, %q or %q, got %q", events.OverlapSkip,
			events.OverlapBufferOne, events.OverlapCancelOther, events.OverlapAllow, p.Overlap)}
	}
	if p.PauseAfterFailures < 0 {
		return &FieldError{"pause_after_failures", fmt.Sprintf("must be at least 1 (leave it out: never pause), got %d", p.PauseAfterFailures)}
	}
	if d := p.MissedAfter.D(); d < 0 {
		return &FieldError{"missed_after", fmt.Sprintf("must not be negative (0: one spacing), got %s", d)}
	}
	for _, f := range []struct {
		field string
		d     time.Duration
	}{{"start_deadline", p.StartDeadline.D()}, {"heartbeat_timeout", p.HeartbeatTimeout.D()}} {
		switch {
		case f.d < 0:
			return &FieldError{f.field, fmt.Sprintf("must not be negative (0: none), got %s", f.d)}
		case f.d > s.Timebox:
			return &FieldError{f.field, fmt.Sprintf("must not exceed the timebox (%s), got %s", s.Timebox, f.d)}
		}
	}
	return nil
}

// validateRetry checks R13's policy: max_attempts 1..MaxAttemptsLimit; with
// more than one attempt (or any backoff given) positive backoffs, initial
// no larger than max, and a finite multiplier of at least 1. A policy of
// one attempt may leave the rest out.
func validateRetry(r *events.Retry) error {
	if r == nil {
		return nil
	}
	if r.MaxAttempts < 1 || r.MaxAttempts > MaxAttemptsLimit {
		return &FieldError{"retry.max_attempts", fmt.Sprintf("must be between 1 and %d, got %d", MaxAttemptsLimit, r.MaxAttempts)}
	}
	if r.MaxAttempts == 1 && r.InitialBackoff == 0 && r.MaxBackoff == 0 && r.Multiplier == 0 {
		return nil
	}
	switch {
	case r.InitialBackoff <= 0:
		return &FieldError{"retry.initial_backoff", fmt.Sprintf("must be positive, got %s", r.InitialBackoff)}
	case r.MaxBackoff <= 0:
		return &FieldError{"retry.max_backoff", fmt.Sprintf("must be positive, got %s", r.MaxBackoff)}
	case r.InitialBackoff > r.MaxBackoff:
		return &FieldError{"retry.initial_backoff", fmt.Sprintf("must not exceed max_backoff (%s), got %s", r.MaxBackoff, r.InitialBackoff)}
	case !(r.Multiplier >= 1) || math.IsInf(r.Multiplier, 1):
		return &FieldError{"retry.multiplier", fmt.Sprintf("must be a number of at least 1, got %g", r.Multiplier)}
	}
	return nil
}

// samePolicy reports whether two policies mean the same: an empty queue is
// the default one, an empty missed_run_policy is run_once, and a retry
// policy of one attempt with nothing else set is no retry policy.
func samePolicy(a, b events.Policy) bool {
	norm := func(p events.Policy) events.Policy {
		if p.Queue == events.DefaultQueue {
			p.Queue = ""
		}
		if p.MissedRunPolicy == events.MissedRunOnce {
			p.MissedRunPolicy = ""
		}
		if p.Overlap == events.OverlapSkip {
			p.Overlap = ""
		}
		if r := p.Retry; r != nil && *r == (events.Retry{MaxAttempts: 1}) {
			p.Retry = nil
		}
		return p
	}
	return norm(a).Equal(norm(b))
}

// Backoff is R13's wait before retrying a run that failed at attempt n:
// min(initial_backoff × multiplier^(n-1), max_backoff). It is computed by
// repeated multiplication in float64, so the same inputs give the same
// wait on every platform; no randomness.
func Backoff(r events.Retry, attempt int) time.Duration {
	b, most := float64(r.InitialBackoff.D()), float64(r.MaxBackoff.D())
	for i := 1; i < attempt && b < most; i++ {
		b *= r.Multiplier
	}
	if b >= most {
		return r.MaxBackoff.D()
	}
	return time.Duration(b)
}

// retries reports whether the task's policy retries failed runs at all.
func retries(s State) bool { return s.Spec.Policy.Retry != nil && s.Spec.Policy.Retry.MaxAttempts > 1 }

// retryOf is R13 for run r failing (or forced to end) at now: when the
// retry falls due and the backoff chosen, or why none is made. A task
// without a retry policy says nothing. No retry is made for a run of an
// earlier incarnation, by a deleted or paused task, for an error the
// handler marked not retryable, once the attempts are used up, or when it
// would fall due after the task's next slot (the nextRun in force now; a
// finished task has none, so its last slot's runs are retried as long as
// attempts last).
func retryOf(s State, r Run, fatal bool, now time.Time) (at *time.Time, backoff events.Duration, why string) {
	if !retries(s) {
		return nil, 0, ""
	}
	p := *s.Spec.Policy.Retry
	switch {
	case !s.Current(r):
		return nil, 0, "the task was deleted and created again since this run was enqueued"
	case s.Status == StatusDeleted:
		return nil, 0, "the task is deleted"
	case s.Status == StatusPaused:
		return nil, 0, "the task is paused"
	case fatal:
		return nil, 0, "the handler marked the error as not retryable"
	case r.Attempt >= p.MaxAttempts:
		return nil, 0, fmt.Sprintf("attempt %d of %d", max(r.Attempt, 1), p.MaxAttempts)
	}
	b := Backoff(p, max(r.Attempt, 1))
	due := now.Add(b)
	if !s.NextRun.IsZero() && due.After(s.NextRun) {
		return nil, 0, fmt.Sprintf("retry would fall due at %s, after the next slot at %s",
			due.UTC().Format(time.RFC3339Nano), s.NextRun.UTC().Format(time.RFC3339Nano))
	}
	return &due, events.Duration(b), ""
}

// dueRetries are the pending retries due at or before now, earliest first
// (ties in the order they were promised).
func dueRetries(s *State, now time.Time) []PendingRetry {
	var out []PendingRetry
	for _, r := range s.Retries {
		if !r.At.After(now) {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b PendingRetry) int { return a.At.Compare(b.At) })
	return out
}

// retryRun is the RunEnqueued that makes pending retry p (R13): a new run
// of the failed run's slot, due at its RetryAt, with the next attempt. The
// task's nextRun is written as it stands: a retry does not move it.
func retryRun(s *State, p PendingRetry) events.RunEnqueued {
	n := s.Runs + 1
	of := p.Of
	e := events.RunEnqueued{RunID: events.RunID(s.ID, n), Run: n, Due: p.At, Slot: p.Slot, Spacing: events.Duration(p.Spacing),
		Priority: s.Spec.Priority, Attempt: p.Attempt, RetryOf: &of}
	return asItStands(s, e)
}

// asItStands writes the task's nextRun as it stands into a run that does
// not move it (a retry, a manual trigger).
func asItStands(s *State, e events.RunEnqueued) events.RunEnqueued {
	e.NextRun, e.NextSpacing = s.NextRun, events.Duration(s.NextSpacing)
	if !s.NextSlot.IsZero() && !s.NextSlot.Equal(s.NextRun) {
		e.NextSlot = events.TimePtr(s.NextSlot)
	}
	return e
}

// missedLimit is R14's missed_after for the slot nextRun stands for: the
// task's, or one spacing — the interval; for cron and at the slot's
// spacing, or when it has none recorded (the first slot, a reschedule) the
// time from the slot before it, or else to the slot after it. False when no
// spacing can be found (a single instant): such a slot is never missed by
// default.
func missedLimit(s *State) (time.Duration, bool) {
	if d := s.Spec.Policy.MissedAfter.D(); d > 0 {
		return d, true
	}
	if s.Spec.Schedule.IsInterval() {
		return s.Interval(), s.Interval() > 0
	}
	if s.NextSpacing > 0 {
		return s.NextSpacing, true
	}
	c, err := Compiled(s.Spec)
	if err != nil {
		return 0, false
	}
	slot, j := s.NextSlot, s.Spec.Window.Jitter.D()
	if slot.IsZero() {
		slot = s.NextRun
	}
	if p := c.Prev(slot); !p.IsZero() {
		return dueSpacing(s.ID, j, p, slot), true
	}
	if n := c.Next(slot); !n.IsZero() {
		return dueSpacing(s.ID, j, slot, n), true
	}
	return 0, false
}
