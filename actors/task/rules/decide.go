package rules

import (
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Decide answers cmd at time now: the events to record (none when nothing
// changes) or a rejection. It is pure: same input, same output.
//
// The commands of every run (Tick, RequestStart, Complete) are decided on
// s through small stack frames, by functions that take it by pointer: a
// task actor decides on a goroutine that starts with a small stack, and
// frames that each hold copies of the whole State made it grow (and copy
// itself) for every decision (docs/performance.md). The other commands go
// through decide.
func Decide(s State, cmd Command, now time.Time) ([]events.Event, error) {
	if _, ok := cmd.(Create); !ok && !s.Exists() {
		return nil, ErrNotCreated
	}
	switch c := cmd.(type) {
	case Tick:
		if len(s.Backfill) > 0 {
			before := s
			return withBackfill(before, decideTick(&s, now), now), nil
		}
		return decideTick(&s, now), nil
	case RequestStart:
		if len(s.Backfill) > 0 {
			// A run that leaves the queue (it starts or is dropped) makes
			// room; a run held (overlap buffer_one) records nothing and
			// makes none.
			out, err := decideStart(&s, c, now)
			if err != nil || len(out) == 0 {
				return out, err
			}
			return withBackfill(s, out, now), nil
		}
		return decideStart(&s, c, now)
	case Complete:
		return decideComplete(&s, c)
	}
	return decide(&s, cmd, now)
}

// decideComplete records the outcome of a started run that succeeded.
func decideComplete(s *State, c Complete) ([]events.Event, error) {
	r, err := startedRun(s, c.RunID)
	if err != nil {
		return nil, err
	}
	return []events.Event{events.RunCompleted{RunID: c.RunID, Run: r.Number, Checkpoint: c.Checkpoint}}, nil
}

// decide is Decide for the commands other than those of every run.
func decide(sp *State, cmd Command, now time.Time) ([]events.Event, error) {
	s := *sp
	if v := ifVersion(cmd); v != nil && *v != s.Version {
		return nil, &VersionMismatchError{Expected: *v, Actual: s.Version}
	}
	switch c := cmd.(type) {
	case Create:
		return decideCreate(s, c, now)
	case Update:
		return decideUpdate(s, c, now)
	case Pause:
		switch s.Status {
		case StatusDeleted:
			return nil, ErrTaskDeleted
		case StatusPaused, StatusFinished:
			return nil, nil
		}
		return []events.Event{events.TaskPaused{}}, nil
	case Resume:
		out, err := decideResume(s, now)
		if err != nil || len(out) == 0 {
			return out, err
		}
		// The backfill slots waiting get their runs as room allows.
		return withBackfill(s, out, now), nil
	case Delete:
		if s.Status == StatusDeleted {
			return nil, nil
		}
		return []events.Event{events.TaskDeleted{Reason: c.Reason}}, nil
	case Fail:
		r, err := startedRun(&s, c.RunID)
		if err != nil {
			return nil, err
		}
		f := events.RunFailed{RunID: c.RunID, Run: r.Number, Error: c.Error, Checkpoint: c.Checkpoint, Fatal: c.Fatal}
		f.RetryAt, f.Backoff, f.NoRetry = retryOf(s, r, c.Fatal, now)
		return pauseAfterFailures(&s, r, f.RetryAt != nil, f), nil
	case Trigger:
		return decideTrigger(s, now)
	case Backfill:
		return decideBackfill(s, c, now)
	case Heartbeat:
		// Heartbeats are not recorded (too frequent): the actor keeps the
		// time of a run's last one (R16). Only a running run heartbeats.
		_, err := startedRun(&s, c.RunID)
		return nil, err
	case SaveCheckpoint:
		r, err := startedRun(&s, c.RunID)
		if err != nil {
			return nil, err
		}
		if len(c.Checkpoint) == 0 || string(c.Checkpoint) == "null" {
			return nil, ErrEmptyCheckpoint
		}
		return []events.Event{events.CheckpointSaved{RunID: c.RunID, Run: r.Number, Checkpoint: c.Checkpoint}}, nil
	case ForceEnd:
		return decideForceEnd(s, c, now)
	case Compact:
		return decideCompact(s, c)
	}
	return nil, fmt.Errorf("%w: %T", ErrUnknownCommand, cmd)
}

// ifVersion is a command's expected version, if it has one.
func ifVersion(cmd Command) *uint64 {
	switch c := cmd.(type) {
	case Update:
		return c.IfVersion
	case Pause:
		return c.IfVersion
	case Resume:
		return c.IfVersion
	case Delete:
		return c.IfVersion
	}
	return nil
}

// firstSlot is a task's first nextRun (R10), with jitter, and the slot it
// stands for: for an interval task from (its first_run) or start_at when
// that is later; for cron and at the first slot strictly after now (at or
// after start_at when that is later).
func firstSlot(id uuid.UUID, spec Spec, from, now time.Time) (time.Time, time.Time, error) {
	var slot time.Time
	if spec.Schedule.IsInterval() {
		slot = from.UTC()
		if st := spec.Window.Start(); st.After(slot) {
			slot = st.UTC()
		}
		if end := spec.Window.End(); !end.IsZero() && slot.After(end) {
			return time.Time{}, time.Time{}, &FieldError{"end_at", "no slot falls between the first run (or start_at) and end_at"}
		}
	} else {
		c, err := Compiled(spec)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		if slot = c.First(now); slot.IsZero() {
			return time.Time{}, time.Time{}, fieldError(c.Live(now))
		}
		slot = slot.UTC()
	}
	next, _ := jittered(id, slot, spec.Window.Jitter.D())
	return next, slot, nil
}

func decideCreate(s State, c Create, now time.Time) ([]events.Event, error) {
	if s.Exists() && s.Status != StatusDeleted {
		return nil, ErrAlreadyExists
	}
	if c.TaskID == uuid.Nil {
		return nil, &FieldError{"id", "is required"}
	}
	spec, err := Prepare(c.Spec, now)
	if err != nil {
		return nil, err
	}
	from := c.FirstRun
	if spec.Schedule.IsInterval() {
		if c.FirstRun.IsZero() {
			return nil, &FieldError{"first_run", "is required"}
		}
		if msg := TimeProblem(c.FirstRun); msg != "" {
			return nil, &FieldError{"first_run", msg}
		}
	} else if !c.FirstRun.IsZero() {
		return nil, &FieldError{"first_run", "applies to interval tasks; a cron or at task starts at its first slot (use start_at)"}
	}
	next, slot, err := firstSlot(c.TaskID, spec, from, now)
	if err != nil {
		return nil, err
	}
	// A new incarnation: the old one's waiting runs get their outcome now,
	// so none of them can start under the new task (R9). Its running runs
	// end on their own; their outcome no longer touches the task.
	var out []events.Event
	for _, r := range s.Waiting() {
		out = append(out, events.RunDropped{RunID: r.ID, Run: r.Number, Reason: events.DropDeleted,
			Detail: "the task was deleted before this run started; it was created again"})
	}
	created := events.TaskCreated{TaskID: c.TaskID, Name: spec.Name, Owner: spec.Owner, Kind: spec.Kind,
		Payload: spec.Payload, Schedule: spec.Schedule, Window: spec.Window, Tolerance: events.Duration(spec.Tolerance),
		Timebox: events.Duration(spec.Timebox), Priority: spec.Priority, NextRun: next,
		MaxWaiting: spec.MaxWaiting, Policy: spec.Policy, HistoryRetention: events.Duration(spec.HistoryRetention)}
	if !slot.Equal(next) {
		created.NextSlot = events.TimePtr(slot)
	}
	return append(out, created), nil
}

// decideResume lets a paused task enqueue again (see Resume).
func decideResume(s State, now time.Time) ([]events.Event, error) {
	switch s.Status {
	case StatusDeleted:
		return nil, ErrTaskDeleted
	case StatusActive, StatusFinished:
		return nil, nil
	}
	next := s.NextRun
	if !next.Before(now) {
		return []events.Event{events.TaskResumed{NextRun: next}}, nil
	}
	res := events.TaskResumed{NextRun: now}
	if !s.Spec.Schedule.IsInterval() {
		// The slots that passed while paused: the latest runs once, at
		// the next tick, and none of them counts as missed.
		if c, err := Compiled(s.Spec); err == nil {
			if last := c.Prev(now.Add(time.Nanosecond)); !last.IsZero() && last.After(s.NextSlot) {
				var spacing time.Duration
				if prev := c.Prev(last); !prev.IsZero() {
					spacing = dueSpacing(s.ID, s.Spec.Window.Jitter.D(), prev, last)
				}
				res.NextSlot, res.NextSpacing = events.TimePtr(last), events.Duration(spacing)
			}
		}
	}
	return []events.Event{res}, nil
}
