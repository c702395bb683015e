package rules

import (
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/taskstate"
)

// The task's state and its fold live in package events/taskstate, the one
// fold every reader of a task stream shares; these aliases keep the rules'
// vocabulary in one place for the actor and the tests.
type (
	// State is a task as its events leave it (taskstate.State).
	State = taskstate.State
	// Run is an enqueued run without an outcome yet (taskstate.Run).
	Run = taskstate.Run
	// Spec is what a task is told to do (taskstate.Spec).
	Spec = taskstate.Spec
	// Status of a task (taskstate.Status).
	Status = taskstate.Status
	// PendingRetry is a retry promised by a failure and not enqueued yet
	// (taskstate.PendingRetry, R13).
	PendingRetry = taskstate.PendingRetry
)

// Statuses of a task.
const (
	StatusNone    = taskstate.StatusNone
	StatusActive  = taskstate.StatusActive
	StatusPaused  = taskstate.StatusPaused
	StatusDeleted = taskstate.StatusDeleted
	// StatusFinished: R10, no slot is left.
	StatusFinished = taskstate.StatusFinished
)

// Evolve applies one recorded event (taskstate.Evolve).
func Evolve(s State, meta events.Metadata, e events.Event) State { return taskstate.Evolve(s, meta, e) }

// Replay folds a task's recorded events into its state (taskstate.Replay).
func Replay(recs []events.Recorded) (State, error) { return taskstate.Replay(recs) }
