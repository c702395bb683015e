// Package taskstate is the one fold of a task stream: what a task's events
// leave it as (State), by one Evolve. Everything that reads a task stream
// derives from it — the task actor's decisions (package
// actors/task/rules, whose Decide takes a State), the cron_tasks view
// (projections/crontasks) and the audit trail (projections/history) — and
// adds only counters and formatting, never its own reading of an event.
//
// It lives under events, not beside the rules, so that projections, which
// import only events, can use it. It imports nothing but the standard
// library, events and uuid, reads no clock, does no I/O, and is pure.
//
// Incarnations. A task stream outlives a delete: creating the task again
// (same owner and name, so the same ID and stream) starts a new incarnation
// that starts clean — new spec, status and nextRun, no lastRun, no
// checkpoint. Run numbers keep counting up across incarnations, so run IDs
// (derived from the task ID and the number) never repeat. A run keeps the
// incarnation it was enqueued in: its outcome is still recorded (R9), but a
// run of an earlier incarnation never moves the current incarnation's
// lastRun or checkpoint.
//
// Schedules. The state keeps the schedule as written (Spec.Schedule, and
// Spec.Window for start_at, end_at, max_runs and jitter), the slot nextRun
// stands for and its spacing (NextSlot, NextSpacing), each open run's slot
// and spacing, and the scheduled runs of this incarnation (Scheduled, for
// max_runs) — all read from the events, none recomputed. TaskFinished makes
// the status finished (R10); a rescheduling TaskUpdated with a next run
// makes it active again. Events written before schedules fold as they
// always did: an interval task whose slots are its nextRuns.
//
// Run policies (R12–R16). Spec.Policy is the task's queue, retry policy,
// missed-run policy, start deadline and heartbeat timeout, as TaskCreated
// and TaskUpdated record them. A run enqueued as a retry (RetryOf set) or
// by a manual trigger (Trigger set) moves neither nextRun nor the count of
// scheduled runs nor the backlog mark, and its start does not move lastRun:
// lastRun is the start of the latest scheduled first attempt (Run.First).
// A failure that records a RetryAt (RunFailed, RunForcedEnd) leaves a
// pending retry in Retries — so a restart still makes it — until the
// RunEnqueued that retries it. Pending retries are dropped when the task is
// deleted or created again; they survive a pause, but a resume after the
// task's nextRun has passed drops them (the run the resume makes due
// supersedes them); an update keeps those its policy would still make
// (attempt within max_attempts, due no later than the nextRun after it).
// SlotsMissed (missed_run_policy skip, R14) moves nextRun as a RunEnqueued
// would, without a run.
//
// Backfill (DESIGN §8.4). BackfillRequested appends its slots to Backfill;
// each RunEnqueued with trigger backfill takes the first of them (the rules
// enqueue them in order), and is otherwise a triggered run. Deleting the
// task or creating it again forgets the slots still waiting; a pause keeps
// them. The binary form carries them from version 5.
//
// Concurrency: State is a value; Evolve never changes its input, so states
// may be shared between goroutines freely.
package taskstate
