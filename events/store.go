package events

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Sentinel errors of the store port. Implementations wrap them with context;
// callers test with errors.Is.
var (
	// ErrVersionConflict: the stream is not at the expected version.
	ErrVersionConflict = errors.New("events: version conflict")
	// ErrStreamNotFound: the stream has no events.
	ErrStreamNotFound = errors.New("events: stream not found")
	// ErrNoEvents: an append carried no events.
	ErrNoEvents = errors.New("events: append carries no events")
	// ErrInvalidStream: a stream name is empty or malformed.
	ErrInvalidStream = errors.New("events: invalid stream name")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("events: store closed")
)

// VersionConflictError carries the numbers of a failed expected-version
// check. It matches ErrVersionConflict with errors.Is.
type VersionConflictError struct {
	Stream   string
	Expected ExpectedVersion
	// Actual is the stream's current version; ActualExists is false when the
	// stream has no events.
	Actual       uint64
	ActualExists bool
}

func (e *VersionConflictError) Error() string {
	actual := "no stream"
	if e.ActualExists {
		actual = strconv.FormatUint(e.Actual, 10)
	}
	return fmt.Sprintf("events: version conflict on stream %q: expected %s, stream is at %s", e.Stream, e.Expected, actual)
}

// Is makes errors.Is(err, ErrVersionConflict) true.
func (e *VersionConflictError) Is(target error) bool { return target == ErrVersionConflict }

// ExpectedVersion is the optimistic-concurrency condition of an append.
// Stream versions start at 0 for the first event of a stream.
type ExpectedVersion struct {
	kind    expectKind
	version uint64
}

type expectKind uint8

const (
	expectAny expectKind = iota
	expectNoStream
	expectExact
)

var (
	// AnyVersion appends whatever the stream's version is.
	AnyVersion = ExpectedVersion{kind: expectAny}
	// NoStream appends only if the stream has no events yet.
	NoStream = ExpectedVersion{kind: expectNoStream}
)

// Exactly appends only if the stream's last event has version v.
func Exactly(v uint64) ExpectedVersion { return ExpectedVersion{kind: expectExact, version: v} }

// IsAny reports whether e is AnyVersion.
func (e ExpectedVersion) IsAny() bool { return e.kind == expectAny }

// IsNoStream reports whether e is NoStream.
func (e ExpectedVersion) IsNoStream() bool { return e.kind == expectNoStream }

// Exact returns the version and true when e is Exactly(v).
func (e ExpectedVersion) Exact() (uint64, bool) { return e.version, e.kind == expectExact }

// Allows reports whether a stream whose current state is (version, exists)
// satisfies e.
func (e ExpectedVersion) Allows(version uint64, exists bool) bool {
	switch e.kind {
	case expectAny:
		return true
	case expectNoStream:
		return !exists
	default:
		return exists && version == e.version
	}
}

func (e ExpectedVersion) String() string {
	switch e.kind {
	case expectAny:
		return "any"
	case expectNoStream:
		return "no stream"
	default:
		return strconv.FormatUint(e.version, 10)
	}
}

// Position is a point in the global log. The embedded store numbers events
// 1, 2, 3… and sets Commit == Prepare; EventStoreDB uses its own commit and
// prepare positions. The zero Position is before the first event.
type Position struct {
	Commit  uint64
	Prepare uint64
}

// Start is the position before the first event of the global log.
var Start = Position{}

// Less reports whether p comes before q in the global log.
func (p Position) Less(q Position) bool {
	if p.Commit != q.Commit {
		return p.Commit < q.Commit
	}
	return p.Prepare < q.Prepare
}

// IsZero reports whether p is Start.
func (p Position) IsZero() bool { return p == Start }

// String renders p as "N" when both parts are equal, else "C/P".
func (p Position) String() string {
	if p.Commit == p.Prepare {
		return strconv.FormatUint(p.Commit, 10)
	}
	return strconv.FormatUint(p.Commit, 10) + "/" + strconv.FormatUint(p.Prepare, 10)
}

