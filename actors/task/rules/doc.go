// Package rules is the pure decision logic of a task: the scheduling rules
// R1–R9 as two functions.
//
//	Decide(state, command, now) → events, or a rejection
//	Evolve(state, metadata, event) → state
//
// The state and Evolve are those of package events/taskstate, the one fold
// of a task stream that the cron_tasks view and the audit trail derive from
// too; this package aliases them and owns Decide. Commands that change a
// task (Update, Pause, Resume, Delete) may carry the version the caller
// expects the task at (IfVersion); Update names only the fields it changes.
//
// It imports nothing but the standard library, events and uuid: no actors,
// no clock reads, no I/O, no randomness, no logging. Time is an argument.
// The task actor (package task) runs the loop around it: decide, append the
// events with the expected version, evolve, and only then act.
//
// Concurrency: State is a value; Evolve never changes its input, so states
// may be shared between goroutines freely.
package rules
