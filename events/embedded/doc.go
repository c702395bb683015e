// Package embedded is the default events.Store: a durable, single-node event
// log in the data directory, on Pebble.
//
// Durability: Append returns only after its events are in a synced Pebble
// batch (fsync of the write-ahead log), so an acknowledged append survives
// kill -9 and power loss. Appends from many goroutines are group-committed:
// a single committer goroutine takes every append waiting at that moment,
// checks expected versions in order, and writes them all in one batch; the
// appends are answered once that batch's log sync is done. Global positions
// are assigned by the committer, so the global log has no gaps. Pebble shows
// a batch before its sync ends, so reads and subscriptions stop at the last
// durable position: readers only ever see durable events. After a failed
// write or sync the store refuses appends until it is reopened.
//
// The data directory holds a format marker (CRONACTOR_FORMAT), a lock file
// (LOCK, held with an exclusive OS lock while open: flock on Unix, LockFileEx on
// Windows) and Pebble's files under events/.
// Opening a directory another process holds fails with ErrLocked; a directory
// with other files, or written by a newer format, fails with ErrForeignDir or
// ErrNewerFormat; corruption is reported as ErrCorrupt with where it was
// found. The store never resets or drops data on its own.
//
// OpenMemory runs the same code on an in-memory file system for simulation
// and tests.
//
// Concurrency: a Store is safe for concurrent use.
package embedded
