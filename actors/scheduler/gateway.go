package scheduler

import (
	"context"
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// The messages of this file are the task's actor API for an embedder that
// runs protoactor-go itself (Config.ActorSystem; docs/embedding.md): a host
// actor gets a task's PID from TaskPID and sends it GetTask, PauseTask,
// ResumeTask, TriggerTask or UpdateTask with Request or RequestFuture (as
// a value or a pointer); the task's actor decides it between its other
// messages, exactly as the Scheduler method of the same name would, and
// answers a TaskReply. A message sent with Send (no sender) is decided and
// not answered.
//
// A PID stays good while the task's actor lives. The actor TaskPID hands
// out is pinned: it does not rest between runs (a task with nothing open is
// otherwise kept as a record, its actor started for each tick or call). It
// stops when the task needs none (deleted, nothing open) and when the
// Scheduler stops;
// a request to it then fails as a dead letter (actor.ErrDeadLetter from a
// future, an *actor.DeadLetterResponse to a requesting actor), and one that
// reaches it while it stops goes unanswered (protoactor drops what is left
// in a stopped actor's mailbox): give every request a timeout, and on
// either ask TaskPID again.
//
// These messages are not counted on the Scheduler's clock (Config.Clock):
// under a virtual clock, time may move while one is on its way; wait for
// the reply before moving it. What the actor does in answer (a run
// enqueued, say) is counted as usual. Creating and deleting tasks stay
// Scheduler methods; the owners' index (R6) the scheduler keeps beside the
// actors follows the tasks' recorded creations and deletions (Listed).

// GetTask asks for the task as (*Scheduler).Task returns it.
type GetTask struct{}

// PauseTask pauses the task, as (*Scheduler).PauseTask. IfVersion, when
// set, makes it apply only at that version (see IfVersion).
type PauseTask struct{ IfVersion *uint64 }

// ResumeTask resumes the task, as (*Scheduler).ResumeTask.
type ResumeTask struct{ IfVersion *uint64 }

// TriggerTask enqueues one run now, outside the schedule, as
// (*Scheduler).Trigger (R15); the reply's RunID is the run's.
type TriggerTask struct{}

// UpdateTask changes the fields Update sets, as (*Scheduler).UpdateTask;
// a new payload is checked by the kind's handler (worker.PayloadValidator)
// first.
type UpdateTask struct {
	Update    TaskUpdate
	IfVersion *uint64
}

// TaskReply answers each of the messages above: the task after the
// request (Task.Position is its latest event's log position), the run a
// TriggerTask enqueued, or the error the Scheduler method would return
// (ErrTaskNotFound, ErrCannotTrigger, a *VersionMismatchError, a
// *FieldError, …), which leaves Task as the task stands.
type TaskReply struct {
	Task  Task
	RunID uuid.UUID
	Err   error
}

// TaskPID returns the PID of task id's actor, starting one if the task has
// none in memory, for host actors to send the messages above to; an
// unknown task is ErrTaskNotFound, a deleted one ErrTaskDeleted (its actor
// stops as soon as nothing is open; read it with Task). The actor is
// pinned (see above): the PID is good while the task is not deleted, the
// Scheduler runs and Unpin has not released it. It lives in the Scheduler's actor system: the host's when
// Config.ActorSystem is set.
func (s *Scheduler) TaskPID(ctx context.Context, id uuid.UUID) (*actor.PID, error) {
	reply, pid, err := s.sendTo(ctx, id, task.Get{Pin: true})
	if err != nil {
		return nil, err
	}
	if reply.Err != nil {
		return nil, reply.Err
	}
	if !reply.State.Exists() {
		return nil, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	if reply.State.Status == rules.StatusDeleted {
		return nil, fmt.Errorf("%w: %s", ErrTaskDeleted, id)
	}
	return pid, nil
}

// Unpin undoes TaskPID's pin of task id's actor: the actor rests again
// between runs (it leaves, the task kept as a record, once nothing of it is
// open), and a PID TaskPID returned stops being good when it does; ask
// TaskPID again to send to the task. Unpinning a task that is not pinned,
// or has no actor, does nothing; an unknown task is ErrTaskNotFound. The
// actor counts in its queue's share of Config.MaxActiveTasks again from
// the next tick that reaches it.
func (s *Scheduler) Unpin(ctx context.Context, id uuid.UUID) error {
	s.mu.Lock()
	sl, started := s.tasks[id], s.started
	s.mu.Unlock()
	if !started {
		return ErrNotStarted
	}
	if sl.e == nil {
		if sl.rec != "" {
			return nil // resting: no actor, nothing pinned
		}
		if _, err := s.Task(ctx, id); err != nil {
			return err
		}
		return nil
	}
	// The entry forgets the pin before the actor does: a TaskPID decided
	// after this Unpin tells Pinned again, one decided before is undone.
	sl.e.mu.Lock()
	sl.e.pinned = false
	sl.e.mu.Unlock()
	reply, err := s.send(ctx, id, task.Get{Unpin: true})
	if err != nil {
		return err
	}
	if !reply.State.Exists() {
		return fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	return reply.Err
}

// Pinned implements task.Pinner: the actor at pid, which a Get.Pin (from
// TaskPID) pinned, takes no place in its queue's share of the bound from
// now on (see entry.count); not if it is not the task's actor any more.
// The actor tells it as it pins itself, so a TaskPID whose wait ended
// before the answer still counts its pin.
func (r *registry) Pinned(id uuid.UUID, pid *actor.PID) {
	s := (*Scheduler)(r)
	s.mu.Lock()
	e := s.tasks[id].e
	s.mu.Unlock()
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if samePID(e.pid, pid) && !e.pinned {
		e.pinned = true
		s.uncount(e) // there may be room now
	}
}

// hostRequest is how a task's actor serves the messages above
// (task.Config.Host). A nil pointer is no request: the actor ignores it,
// as any message it does not know.
func (s *Scheduler) hostRequest(msg any) (task.HostRequest, bool) {
	switch m := msg.(type) {
	case *GetTask:
		if m != nil {
			return s.hostRequest(*m)
		}
	case *PauseTask:
		if m != nil {
			return s.hostRequest(*m)
		}
	case *ResumeTask:
		if m != nil {
			return s.hostRequest(*m)
		}
	case *TriggerTask:
		if m != nil {
			return s.hostRequest(*m)
		}
	case *UpdateTask:
		if m != nil {
			return s.hostRequest(*m)
		}
	case GetTask:
		return task.HostRequest{Reply: readReply}, true
	case PauseTask:
		return hostCommand(rules.Pause{IfVersion: m.IfVersion}), true
	case ResumeTask:
		return hostCommand(rules.Resume{IfVersion: m.IfVersion}), true
	case TriggerTask:
		return task.HostRequest{Command: func(rules.State) (rules.Command, error) { return rules.Trigger{}, nil },
			Reply: triggerReply}, true
	case UpdateTask:
		return task.HostRequest{Command: func(st rules.State) (rules.Command, error) {
			c, err := m.Update.command()
			if err != nil {
				return nil, err
			}
			c.IfVersion = m.IfVersion
			if m.Update.Payload != nil && st.Exists() {
				c.PayloadKind = st.Spec.Kind
				if err := s.checkPayload(st.Spec.Kind, m.Update.Payload); err != nil {
					return nil, err
				}
			}
			return c, nil
		}, Reply: writeReply}, true
	}
	return task.HostRequest{}, false
}

// hostMessage reports whether msg is one of the messages above: a host
// actor's, never counted on the clock, nor its dead letter.
func hostMessage(msg any) bool {
	switch msg.(type) {
	case GetTask, *GetTask, PauseTask, *PauseTask, ResumeTask, *ResumeTask, TriggerTask, *TriggerTask,
		UpdateTask, *UpdateTask:
		return true
	}
	return false
}

func hostCommand(cmd rules.Command) task.HostRequest {
	return task.HostRequest{Command: func(rules.State) (rules.Command, error) { return cmd, nil }, Reply: writeReply}
}

// readReply is GetTask's answer, as Task's.
func readReply(id uuid.UUID, r task.Reply) any {
	if r.Err == nil && !r.State.Exists() {
		r.Err = fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	return TaskReply{Task: taskFrom(r.State, r.Position), Err: r.Err}
}

// writeReply is a command's answer, as command's.
func writeReply(id uuid.UUID, r task.Reply) any {
	if errors.Is(r.Err, rules.ErrNotCreated) {
		r.Err = fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	}
	return TaskReply{Task: taskFrom(r.State, r.Position), Err: r.Err}
}

// triggerReply is TriggerTask's answer, as Trigger's.
func triggerReply(id uuid.UUID, r task.Reply) any {
	reply := writeReply(id, r).(TaskReply)
	if reply.Err != nil {
		return reply
	}
	for _, e := range r.Events {
		if en, ok := e.(events.RunEnqueued); ok {
			reply.RunID = en.RunID
			return reply
		}
	}
	reply.Err = fmt.Errorf("scheduler: trigger of task %s recorded no run", id)
	return reply
}
