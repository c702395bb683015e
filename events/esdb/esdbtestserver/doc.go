// Package esdbtestserver is a test double for EventStoreDB: an in-process
// gRPC server speaking the part of the EventStoreDB client protocol that the
// events/esdb adapter uses, so that the adapter and the store contract suite
// run on every build without an EventStoreDB server. It is not EventStoreDB
// and must never be used outside tests.
//
// It serves, on real TCP on 127.0.0.1:
//   - Streams.Append with expected revisions (any, no stream, stream exists,
//     exact) and EventStoreDB's idempotent handling of a retried append (same
//     event IDs right after the expected revision: success, nothing written,
//     no position in the answer);
//   - Streams.Read of one stream and of $all, forwards and backwards, with a
//     count or as a subscription, with stream-name and event-type filters;
//   - a stream's truncate-before ($tb in the latest "$metadata" event of
//     its "$$" stream, which SetStreamMetadata writes): stream reads skip the
//     revisions below it, $all still holds them (no scavenge);
//   - ServerFeatures.GetSupportedMethods, which the client calls on connect;
//   - Gossip.Read, naming this node as the only, alive leader.
//
// It is strict where the adapter relies on the real server being strict: a
// wrong expected revision is refused, reading a missing stream answers
// "stream not found", every event read back carries the "type",
// "content-type" and "created" system metadata, a subscription starts with a
// confirmation, and reads never carry first/last-position messages (the v4 Go
// client panics on them). Appends lacking "type" or "content-type" metadata,
// and appends larger than the maximum append size (1 MiB by default, as on
// EventStoreDB; see SetMaxAppendSize), are refused as a real server does.
//
// Positions in $all are byte-like offsets: each event's prepare position
// advances by a size derived from its body, and every event of one append
// shares the commit position of the append (the first event's prepare
// position), so commit and prepare positions differ as they can on a real
// server. Reading $all from a position is inclusive; subscribing from a
// position is exclusive, as on EventStoreDB.
//
// Faults: Stop drops every connection and stops listening while keeping the
// events (a server going down); Start listens again on the same address (the
// server coming back). New with an address that nothing listens on yet
// supports "the server is down when the client starts".
//
// Concurrency: all methods are safe for concurrent use.
package esdbtestserver
