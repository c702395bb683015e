package rules

import (
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events"
)

// Backfill asks for one run of each of the task's slots in [From, To)
// (DESIGN §8.4): the slots the schedule would have had there (honouring
// exclude, the zone and the DST policies, as Upcoming does; for an
// interval task the grid of its nextRun's slot), at most
// events.MaxBackfillSlots. The window must lie in the past (To at or
// before now). A paused, finished or deleted task refuses it with
// ErrCannotBackfill; a bad window is a FieldError naming from or to.
//
// Each slot becomes a run with trigger backfill and that slot, enqueued in
// slot order as the task has room (R18): in the decision that records the
// request, then whenever a waiting run leaves the queue (it starts or is
// dropped), at a tick and at a resume; the slots without a run wait in the
// task's state (State.Backfill). A backfill run is like a manual trigger
// (R15) once enqueued: it moves neither nextRun nor lastRun nor max_runs'
// count, is not held to R3's spacing, and obeys overlap (R12) when it asks
// to start. See docs/decisions/0030-backfill.md.
type Backfill struct{ From, To time.Time }

func (Backfill) command() {}

// maxBackfillCount is how far a window's slots are counted to say how many
// a refused window holds: past it the refusal says "at least".
const maxBackfillCount = 100_000

// decideBackfill records a backfill and enqueues the runs the task has
// room for.
func decideBackfill(s State, c Backfill, now time.Time) ([]events.Event, error) {
	switch s.Status {
	case StatusPaused:
		return nil, fmt.Errorf("%w: the task is paused", ErrCannotBackfill)
	case StatusFinished:
		return nil, fmt.Errorf("%w: the task is finished (no slot is left)", ErrCannotBackfill)
	case StatusDeleted:
		return nil, fmt.Errorf("%w: the task is deleted", ErrCannotBackfill)
	}
	if msg := TimeProblem(c.From); msg != "" {
		return nil, &FieldError{"from", msg}
	}
	if msg := TimeProblem(c.To); msg != "" {
		return nil, &FieldError{"to", msg}
	}
	from, to := c.From.UTC(), c.To.UTC()
	if !from.Before(to) {
		return nil, &FieldError{"to", fmt.Sprintf("must be after from (the window is [from, to)), got from %s and to %s",
			from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))}
	}
	if to.After(now) {
		return nil, &FieldError{"to", fmt.Sprintf("is in the future (now is %s): a backfill asks for past slots only",
			now.UTC().Format(time.RFC3339Nano))}
	}
	slots, n, err := BackfillSlots(s, from, to, events.MaxBackfillSlots)
	if err != nil {
		return nil, err
	}
	switch {
	case n == 0:
		return nil, &FieldError{"from", fmt.Sprintf("the task has no slot in [%s, %s)", from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano))}
	case n >= maxBackfillCount:
		return nil, &FieldError{"to", fmt.Sprintf("the window holds at least %d slots, more than the limit of %d: ask for a shorter one",
			n, events.MaxBackfillSlots)}
	case n > events.MaxBackfillSlots:
		return nil, &FieldError{"to", fmt.Sprintf("the window holds %d slots, more than the limit of %d: ask for a shorter one",
			n, events.MaxBackfillSlots)}
	case len(s.Backfill)+n > events.MaxBackfillSlots:
		return nil, &FieldError{"to", fmt.Sprintf("the task has %d backfill slots still waiting; %d more would pass the limit of %d",
			len(s.Backfill), n, events.MaxBackfillSlots)}
	}
	out := []events.Event{events.BackfillRequested{From: from, To: to, Slots: slots}}
	return withBackfill(s, out, now), nil
}

// BackfillSlots is the task's slots in [from, to), in order, UTC: at most
// limit of them, and n, how many the window holds (counted up to
// maxBackfillCount). A cron or at task's are its schedule's (exclude, zone,
// DST policies, start_at and end_at, as Upcoming's; max_runs does not
// apply to past slots); an interval task's are the grid of its nextRun's
// slot, every interval, within start_at and end_at.
func BackfillSlots(s State, from, to time.Time, limit int) (slots []time.Time, n int, err error) {
	add := func(t time.Time) bool {
		n++
		if n <= limit {
			slots = append(slots, t.UTC())
		}
		return n < maxBackfillCount
	}
	if s.Spec.Schedule.IsInterval() {
		iv := s.Interval()
		anchor := s.NextSlot
		if anchor.IsZero() {
			anchor = s.NextRun
		}
		if iv <= 0 || anchor.IsZero() {
			return nil, 0, nil
		}
		if st := s.Spec.Window.Start(); st.After(from) {
			from = st
		}
		if end := s.Spec.Window.End(); !end.IsZero() && end.Before(to) {
			to = end.Add(time.Nanosecond) // end_at may have a slot
		}
		// The first grid point at or after from.
		k := from.Sub(anchor) / iv
		t := anchor.Add(k * iv)
		for t.Before(from) {
			t = t.Add(iv)
		}
		for ; t.Before(to); t = t.Add(iv) {
			if !add(t) {
				break
			}
		}
		return slots, n, nil
	}
	c, err := Compiled(s.Spec)
	if err != nil {
		return nil, 0, err
	}
	for t := range c.Slots(from.Add(-time.Nanosecond)) {
		if !t.Before(to) || !add(t) {
			break
		}
	}
	return slots, n, nil
}

// withBackfill appends to out, the events decided on s, the runs of the
// backfill slots waiting that the task has room for once out is applied.
func withBackfill(s State, out []events.Event, now time.Time) []events.Event {
	if len(s.Backfill) == 0 && !requestsBackfill(out) {
		return out
	}
	meta := events.Metadata{Stream: events.TaskStream(s.ID), Version: s.Version, At: now}
	for _, e := range out {
		s.Apply(meta, e)
	}
	for len(s.Backfill) > 0 && (s.Status == StatusActive || s.Status == StatusFinished) && !s.AtBound() {
		n := s.Runs + 1
		e := asItStands(&s, events.RunEnqueued{RunID: events.RunID(s.ID, n), Run: n, Due: now, Slot: s.Backfill[0],
			Priority: s.Spec.Priority, Attempt: 1, Trigger: events.TriggerBackfill})
		out = append(out, e)
		s.Apply(meta, e)
	}
	return out
}

func requestsBackfill(out []events.Event) bool {
	for _, e := range out {
		if _, ok := e.(events.BackfillRequested); ok {
			return true
		}
	}
	return false
}
