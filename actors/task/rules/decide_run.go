package rules

import (
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// decideStart is R7, R3, R12 and R14's start deadline, checked in that
// order (the first that applies is the reason recorded), so R1–R9 stay
// exactly as written and the newer reasons apply to runs they would start:
// a paused or deleted task drops the run (R7); a scheduled first attempt
// asking before lastRun + spacing - tolerance is dropped as too_soon (R3;
// retries and triggers are not held to it); a run asking while another run
// of the task is running is dropped as overlap (R12, whatever the run:
// slot, retry or trigger); a run asking later than it fell due +
// start_deadline is dropped as too_late (R14: a slot run's due time is its
// slot moved by its jitter, a retry's is its RetryAt, a trigger's the
// trigger's time).
func decideStart(s *State, c RequestStart, now time.Time) ([]events.Event, error) {
	r, ok := s.Run(c.RunID)
	if !ok {
		return nil, ErrUnknownRun
	}
	if r.Started {
		return nil, ErrRunNotWaiting
	}
	drop := events.RunDropped{RunID: r.ID, Run: r.Number}
	if !s.Current(r) {
		// Only in logs written before re-creating dropped the old waiting
		// runs: a run of a deleted incarnation never starts.
		drop.Reason, drop.Detail = events.DropDeleted, "the task was deleted before this run started; it was created again"
		return []events.Event{drop}, nil
	}
	switch s.Status { // a finished task's runs still start (R10)
	case StatusPaused:
		drop.Reason, drop.Detail = events.DropPaused, "the task is paused"
		return []events.Event{drop}, nil
	case StatusDeleted:
		drop.Reason, drop.Detail = events.DropDeleted, "the task is deleted"
		return []events.Event{drop}, nil
	}
	if spacing := s.Spacing(r); r.First() && !s.LastRun.IsZero() && spacing > 0 {
		needed := spacing - s.Spec.Tolerance
		since := now.Sub(s.LastRun)
		if since < needed {
			last := s.LastRun
			word := "interval"
			if !s.Spec.Schedule.IsInterval() {
				word = "spacing"
			}
			drop.Reason = events.DropTooSoon
			drop.Detail = fmt.Sprintf("asked to start %s after the last start; needs ≥ %s (%s %s - tolerance %s)",
				events.Span(since), events.Span(needed), word, events.Span(spacing), events.Span(s.Spec.Tolerance))
			drop.LastRun, drop.SinceLastStart, drop.Needed = &last, events.Duration(since), events.Duration(needed)
			return []events.Event{drop}, nil
		}
	}
	var out []events.Event
	if o, ok := runningRun(s); ok {
		switch s.Spec.Policy.Overlap {
		case events.OverlapAllow:
		case events.OverlapBufferOne:
			if w, ok := s.Run(c.Buffered); ok && !w.Started && w.ID != r.ID {
				drop.Reason = events.DropOverlap
				drop.Detail = fmt.Sprintf("run %d is still running and run %d waits for it already (overlap buffer_one: at most one waits)",
					o.Number, w.Number)
				return []events.Event{drop}, nil
			}
			if dropped, late := tooLate(s, r, drop, now); late {
				return []events.Event{dropped}, nil
			}
			return nil, nil // held: see Buffer
		case events.OverlapCancelOther:
			for _, o := range s.Open {
				if o.Started && s.Current(o) {
					f := events.RunForcedEnd{RunID: o.ID, Run: o.Number, Deadline: o.Deadline, Reason: events.ForcedReplaced,
						Detail:     fmt.Sprintf("run %d asked to start after this one ran %s (overlap cancel_other)", r.Number, events.Span(now.Sub(o.StartedAt))),
						Checkpoint: o.Checkpoint}
					if retries(*s) {
						f.NoRetry = fmt.Sprintf("replaced by run %d", r.Number)
					}
					out = append(out, f)
				}
			}
		default:
			drop.Reason = events.DropOverlap
			left := fmt.Sprintf("its deadline %s away", events.Span(o.Deadline.Sub(now)))
			if !now.Before(o.Deadline) {
				left = fmt.Sprintf("its deadline passed %s before, its forced end not recorded yet", events.Span(now.Sub(o.Deadline)))
			}
			drop.Detail = fmt.Sprintf("run %d is still running: started %s before, %s", o.Number, events.Span(now.Sub(o.StartedAt)), left)
			return []events.Event{drop}, nil
		}
	}
	if dropped, late := tooLate(s, r, drop, now); late {
		return []events.Event{dropped}, nil // a run too late to start replaces nothing
	}
	return append(out, events.RunStarted{RunID: r.ID, Run: r.Number, Deadline: now.Add(s.Spec.Timebox)}), nil
}

// runningRun is the first run of the task's current incarnation that is
// running, if any (R12).
func runningRun(s *State) (Run, bool) {
	for _, o := range s.Open {
		if o.Started && s.Current(o) {
			return o, true
		}
	}
	return Run{}, false
}

// Buffers reports whether run id waits, held by the actor, for the running
// run's outcome (overlap buffer_one): it is waiting, the task's overlap is
// buffer_one and a run of the task is running. Decide answers its
// RequestStart with no event, and Effects with Buffer.
func Buffers(s *State, id uuid.UUID) bool {
	if s.Spec.Policy.Overlap != events.OverlapBufferOne || (s.Status != StatusActive && s.Status != StatusFinished) {
		return false
	}
	r, ok := s.Run(id)
	if !ok || r.Started || !s.Current(r) {
		return false
	}
	_, running := runningRun(s)
	return running
}

// tooLate is R14's start deadline: drop, with reason too_late, when run r
// asks later than it fell due + start_deadline.
func tooLate(s *State, r Run, drop events.RunDropped, now time.Time) (events.RunDropped, bool) {
	if sd := s.Spec.Policy.StartDeadline.D(); sd > 0 && now.After(r.Due.Add(sd)) {
		drop.Reason = events.DropTooLate
		drop.Detail = fmt.Sprintf("asked to start %s after it fell due; start_deadline %s", events.Span(now.Sub(r.Due)), events.Span(sd))
		return drop, true
	}
	return drop, false
}

func startedRun(s *State, id uuid.UUID) (Run, error) {
	r, ok := s.Run(id)
	if !ok {
		return r, ErrUnknownRun
	}
	if !r.Started {
		return r, ErrRunNotStarted
	}
	return r, nil
}

// decideForceEnd is R4 and R9: only a started run whose deadline passed is
// forced to end; it hands on the last checkpoint it saved. R16: a run of a
// task with a heartbeat_timeout whose last heartbeat (c.LastHeartbeat, or
// its start when later) is that long ago is forced to end with reason
// heartbeat_timeout before its deadline. Then R13: the forced end records
// the retry it gets, or why none.
func decideForceEnd(s State, c ForceEnd, now time.Time) ([]events.Event, error) {
	r, err := startedRun(&s, c.RunID)
	if err != nil {
		return nil, err
	}
	var detail string
	switch c.Reason {
	case events.ForcedTimebox:
		if now.Before(r.Deadline) {
			return nil, ErrDeadlineNotDue
		}
		// The run's own timebox (its deadline), not the spec's now: the task
		// may have been updated or created again since the run started.
		tb := r.Deadline.Sub(r.StartedAt)
		detail = fmt.Sprintf("still running at its deadline, %s after it started (timebox %s)", events.Span(tb), events.Span(tb))
	case events.ForcedProcessLost:
		if now.Before(r.Deadline) {
			return nil, ErrDeadlineNotDue
		}
		detail = fmt.Sprintf("the process running it stopped; its deadline %s has passed", r.Deadline.UTC().Format(time.RFC3339))
	case events.ForcedHeartbeat:
		hb := s.Spec.Policy.HeartbeatTimeout.D()
		if hb <= 0 || !s.Current(r) {
			return nil, fmt.Errorf("%w: the task has no heartbeat_timeout", ErrHeartbeatNotDue)
		}
		last := c.LastHeartbeat
		if last.Before(r.StartedAt) {
			last = r.StartedAt
		}
		if now.Before(last.Add(hb)) {
			return nil, fmt.Errorf("%w: the run heartbeated %s ago, within %s", ErrHeartbeatNotDue, now.Sub(last), hb)
		}
		detail = fmt.Sprintf("no heartbeat for %s since it started (heartbeat_timeout %s)", events.Span(now.Sub(last)), events.Span(hb))
		if last.After(r.StartedAt) {
			detail = fmt.Sprintf("no heartbeat for %s (heartbeat_timeout %s); the last came %s after it started",
				events.Span(now.Sub(last)), events.Span(hb), events.Span(last.Sub(r.StartedAt)))
		}
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnknownForceKind, c.Reason)
	}
	f := events.RunForcedEnd{RunID: r.ID, Run: r.Number, Deadline: r.Deadline,
		Reason: c.Reason, Detail: detail, Checkpoint: r.Checkpoint}
	f.RetryAt, f.Backoff, f.NoRetry = retryOf(s, r, false, now)
	return pauseAfterFailures(&s, r, f.RetryAt != nil, f), nil
}

// pauseAfterFailures is ended (the failure or forced end of run r) and,
// when it is the last attempt of a slot that makes the task's
// pause_after_failures consecutive failed slots, the TaskPaused (reason
// failures, with the count) of an active task (DESIGN §8.4). A retry
// promised (retried) leaves the slot's outcome open; a manual trigger is
// no slot.
func pauseAfterFailures(s *State, r Run, retried bool, ended events.Event) []events.Event {
	n := s.Spec.Policy.PauseAfterFailures
	if n < 1 || retried || s.Status != StatusActive || !s.Current(r) || r.Origin != "" || s.Failures+1 < n {
		return []events.Event{ended}
	}
	return []events.Event{ended, events.TaskPaused{Reason: events.PauseFailures, Failures: s.Failures + 1}}
}
