// Package rules is the pure decision logic of a task: the scheduling rules
// R1–R9, for cron and at schedules R10 (slots, finishing), R11 (spacing
// and defaults) and R17 (jitter), and for every kind R18 (the backlog
// bound: a tick enqueues nothing for a task at its max_waiting waiting
// runs), as two functions.
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
// Schedules. An interval task keeps R1–R9 exactly. A cron or at task's
// schedule is compiled by package actors/task/schedule (pure, stdlib only)
// from the form events record; a decision records what it found — the slot
// a run is for, its spacing, the next slot — so a replay never recomputes a
// slot. Compiled schedules are memoized by their written form (Compiled);
// the memo changes no answer. Missed intervals or slots are counted only
// from when the task existed (its creation, or its first nextRun when
// later).
//
// It imports nothing but the standard library, events, uuid and the pure
// schedule package: no actors, no clock reads, no I/O, no randomness, no
// logging. Time is an argument.
// The task actor (package task) runs the loop around it: decide, append the
// events with the expected version, evolve, and only then act.
//
// Concurrency: State is a value; Evolve never changes its input, so states
// may be shared between goroutines freely.
package rules
