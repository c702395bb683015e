package task

import (
	"context"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Command asks the actor to decide Cmd; it replies with a Reply. Ctx, when
// set, bounds the command: one that ended before the actor got to it is
// answered with its error and not decided, and the command's store calls
// run within it.
type Command struct {
	Ctx context.Context
	Cmd rules.Command
	// Runner, on a RequestStart, is the worker that will execute the run
	// if it starts (Ask sets it to the asking actor): should the actor
	// record the run's forced end — its deadline timer, its heartbeat
	// watch — it tells it with a worker.StopRun.
	Runner *actor.PID
	// answer, set by Post, is where the Reply goes instead of the sender.
	answer *answer
}

// Reply is the answer to a Command or Get: the events recorded (none when
// nothing changed), the state after them, or the rejection.
type Reply struct {
	Events []events.Event
	State  rules.State
	// Position is the global log position of the task's latest event: the
	// last event this command recorded, else the latest the actor knows
	// of. A view that has folded the log up to it shows State. Zero when
	// the task has no events.
	Position events.Position
	Err      error
}

// Initial is a task's state as recovery folded it from the global log (or
// as the task's last actor left it, see Registry.Left), and the position of
// its latest event.
type Initial struct {
	State    rules.State
	Position events.Position
	// Tracked says the due-time index holds the task as its state says
	// already (a resting task stays in the index): the actor does not tell
	// it again when it starts.
	Tracked bool
}

// Get asks for the state without changing it; the reply is a Reply.
type Get struct {
	// Pin keeps the actor in memory from now on, resting or not, until its
	// task needs none (deleted, nothing open) or it is stopped: its PID
	// was handed to someone who will send to it directly (a host actor).
	Pin bool
	// Unpin undoes Pin: the actor may rest again (and leave, its task kept
	// as a record) once its task rests. Pin and Unpin together: Pin wins.
	Unpin bool
}

// deadline is the actor's own timer message for a started run.
type deadline struct {
	runID  uuid.UUID
	reason string
}

// heartbeatDue is the actor's own timer message for a watched run (R16):
// its heartbeat_timeout may have passed since its last heartbeat.
type heartbeatDue struct{ runID uuid.UUID }

// passivate is the actor's last message to itself before it stops; the
// Registry sends it (see Registry.Leave).
type passivate struct{}
