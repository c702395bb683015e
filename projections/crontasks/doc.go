// Package crontasks is the cron_tasks view: a fold of the global event log
// into one row per task (Task), persisted with its checkpoint, indexed for
// the queries people and the daemon ask (by id, by owner, by status, due
// before a time, all), and readable as of any past point.
//
// Durability and idempotence: every batch of events is applied in one atomic
// Pebble batch that also writes the checkpoint (the global position of the
// last event folded), so a crash between applying and checkpointing cannot
// happen and nothing is counted twice; events at or before the checkpoint are
// skipped. On Run the view catches up from its checkpoint, then follows the
// log live (events.Store.Subscribe). The view is derived data: Rebuild folds
// the whole log again from zero into a fresh directory and swaps it in.
//
// Time travel: AsOf folds the log up to a past global position or time into
// a separate in-memory view; the live view is not touched. A view keeps
// snapshots of itself every Config.SnapshotEvery folded events, so that
// View.AsOf folds only the events after the nearest one: it reads the
// snapshot under a small in-memory overlay of the rows changed since.
//
// Layout of the view's Pebble database (keys, all big-endian):
//
//	m/format                           format marker
//	m/checkpoint                       commit(8) prepare(8)
//	t/<id 16>                          the Task as JSON
//	o/<len owner><owner><name, 0 escaped, ends 0 1><id 16>   owner index (by name)
//	s/<status byte><id 16>             status index
//	d/<next_run unix ns, sign-flipped 8><id 16>   due index (active tasks)
//
// Damage: a view whose files are damaged, or whose database fails, is
// refused or breaks (Damaged, ErrCorrupt, ErrBroken) and never takes the
// process down with it. Keeper, which the daemon runs, moves such a view
// aside to a dated sibling directory (keeping the newest Config.KeepDamaged
// of those), opens a fresh one and rebuilds it from
// the log in the background. Until the rebuild is done, View answers an
// UnavailableError, and Status says how far the rebuild has got.
//
// Concurrency: a View is safe for concurrent use. One goroutine applies
// events (Run, or the caller of Apply); queries read consistent snapshots
// and never block the applier.
package crontasks
