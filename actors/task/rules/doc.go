// Package rules is the pure decision logic of a task: the scheduling rules
// R1–R9, for cron and at schedules R10 (slots, finishing), R11 (spacing
// and defaults) and R17 (jitter), for every kind R18 (the backlog bound: a
// tick enqueues nothing for a task at its max_waiting waiting runs) and the
// run policies R12–R16 (never concurrently, retries, missed runs and the
// start deadline, manual triggers, heartbeats), as two functions.
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
// Run policies (R12–R16), for every schedule kind:
//
//   - R12: a run whose worker asks while another run of the task (of its
//     current incarnation) is running is dropped as overlap — slot runs,
//     retries and manual runs alike. A run started counts as running until
//     its outcome is recorded, its deadline passed or not. That is overlap
//     skip, the default; the task's overlap may choose instead buffer_one
//     (Decide records nothing and Effects says Buffer: the actor holds the
//     run and puts it back on the queue once nothing runs; a second run
//     asking meanwhile, RequestStart.Buffered naming the held one, is
//     dropped as overlap), cancel_other (the running run's RunForcedEnd
//     with reason replaced, never retried, then the asking run's
//     RunStarted, in one decision, unless R14 drops the asking run) or
//     allow (no check).
//   - pause_after_failures N: the failure (RunFailed or RunForcedEnd, not
//     replaced, promising no retry) of a slot's last attempt that makes N
//     slots failed in a row (State.Failures + 1) records TaskPaused with
//     reason failures and the count in the same decision, for an active
//     task.
//   - The drop checks of RequestStart, in order (the first that applies is
//     recorded): R7 paused or deleted, R3 too_soon, R12 overlap, R14
//     too_late — R1–R9 stay exactly as written, and the newer reasons
//     apply to runs they would have started. too_late is measured from the instant the run fell due
//     (Due: a slot run's slot moved by its jitter, a retry's retry_at, a
//     manual run's trigger time); too_soon applies to scheduled first
//     attempts only.
//   - R13: a failure (RunFailed not fatal, or RunForcedEnd of any reason)
//     with attempts left records RetryAt = its time + Backoff, unless the
//     retry would fall due after the task's nextRun then (a finished task
//     has none: its last slot is retried as long as attempts last), or the
//     task is paused or deleted, or the run belongs to an earlier
//     incarnation; NoRetry says why. The first tick at or after RetryAt
//     enqueues the retry (attempt + 1, retry_of, the failed run's slot),
//     before the slot's own run and only while the task is under its R18
//     bound: a retry due at the bound waits for room. Pending retries live
//     in the state (see package events/taskstate for pause, resume, update
//     and delete); the due-time index is told the earlier of nextRun and
//     the earliest retry (Track).
//   - R14: under missed_run_policy skip, a tick later than the instant the
//     slot fell due + missed_after (default one spacing; a slot with no
//     spacing — a single instant — is never missed by default) records
//     SlotsMissed instead of a run, whether or not the task is at its bound.
//   - R15: Trigger enqueues one manual run now; it moves neither nextRun,
//     lastRun nor the scheduled count, skips R3 and obeys R12. A paused,
//     finished or deleted task refuses it, and so does a task at its R18
//     bound (ErrCannotTrigger, the text says which).
//   - Backfill (DESIGN §8.4): records BackfillRequested with the task's
//     slots in a past window (BackfillSlots, at most 1000) and enqueues a
//     run of each, trigger backfill, in slot order while the task is under
//     its R18 bound: in that decision, then whenever a waiting run starts
//     or is dropped, at a tick and at a resume (the slots still waiting are
//     State.Backfill). Once enqueued, a backfill run is treated as a
//     trigger's: no R3, nextRun and lastRun untouched, overlap obeyed. A
//     paused, finished or deleted task refuses it (ErrCannotBackfill).
//   - R16: heartbeats are not recorded. The actor keeps each running run's
//     last heartbeat (its start, a Heartbeat, a saved checkpoint:
//     ArmHeartbeat, NoteHeartbeat) and, once heartbeat_timeout has passed
//     since it, decides ForceEnd{Reason: heartbeat_timeout, LastHeartbeat},
//     which the rules check (ErrHeartbeatNotDue otherwise); R13 follows.
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
