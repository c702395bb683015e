// Package crontasks folds the global event log into the cron_tasks view:
// one row per task with its spec, status, nextRun and lastRun, counts per
// run outcome, its latest checkpoint and the outcome of its latest run.
//
// The fold itself (Evolve) is pure: a row and an event give the next row.
// A View persists the rows in a Pebble database (a directory, or memory)
// together with its checkpoint, the global position of the last event it
// applied, written in one atomic batch per applied batch of events: a crash
// can lose a batch, never count one twice, and events at or before the
// checkpoint are skipped, so applying is idempotent by global position.
//
// On Run a View catches up from its checkpoint and then follows the log
// live. Queries (by id, owner, status, due before a time, all) read
// secondary indexes kept in the same batches, and page in a stable order
// with an opaque cursor. Rebuild folds the log from zero into a fresh view;
// AsOf folds it up to a past position or time into a throw-away in-memory
// view, leaving the live one alone.
//
// A View is safe for concurrent use: one goroutine applies (Run or Apply),
// any number query.
package crontasks
