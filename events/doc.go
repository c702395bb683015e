// Package events owns the scheduler's event log: the vocabulary of task
// events (TaskCreated, RunEnqueued, RunStarted, …), their encoding with a
// schema version per type (registered in one place, Default), and the Store
// port every backend implements (events/embedded, events/esdb).
//
// One stream per task, named TaskStream(id) = "task-<uuid>". Stream versions
// start at 0. Appends carry an ExpectedVersion (NoStream, AnyVersion or
// Exactly(n)) so two writers of one stream cannot both succeed; the loser gets
// an error matching ErrVersionConflict.
//
// Every event carries the time it was decided (Metadata.At), which comes from
// the scheduler's clock, not the store's: under simulation it is virtual.
//
// Concurrency: Store implementations are safe for concurrent use. A Registry
// is built at init and read-only afterwards.
package events