// ParsePosition parses the forms String produces.
func ParsePosition(s string) (Position, error) {
	c, p, found := strings.Cut(s, "/")
	cv, err := strconv.ParseUint(c, 10, 64)
	if err != nil {
		return Position{}, fmt.Errorf("events: position %q: %w", s, err)
	}
	if !found {
		return Position{Commit: cv, Prepare: cv}, nil
	}
	pv, err := strconv.ParseUint(p, 10, 64)
	if err != nil {
		return Position{}, fmt.Errorf("events: position %q: %w", s, err)
	}
	return Position{Commit: cv, Prepare: pv}, nil
}

// Proposed is an event about to be appended: its body is already encoded
// (see Propose).
type Proposed struct {
	// ID identifies the event. A retried append with the same IDs at the same
	// place of the stream is recognised and not written twice. Derive it with
	// ContentID, or leave it zero to get a random one.
	ID     uuid.UUID
	Type   string
	Schema int
	// At is when the event was decided (the scheduler's clock, which may be
	// virtual), not when it was stored.
	At            time.Time
	CausationID   uuid.UUID
	CorrelationID uuid.UUID
	Data          []byte
}

// Metadata describes where and when a stored event sits.
type Metadata struct {
	ID            uuid.UUID
	Stream        string
	Version       uint64
	Position      Position
	At            time.Time
	CausationID   uuid.UUID
	CorrelationID uuid.UUID
}

// Recorded is a stored event: its metadata, type, schema version and body.
type Recorded struct {
	Metadata
	Type   string
	Schema int
	Data   []byte
}

// AppendResult is where an append's last event landed.
type AppendResult struct {
	Version  uint64
	Position Position
}

// Store is the event log port. Implementations are safe for concurrent use.
//
// Streams are append-only sequences of events numbered from 0. The global log
// holds every event of every stream in append order; within one append the
// events are contiguous in the global log.
type Store interface {
	// Append writes evs to stream atomically if expected holds, and returns
	// once they are durable. A wrong expected version yields an error
	// matching ErrVersionConflict (a *VersionConflictError). An append whose
	// event IDs equal the events already stored right after the expected
	// version is treated as a retry: it writes nothing and returns the
	// original result.
	Append(ctx context.Context, stream string, expected ExpectedVersion, evs ...Proposed) (AppendResult, error)

	// ReadStream returns up to limit events of stream with version >= from,
	// in order (limit <= 0: all). A stream with no events yields an error
	// matching ErrStreamNotFound; reading past the end yields no events.
	ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]Recorded, error)

	// ReadAll returns up to limit events of the global log positioned after
	// after, in order (limit <= 0: all).
	ReadAll(ctx context.Context, after Position, limit int) ([]Recorded, error)

	// Subscribe calls handle for every event of the global log positioned
	// after after, in order: first those already stored, then new ones as they
	// are appended. It blocks until ctx ends (returning ctx.Err()), handle
	// returns an error (returned wrapped), or the store is closed (ErrClosed).
	// handle runs on the subscriber's goroutine, one event at a time.
	Subscribe(ctx context.Context, after Position, handle func(Recorded) error) error

	// Close releases the store. Calls after Close return ErrClosed.
	Close() error
}

// HeadReader is implemented by stores that know the position of the last
// event in the global log without reading it (the embedded store does).
// Callers test for it with a type assertion; Head is Start while the log is
// empty.
type HeadReader interface {
	Head() Position
}

// SnapshotStore is implemented by stores that keep a table of snapshots
// beside the log (the embedded store does): the scheduler keeps its tasks'
// folded state there, so that a restart reads one entry per task and the
// log's tail instead of the whole log. Callers test for it with a type
// assertion; a store without it is recovered from the log alone.
//
// Snapshot entries are not events: no read of the log sees them, and they
// are not durable until FlushSnapshot returns. A crash keeps the writes up
// to some point, in the order they were made: never a part of one write,
// and never a write without the ones before it.
type SnapshotStore interface {
	// WriteSnapshot sets every entry, all or none.
	WriteSnapshot(ctx context.Context, entries []SnapshotEntry) error
	// FlushSnapshot returns once every write made before it is durable.
	FlushSnapshot(ctx context.Context) error
	// ReadSnapshot calls fn with every entry, in the order of their keys;
	// key and value are valid only until fn returns. An error of fn ends
	// the read and is returned.
	ReadSnapshot(ctx context.Context, fn func(key, value []byte) error) error
	// ClearSnapshot deletes every entry, durably.
	ClearSnapshot(ctx context.Context) error
}

