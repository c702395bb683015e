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

// Enqueue puts waiting run RunID, as the state holds it, on the queue.
// Effects name a run rather than carry a copy of it (~240 bytes, boxed
// into the Effect for every run).
type Enqueue struct{ RunID uuid.UUID }

// ArmDeadline sets a timer at Deadline, run RunID's, that forces the run to
// end with Reason (R4; R9 when the run was found started on recovery). An
// earlier timer of the same run is replaced.
type ArmDeadline struct {
	RunID    uuid.UUID
	Deadline time.Time
	Reason   string // events.ForcedTimebox or events.ForcedProcessLost
}

// Buffer says the actor holds waiting run RunID until the running run of
// its task has its outcome (overlap buffer_one): its RequestStart recorded
// nothing, the worker that asked is free, and once no run of the task is
// running the actor puts the run back on the queue (as Enqueue does), so
// that it starts then. Holding is not recorded: a restarted actor puts
// every waiting run back on the queue anyway (Recover). The actor names
// the run it holds in its next RequestStart (RequestStart.Buffered), so
// that at most one run waits so.
type Buffer struct{ RunID uuid.UUID }

// Listed says the owners' index (R6: an owner's tasks, for listing and
// deleting them together) gains the task (created, Listed true) or loses it
// (deleted): the index follows the task's own events, so it cannot
// disagree with them.
type Listed struct {
	Owner, Name string
	Listed      bool
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
	RunID     uuid.UUID
	StartedAt time.Time
	Timeout   time.Duration
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
func (Buffer) effect()        {}
func (ArmDeadline) effect()   {}
func (StopTimer) effect()     {}
func (ArmHeartbeat) effect()  {}
func (NoteHeartbeat) effect() {}
func (Track) effect()         {}
func (Passivate) effect()     {}
func (Listed) effect()        {}

// Effects is what must happen after cmd was decided, its events evs (none
// when nothing changed, or when the decision was rejected) recorded, and
// the state became after. In order: each event's effect, then one Track
// when the schedule, the status or the pending retries moved (always after
// a Tick: the index forgot the task when it sent the tick), then Passivate
// when the task needs no actor. An accepted Heartbeat records nothing and
// has one effect, NoteHeartbeat.
//
// Each event's effects are made by a small function on a pointer to
// after, so that no frame holds a copy of the State while the actor's
// goroutine does them (docs/performance.md).
func Effects(cmd Command, after State, evs []events.Event) []Effect {
	out := AppendEffects(nil, cmd, &after, evs)
	if len(out) == 0 {
		return nil
	}
	return out
}

// AppendEffects appends Effects(cmd, *after, evs) to out, for a caller that
// reuses one slice (a task actor makes about three decisions per run). It
// does not keep after.
func AppendEffects(out []Effect, cmd Command, after *State, evs []events.Event) []Effect {
	s := after
	if len(evs) > 0 && out == nil {
		out = make([]Effect, 0, len(evs)+2) // each event's, Track, Passivate
	}
	track := false
	switch c := cmd.(type) {
	case Tick:
		track = true
	case Heartbeat:
		out = noteHeartbeat(out, s, c.RunID)
	case RequestStart:
		if len(evs) == 0 && Buffers(s, c.RunID) {
			out = append(out, Buffer{RunID: c.RunID})
		}
	}
	for _, e := range evs {
		var moved bool
		out, moved, _ = eventEffects(out, s, e)
		track = track || moved
	}
	if track && s.Exists() {
		out = append(out, trackOf(s))
	}
	if idle(s) {
		out = append(out, Passivate{})
	}
	return out
}

// eventEffects appends the effects of one recorded event; track reports
// that it moved when the task is due. handled is false for an event type
// with no rule here.
func eventEffects(out []Effect, s *State, e events.Event) (_ []Effect, track, handled bool) {
	switch e.(type) {
	case events.RunEnqueued:
		return enqueueEffect(out, s, e), false, true
	case events.RunStarted:
		return startEffects(out, s, e), false, true
	case events.CheckpointSaved, events.RunCompleted, events.RunFailed, events.RunForcedEnd:
		out, retry := runEffects(out, e)
		return out, retry, true
	case events.TaskCreated:
		return append(out, Listed{Owner: s.Spec.Owner, Name: s.Spec.Name, Listed: true}), true, true
	case events.TaskDeleted:
		return append(out, Listed{Owner: s.Spec.Owner, Name: s.Spec.Name}), true, true
	case events.TaskUpdated, events.TaskPaused, events.TaskResumed:
		return out, true, true
	case events.RunDropped, events.SlotsMissed, events.TaskFinished, events.TaskCompacted:
		// No effect of their own: a dropped run never started (no timer
		// runs), and the command that records the others (a tick, a
		// compaction) says what follows.
		return out, false, true
	}
	return out, false, false
}

// HasEffectRule reports whether AppendEffects has a rule for e's type,
// one that may call for no effect; the table test over every registered
// event type (cmd/cronactor) asks it of each.
func HasEffectRule(e events.Event) bool {
	_, _, handled := eventEffects(nil, &State{}, e)
	return handled
}

// noteHeartbeat notes the heartbeat of run id if it is running.
func noteHeartbeat(out []Effect, s *State, id uuid.UUID) []Effect {
	if r, ok := s.Run(id); ok && r.Started {
		out = append(out, NoteHeartbeat{RunID: id})
	}
	return out
}

// enqueueEffect puts the run e enqueued on the queue.
func enqueueEffect(out []Effect, s *State, e events.Event) []Effect {
	if r, ok := s.Run(e.(events.RunEnqueued).RunID); ok {
		out = append(out, Enqueue{RunID: r.ID})
	}
	return out
}

// startEffects arms the deadline of the run e started, and its heartbeat
// watch when the task has a heartbeat_timeout.
func startEffects(out []Effect, s *State, e events.Event) []Effect {
	r, ok := s.Run(e.(events.RunStarted).RunID)
	if !ok {
		return out
	}
	out = append(out, ArmDeadline{RunID: r.ID, Deadline: r.Deadline, Reason: events.ForcedTimebox})
	if hb := s.Spec.Policy.HeartbeatTimeout.D(); hb > 0 && s.Current(r) {
		out = append(out, ArmHeartbeat{RunID: r.ID, StartedAt: r.StartedAt, Timeout: hb})
	}
	return out
}

// runEffects is what a saved checkpoint (a heartbeat) or the end of a run
// calls for: an ended run's timers stop; retry reports a retry promised,
// which moves when the task is due.
func runEffects(out []Effect, e events.Event) (_ []Effect, retry bool) {
	switch e := e.(type) {
	case events.CheckpointSaved:
		return append(out, NoteHeartbeat{RunID: e.RunID}), false
	case events.RunCompleted:
		return append(out, StopTimer{RunID: e.RunID}), false
	case events.RunFailed:
		return append(out, StopTimer{RunID: e.RunID}), e.RetryAt != nil
	case events.RunForcedEnd:
		return append(out, StopTimer{RunID: e.RunID}), e.RetryAt != nil
	}
	return out, false
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
			out = append(out, ArmDeadline{RunID: r.ID, Deadline: r.Deadline, Reason: events.ForcedProcessLost})
		} else {
			out = append(out, Enqueue{RunID: r.ID})
		}
	}
	if s.Exists() {
		out = append(out, trackOf(&s))
	}
	return out
}

// Idle reports whether a task needs no actor: deleted or never created,
// with no open run.
func Idle(s *State) bool { return idle(s) }

// Rests reports whether a task has nothing for an actor to do between
// messages: no open run (so no deadline or heartbeat to watch, no worker to
// answer). Whatever its status, its state is all there is to it, and a
// scheduler may keep that as a record instead of an actor until a tick (its
// nextRun or a pending retry, still in the due-time index) or a command
// needs it.
func Rests(s *State) bool { return len(s.Open) == 0 }

func idle(s *State) bool {
	return (s.Status == StatusDeleted || s.Status == StatusNone) && len(s.Open) == 0
}

// trackOf is when the task is next due: its nextRun while active, or its
// earliest pending retry when that is earlier (R13) — a finished task
// stays in the index while it has one. A paused task is out of the index:
// its retries wait for the resume.
func trackOf(s *State) Track {
	t := Track{NextRun: s.NextRun, Active: s.Status == StatusActive}
	if s.Status != StatusActive && s.Status != StatusFinished {
		return t
	}
	if at, ok := s.NextRetry(); ok && (!t.Active || at.Before(t.NextRun)) {
		t.NextRun, t.Active = at, true
	}
	return t
}
