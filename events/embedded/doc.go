// Package embedded is the default events.Store: a durable, single-node event
// log in the data directory, on Pebble.
//
// Durability: Append returns only after its events are in a synced Pebble
// batch (fsync of the write-ahead log), so an acknowledged append survives
// kill -9 and power loss. Appends from many writers are group-committed:
// a single committer goroutine takes the appends waiting at that moment (up
// to Options.MaxBatchEvents events), checks expected versions in the order
// it took them, and writes them all in one batch; the appends are answered
// once that batch's log sync is done. Global positions are assigned by the
// committer, so the global log has no gaps — but for the events history
// retention removed (TruncateBefore, truncate.go: a stream's index below
// the cut and the records it points at). Pebble shows a batch before its
// sync ends, so reads and subscriptions stop at the last durable position:
// readers only ever see durable events.
//
// Appends wait for the committer first in, first out, in a queue with no
// bound: every waiting append is a writer waiting for its answer.
// AppendAsync (events.AsyncAppender) queues an append as Append does, and
// the committer calls the caller's callback once the append's group is
// durable, so no goroutine waits for it; the task actors append this way.
//
// Files: open.go opens and checks a data directory, commit.go is the
// committer, read.go the reads, tuning.go the tuning values with what each
// is based on, walcheck.go and dataloss.go the write-ahead log check, and
// space.go the full-disk handling. The directory lock is flock on Unix and
// LockFileEx on Windows (lock_*.go).
//
// The data directory holds a format marker (CRONACTOR_FORMAT), a lock file
// (LOCK, held with an exclusive OS lock while open) and Pebble's files under
// events/. The store never resets, deletes or rewrites data on its own; what
// it finds wrong, it refuses, says where, and changes nothing:
//
//   - another process holds the directory: ErrLocked;
//   - other files, or a newer format: ErrForeignDir, ErrNewerFormat (and a
//     refused directory is left exactly as found: no LOCK file either);
//   - events/ or events/CURRENT gone from a store that was created:
//     ErrMissingFiles (Pebble would otherwise start an empty database and
//     delete the tables it no longer knows);
//   - the newest write-ahead log damaged before its end, with valid records
//     after the damage: *LogDamageError (ErrLogDamaged, ErrCorrupt) naming
//     the file and offset. A torn tail — the last record cut short by a
//     crash — is normal and tolerated: nothing after it was acknowledged.
//     Options.AcceptDataLoss is the operator's explicit repair: it cuts the
//     log at the damage after keeping a copy of it and writing a
//     DATA_LOSS-<time>.json report (positions lost, new head) beside it;
//   - a log shorter than the head a clean close recorded, and any other
//     damage Pebble finds: ErrCorrupt, naming the file where known.
//
// A full disk is not damage: below Options.MinFreeBytes of free space (and
// on any write that fails with ENOSPC) appends fail with events.ErrNoSpace
// while reads go on, and the first append after space is back succeeds,
// with no restart (the database is reopened underneath if a write had
// failed). A file system that turned read-only (EROFS) is the same with
// events.ErrReadOnly: the store learns that it is writable again by writing
// a probe file, then reopens the database. Any other failed write (EIO
// above all) refuses appends with events.ErrWriteFailed until the process
// restarts. The store logs each change of condition once, with the count of
// appends refused meanwhile, and says where it stands through WriteStatus
// (events.WriteStatusReader). An append that failed on a full disk may
// still turn out to be stored, as with any failed write: retrying it with
// the same event IDs is recognised. docs/decisions/0008-store-faults.md
// gives the reasons.
//
// OpenMemory runs the same code on an in-memory file system for simulation
// and tests.
//
// Concurrency: a Store is safe for concurrent use.
package embedded