// SnapshotReader is implemented by snapshot stores that read one entry by
// its key (the embedded store does): loading one task reads its snapshot
// record and the task's events after it, not its whole stream. Callers test
// for it with a type assertion; without it a load reads the whole stream.
type SnapshotReader interface {
	// ReadSnapshotKey returns a copy of the value of the entry at key, and
	// whether there is one. Like ReadSnapshot it sees the writes made
	// before it, durable or not.
	ReadSnapshotKey(ctx context.Context, key []byte) ([]byte, bool, error)
}

// SnapshotEntry is one entry of a SnapshotStore.
type SnapshotEntry struct {
	Key, Value []byte
}

// TaskStreamPrefix starts the name of every task stream.
const TaskStreamPrefix = "task-"

// TaskStream names the stream of the task with the given ID.
func TaskStream(id uuid.UUID) string {
	var b [len(TaskStreamPrefix) + 36]byte
	return string(AppendUUID(append(b[:0], TaskStreamPrefix...), id))
}

// TaskIDFromStream parses a task stream name back into the task ID.
func TaskIDFromStream(stream string) (uuid.UUID, error) {
	rest, ok := strings.CutPrefix(stream, TaskStreamPrefix)
	if !ok {
		return uuid.UUID{}, fmt.Errorf("%w: %q is not a task stream", ErrInvalidStream, stream)
	}
	id, err := uuid.Parse(rest)
	if err != nil {
		return uuid.UUID{}, fmt.Errorf("%w: %q: %v", ErrInvalidStream, stream, err)
	}
	return id, nil
}

// ValidateStream checks a stream name: non-empty, at most 256 bytes, no
// control characters and no '/'.
func ValidateStream(stream string) error {
	if stream == "" || len(stream) > 256 {
		return fmt.Errorf("%w: length %d", ErrInvalidStream, len(stream))
	}
	for _, r := range stream {
		if r < 0x20 || r == 0x7f || r == '/' {
			return fmt.Errorf("%w: %q contains %q", ErrInvalidStream, stream, r)
		}
	}
	return nil
}

// idNamespace scopes the IDs this package derives.
var idNamespace = uuid.MustParse("6f1c2a52-2f4e-4d57-9a43-7d0f0c6f6e11")

// ContentID derives an event ID from where the event goes and what it says,
// so that retrying the same append is idempotent while a different event at
// the same place still conflicts.
func ContentID(stream string, expected ExpectedVersion, index int, typ string, data []byte) uuid.UUID {
	var buf [contentBuf]byte
	b := append(buf[:0], idNamespace[:]...)
	b = append(b, stream...)
	b = append(b, 0)
	b = appendExpected(b, expected)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(index), 10)
	b = append(b, 0)
	b = append(b, typ...)
	b = append(b, 0)
	b = append(b, data...)
	return sha1UUID(b)
}

// AsyncAppender is implemented by stores that can take an append without
// a goroutine of the caller's waiting for it to be durable (the embedded
// store can). Callers test for it with a type assertion, or use
// AppendAsync, which falls back on a goroutine. The task actors append
// through it.
//
// A wrapper that embeds such a store (a struct with an *embedded.Store
// field, say) and changes Append must change AppendAsync the same way, or
// the embedded AppendAsync is promoted and appends pass the wrapper by; a
// wrapper that embeds the events.Store interface hides it, and its appends
// take the goroutine fallback.
//
// Appends handed over this way are decided in the order they were handed
// over, as appends of waiting goroutines are in the order they called
// Append; a writer that needs two appends to one stream decided in order
// waits for the first answer before the second (the task actor does).
type AsyncAppender interface {
	// AppendAsync is Append that returns at once: done is called exactly
	// once, with the outcome Append would have returned, when the append is
	// decided and, if accepted, durable. done may run on a goroutine of the
	// store's, even before AppendAsync returns; it must not block (hand the
	// outcome on, as an actor message for instance) nor call the store.
	// ctx is checked when the append is handed over (an ended ctx gets its
	// error through done, and nothing is written); once handed over, the
	// append is decided whatever becomes of ctx, so a durable append is never
	// reported as failed. evs must not be changed until done is called.
	AppendAsync(ctx context.Context, stream string, expected ExpectedVersion, evs []Proposed, done func(AppendResult, error))
}

