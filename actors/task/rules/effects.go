package rules

import (
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Effect is something the task actor must do once a decision's events are
// durable and applied: the rules say what, the actor does it (the Ready of
// etcd's raft). Effects are values, so what a decision causes is testable
// without actors.
type Effect interface{ effect() }

// Enqueue puts a waiting run on the queue.
type Enqueue struct{ Run Run }

// ArmDeadline sets a timer at Run.Deadline that forces the run to end with
// Reason (R4; R9 when the run was found started on recovery). An earlier
// timer of the same run is replaced.
type ArmDeadline struct {
	Run    Run
	Reason string // events.ForcedTimebox or events.ForcedProcessLost
}

// StopTimer stops the timers (deadline, heartbeat) of a run that has its
// outcome.
type StopTimer struct{ RunID uuid.UUID }

// ArmHeartbeat starts watching a run that just started on a task with a
// heartbeat_timeout (R16): its start counts as its first heartbeat. The
// actor keeps the time of the run's last heartbeat (not recorded: a
// Heartbeat command or a saved checkpoint, see NoteHeartbeat) and a timer;
// when Timeout has passed since the last heartbeat it decides ForceEnd with
// events.ForcedHeartbeat and that time.
type ArmHeartbeat struct {
	Run     Run
	Timeout time.Duration
}

// NoteHeartbeat says a running run is alive now: a Heartbeat command, or a
// checkpoint it saved (R16).
type NoteHeartbeat struct{ RunID uuid.UUID }

// Track tells the due-time index when the task is next due: the earlier of
// its nextRun and its earliest pending retry (R13). Active false takes it
// out of the index.
type Track struct {
	NextRun time.Time
	Active  bool
}

// Passivate says the task needs no actor in memory: it is deleted (or was
// never created) and has no open run, hence no timer. Its actor may stop;
// a later command starts a new one from the log.
type Passivate struct{}

func (Enqueue) effect()       {}
func (ArmDeadline) effect()   {}
func (StopTimer) effect()     {}
func (ArmHeartbeat) effect()  {}
func (NoteHeartbeat) effect() {}
func (Track) effect()         {}
func (Passivate) effect()     {}

// Effects is what must happen after cmd was decided, its events evs (none
// when nothing changed, or when the decision was rejected) recorded, and
// the state became after. In order: each event's effect, then one Track
// when the schedule, the status or the pending retries moved (always after
// a Tick: the index forgot the task when it sent the tick), then Passivate
// when the task needs no actor. An accepted Heartbeat records nothing and
// has one effect, NoteHeartbeat.
func Effects(cmd Command, after State, evs []events.Event) []Effect {
	var out []Effect
	track := false
	switch c := cmd.(type) {
	case Tick:
		track = true
	case Heartbeat:
		if r, ok := after.Run(c.RunID); ok && r.Started {
			out = append(out, NoteHeartbeat(c))
		}
	}
	for _, e := range evs {
		switch e := e.(type) {
		case events.RunEnqueued:
			if r, ok := after.Run(e.RunID); ok {
				out = append(out, Enqueue{Run: r})
			}
		case events.RunStarted:
			if r, ok := after.Run(e.RunID); ok {
				out = append(out, ArmDeadline{Run: r, Reason: events.ForcedTimebox})
				if hb := after.Spec.Policy.HeartbeatTimeout.D(); hb > 0 && after.Current(r) {
					out = append(out, ArmHeartbeat{Run: r, Timeout: hb})
				}
			}
		case events.CheckpointSaved:
			out = append(out, NoteHeartbeat{RunID: e.RunID})
		case events.RunCompleted:
			out = append(out, StopTimer{RunID: e.RunID})
		case events.RunFailed:
			out = append(out, StopTimer{RunID: e.RunID})
			track = track || e.RetryAt != nil
		case events.RunForcedEnd:
			out = append(out, StopTimer{RunID: e.RunID})
			track = track || e.RetryAt != nil
		case events.TaskCreated, events.TaskUpdated, events.TaskPaused, events.TaskResumed, events.TaskDeleted:
			track = true
		}
	}
	if track && after.Exists() {
		out = append(out, trackOf(after))
	}
	if Idle(after) {
		out = append(out, Passivate{})
	}
	return out
}

// Recover is what an actor that has just loaded state must do (R9): put
// waiting runs back on the queue, arm the deadline of runs found started —
// their process is gone, so they end as process_lost — and tell the index
// when the task is due. It does not passivate: an actor is started for a
// reason, and the effects of what it is asked say when it may stop.
func Recover(s State) []Effect {
	var out []Effect
	for _, r := range s.Open {
		if r.Started {
			out = append(out, ArmDeadline{Run: r, Reason: events.ForcedProcessLost})
		} else {
			out = append(out, Enqueue{Run: r})
		}
	}
	if s.Exists() {
		out = append(out, trackOf(s))
	}
	return out
}

// Idle reports whether a task needs no actor: deleted or never created,
// with no open run.
func Idle(s State) bool {
	return (s.Status == StatusDeleted || s.Status == StatusNone) && len(s.Open) == 0
}

// trackOf is when the task is next due: its nextRun while active, or its
// earliest pending retry when that is earlier (R13) — a finished task
// stays in the index while it has one. A paused task is out of the index:
// its retries wait for the resume.
func trackOf(s State) Track {
	t := Track{NextRun: s.NextRun, Active: s.Status == StatusActive}
	if s.Status != StatusActive && s.Status != StatusFinished {
		return t
	}
	if at, ok := s.NextRetry(); ok && (!t.Active || at.Before(t.NextRun)) {
		t.NextRun, t.Active = at, true
	}
	return t
}
