// Package esdb implements events.Store on EventStoreDB, through the official
// Go client (github.com/EventStore/EventStore-Client-Go/v4). It is the only
// package of the module that imports that client.
//
// Mapping:
//   - A stream is an EventStoreDB stream of the same name (task streams are
//     "task-<uuid>"); stream versions are EventStoreDB stream revisions, both
//     numbered from 0.
//   - An event is a JSON event ("application/json") whose EventStoreDB type
//     is our type name and whose ID is the proposed event's ID, so a retried
//     append is recognised by the server. Our metadata (decision time, schema
//     version, causation and correlation IDs) travels in the event's user
//     metadata as JSON.
//   - Expected versions become expected revisions: NoStream → no stream,
//     AnyVersion → any, Exactly(n) → revision n. A wrong expected revision is
//     returned as *events.VersionConflictError (errors.Is
//     events.ErrVersionConflict), carrying the stream's current version.
//   - Options.Namespace, when set, is put in front of every stored stream
//     name, so several schedulers can share one database.
//   - The global log is $all filtered to Options.StreamPrefixes (default
//     "task-"); system streams ("$…") are never part of it. events.Position
//     holds EventStoreDB's commit and prepare positions. ReadAll reads $all
//     page by page and filters in the adapter (the v4 client has no filtered
//     read); Subscribe filters on the server.
//
// Connection handling. The v4.2.0 client has failure modes it does not
// recover from, and the adapter works around each: a client whose
// connection discovery fails stays closed, so the adapter replaces a broken
// client with a new one; a subscription does not resubscribe, so Subscribe
// subscribes again from the last event it handled; a failed read does not
// make the client look for a new leader, so a failed read also replaces the
// client; closing a client while one of its calls reports a failure panics
// ("send on closed channel"), so every client call runs under recover on a
// goroutine of its own, which also lets the caller's context bound waits the
// client does not bound (discovery). Calls that fail because the server
// cannot be reached are retried for Options.RetryFor.
//
// Open does not wait for the server: a store opened while the server is
// down connects once it is up.
//
// Concurrency: a Store is safe for concurrent use. Subscribe runs handle on
// the subscriber's goroutine, one event at a time. Close ends every call and
// subscription with events.ErrClosed and waits for them.
package esdb