// AppendAsync appends evs to stream through s's AsyncAppender, or, for a
// store without one, calls s.Append on a goroutine of its own; either way
// done gets the outcome once (see AsyncAppender).
func AppendAsync(ctx context.Context, s Store, stream string, expected ExpectedVersion, evs []Proposed, done func(AppendResult, error)) {
	if a, ok := s.(AsyncAppender); ok {
		a.AppendAsync(ctx, stream, expected, evs, done)
		return
	}
	go func() { done(s.Append(ctx, stream, expected, evs...)) }()
}

// StreamVersioner is implemented by stores that find the version of a
// stream's last event without reading the stream (the embedded store and
// EventStoreDB do). Callers use StreamVersion, which falls back on point
// reads for a store without it.
type StreamVersioner interface {
	// StreamVersion is the version of stream's last event; a stream with
	// no events yields an error matching ErrStreamNotFound.
	StreamVersion(ctx context.Context, stream string) (uint64, error)
}

// StreamVersion returns the version of stream's last event: through s's
// StreamVersioner, or else by point reads (ReadStream with limit 1) that
// double a bound past the end and then halve the gap: about 2·log2(n)
// reads for a stream of n events, never a read of the whole stream. Paged
// readers of long streams (the audit trail) start from it.
func StreamVersion(ctx context.Context, s Store, stream string) (uint64, error) {
	if v, ok := s.(StreamVersioner); ok {
		return v.StreamVersion(ctx, stream)
	}
	exists := func(v uint64) (bool, error) {
		recs, err := s.ReadStream(ctx, stream, v, 1)
		return len(recs) > 0, err
	}
	if _, err := exists(0); err != nil {
		return 0, err // ErrStreamNotFound for an empty stream
	}
	// lo exists; hi does not.
	lo, hi := uint64(0), uint64(1)
	for {
		ok, err := exists(hi)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		lo = hi
		if hi > 1<<62 {
			return 0, fmt.Errorf("events: stream %q: no end found", stream)
		}
		hi *= 2
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := exists(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// Truncater is implemented by stores that remove the start of a stream
// (both shipped stores do): history retention (DESIGN §8.3) removes a
// task's events before its TaskCompacted event. Callers test for it with a
// type assertion; with a store that lacks it, tasks keep their whole
// history (the scheduler logs that once).
//
// After TruncateBefore(stream, v) returns, ReadStream of stream yields
// nothing with a version below v: a read from 0 starts at v. Versions are
// not renumbered, the stream's version and expected-version checks are as
// before, and appends go on from the last version. Whether the global log
// (ReadAll, Subscribe) still holds the removed events is the backend's
// (the embedded store removes them; EventStoreDB keeps them in $all until
// it scavenges): a reader of the global log must fold a TaskCompacted as
// the start of its stream either way.
type Truncater interface {
	// TruncateBefore removes the events of stream with a version below
	// before, durably. before must not be above the stream's last version
	// (a stream always keeps its last event): a larger one yields
	// ErrTruncateRange and removes nothing. Removing what is already
	// removed is not an error. A stream with no events yields
	// ErrStreamNotFound.
	TruncateBefore(ctx context.Context, stream string, before uint64) error
}

// ErrTruncateRange: TruncateBefore would remove a stream's last event.
var ErrTruncateRange = errors.New("events: truncation past the stream's last event")
