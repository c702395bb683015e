package esdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cronactor/cronactor/events"
)

// Store is events.Store on an EventStoreDB server (or cluster). It is safe
// for concurrent use.
type Store struct {
	opts    Options
	clients *clients
	filter  *esdb.SubscriptionFilter

	// life ends when Close is called; every call's context is tied to it.
	life     context.Context
	endLife  context.CancelFunc
	mu       sync.RWMutex
	closed   bool
	inflight sync.WaitGroup
}

var _ events.Store = (*Store)(nil)

// Open returns a store on the server named by url, an EventStoreDB
// connection string such as "esdb://localhost:2113?tls=false" or
// "esdb://admin:changeit@node1:2113,node2:2113?tlsCAFile=ca.crt".
//
// Open checks the connection string and the options but does not wait for
// the server: the store connects on first use and reconnects whenever the
// connection is lost, so a scheduler can start before its server. ctx only
// bounds Open itself.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	cfg, err := esdb.ParseConnectionString(url)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	cfg.Logger = clientLogger(opts.Logger)
	life, end := context.WithCancel(context.Background())
	s := &Store{
		opts:    opts,
		clients: &clients{cfg: *cfg, log: opts.Logger, minBackoff: opts.MinBackoff, maxBackoff: opts.MaxBackoff, now: time.Now},
		filter:  streamFilter(opts.Namespace, opts.StreamPrefixes),
		life:    life,
		endLife: end,
	}
	return s, nil
}

// WriteStatus implements events.WriteStatusReader from the connection's
// state as the connection attempts left it, without reaching for the
// server: while the server cannot be reached, Err matches
// events.ErrUnreachable and says since when, after how many failed
// attempts, and the last error — or, during a first attempt that has not
// failed yet, that it has had no answer for half a second or more. The store reconnects by itself
// (RestartNeeded is false); a caller polling this (a health check) sees it
// as soon as an attempt — any call's, or a subscription's — succeeds.
func (s *Store) WriteStatus() events.WriteStatus {
	return events.WriteStatus{Err: s.clients.unreachable()}
}

var _ events.WriteStatusReader = (*Store)(nil)

// streamFilter is the server-side filter of the global log's subscription.
func streamFilter(namespace string, prefixes []string) *esdb.SubscriptionFilter {
	var full []string
	for _, p := range prefixes {
		if namespace+p == "" {
			return &esdb.SubscriptionFilter{Type: esdb.StreamFilterType, Regex: `^[^$]`}
		}
		full = append(full, namespace+p)
	}
	return &esdb.SubscriptionFilter{Type: esdb.StreamFilterType, Prefixes: full}
}

// enter registers a call; it fails once the store is closed. The returned
// context ends with ctx or with Close.
func (s *Store) enter(ctx context.Context) (context.Context, func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return nil, nil, events.ErrClosed
	}
	s.inflight.Add(1)
	s.mu.RUnlock()
	cctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.life, cancel)
	return cctx, func() {
		stop()
		cancel()
		s.inflight.Done()
	}, nil
}

// ended turns the end of a call's context into the right error: ErrClosed
// when the store was closed, else the caller's context error.
func (s *Store) ended(caller context.Context, err error) error {
	if s.life.Err() != nil {
		return events.ErrClosed
	}
	if caller.Err() != nil {
		return caller.Err()
	}
	return err
}

// Close ends every call and subscription (they return events.ErrClosed) and
// closes the connection. It waits for the calls to return.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.endLife()
	s.inflight.Wait()
	s.clients.close()
	return nil
}

// retry runs op on the current client until it succeeds, fails for a
// reason other than the connection, or Options.RetryFor has passed.
func retry[T any](s *Store, caller, ctx context.Context, what string, op func(context.Context, *esdb.Client) (T, error)) (T, error) {
	var zero T
	start := time.Now()
	backoff := s.opts.MinBackoff
	for attempt := 1; ; attempt++ {
		v, gen, err := run(ctx, s.clients, op)
		if gen == nil {
			if ctx.Err() != nil {
				return zero, s.ended(caller, err)
			}
			return zero, err
		}
		if err == nil {
			return v, nil
		}
		if ctx.Err() != nil {
			return zero, s.ended(caller, err)
		}
		if !transient(err) {
			return zero, err
		}
		s.clients.retire(gen, err)
		if s.opts.RetryFor < 0 || time.Since(start)+backoff > s.opts.RetryFor {
			return zero, fmt.Errorf("%w: %s: %d attempts in %s: %v", ErrUnavailable, what, attempt, time.Since(start).Round(time.Millisecond), err)
		}
		s.opts.Logger.Debug("esdb retrying", "operation", what, "attempt", attempt, "error", err)
		if err := wait(ctx, backoff); err != nil {
			return zero, s.ended(caller, err)
		}
		backoff = min(2*backoff, s.opts.MaxBackoff)
	}
}

// wait sleeps d or until ctx ends. It is the pause between two attempts to
// reach a server, not a way to wait for an event.
func wait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func checkStream(stream string) error {
	if err := events.ValidateStream(stream); err != nil {
		return err
	}
	if strings.HasPrefix(stream, "$") {
		return fmt.Errorf("%w: %q is a system stream", events.ErrInvalidStream, stream)
	}
	return nil
}

func expectedRevision(e events.ExpectedVersion) esdb.ExpectedRevision {
	if v, ok := e.Exact(); ok {
		return esdb.Revision(v)
	}
	if e.IsNoStream() {
		return esdb.NoStream{}
	}
	return esdb.Any{}
}

// Append writes evs to stream if expected holds. Events without an ID get a
// random one before the first attempt, so that the adapter's own retries
// after a lost answer are recognised by the server as retries.
func (s *Store) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	if err := checkStream(stream); err != nil {
		return events.AppendResult{}, err
	}
	if len(evs) == 0 {
		return events.AppendResult{}, events.ErrNoEvents
	}
	data := make([]esdb.EventData, len(evs))
	for i, e := range evs {
		if e.Type == "" {
			return events.AppendResult{}, fmt.Errorf("%w: event %d of the append to %q has no type", ErrInvalidEvent, i, stream)
		}
		meta, err := encodeMetadata(e)
		if err != nil {
			return events.AppendResult{}, err
		}
		id := e.ID
		if id == uuid.Nil {
			id = uuid.New()
		}
		data[i] = esdb.EventData{EventID: id, EventType: e.Type, ContentType: esdb.ContentTypeJson, Data: e.Data, Metadata: meta}
	}
	cctx, done, err := s.enter(ctx)
	if err != nil {
		return events.AppendResult{}, err
	}
	defer done()

	opts := esdb.AppendToStreamOptions{ExpectedRevision: expectedRevision(expected)}
	wr, err := retry(s, ctx, cctx, "append", func(ctx context.Context, cl *esdb.Client) (*esdb.WriteResult, error) {
		return cl.AppendToStream(ctx, s.opts.Namespace+stream, opts, data...)
	})
	if isCode(err, esdb.ErrorCodeWrongExpectedVersion) {
		conflict := &events.VersionConflictError{Stream: stream, Expected: expected}
		last, found, lerr := s.lastEvent(ctx, cctx, stream)
		if lerr != nil {
			return events.AppendResult{}, fmt.Errorf("esdb: append to %q: %w (reading the current version failed: %v)", stream, conflict, lerr)
		}
		if found {
			conflict.Actual, conflict.ActualExists = last.Version, true
		}
		return events.AppendResult{}, conflict
	}
	if err != nil && status.Code(err) == codes.InvalidArgument && strings.Contains(err.Error(), "Maximum Append Size") {
		return events.AppendResult{}, fmt.Errorf("%w: append of %d events to %q: %v", ErrTooLarge, len(evs), stream, err)
	}
	if err != nil {
		return events.AppendResult{}, fmt.Errorf("esdb: append to %q: %w", stream, err)
	}
	res := events.AppendResult{Version: wr.NextExpectedVersion, Position: events.Position{Commit: wr.CommitPosition, Prepare: wr.PreparePosition}}
	if len(evs) == 1 && !res.Position.IsZero() {
		return res, nil
	}
	// The server answers with the position of the write as a whole, and
	// with no position at all when it recognised a retry: read the last
	// event back for its exact place.
	if v, ok := expected.Exact(); ok {
		res.Version = v + uint64(len(evs))
	} else if expected.IsNoStream() {
		res.Version = uint64(len(evs)) - 1
	}
	lastID := data[len(data)-1].EventID
	recs, err := s.readStream(ctx, cctx, stream, res.Version, 1)
	if err == nil && (len(recs) != 1 || recs[0].ID != lastID) {
		// A retry with AnyVersion: the server's answer may name the
		// stream's current version; find the event itself.
		recs, err = s.readStream(ctx, cctx, stream, 0, 0)
		if err == nil {
			recs = slices.DeleteFunc(recs, func(r events.Recorded) bool { return r.ID != lastID })
		}
	}
	if err != nil {
		return events.AppendResult{}, fmt.Errorf("esdb: append to %q: written, but reading it back failed: %w", stream, err)
	}
	if len(recs) != 1 {
		return events.AppendResult{}, fmt.Errorf("esdb: append to %q: written, but its last event %s is not in the stream", stream, lastID)
	}
	res.Version, res.Position = recs[0].Version, recs[0].Position
	return res, nil
}

// ReadStream returns up to limit events of stream from version from on.
func (s *Store) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	if err := checkStream(stream); err != nil {
		return nil, err
	}
	cctx, done, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	recs, err := s.readStream(ctx, cctx, stream, from, limit)
	if err != nil {
		return nil, fmt.Errorf("esdb: read %q: %w", stream, err)
	}
	return recs, nil
}

func (s *Store) readStream(caller, ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	count := uint64(math.MaxInt64)
	if limit > 0 {
		count = uint64(limit)
	}
	opts := esdb.ReadStreamOptions{Direction: esdb.Forwards, From: esdb.Revision(from)}
	recs, err := retry(s, caller, ctx, "read stream", func(ctx context.Context, cl *esdb.Client) ([]events.Recorded, error) {
		return s.collect(ctx, cl, stream, opts, count)
	})
	if isCode(err, esdb.ErrorCodeResourceNotFound) || isCode(err, esdb.ErrorCodeStreamDeleted) {
		return nil, events.ErrStreamNotFound
	}
	return recs, err
}

// lastEvent reads the last event of stream; found is false when the stream
// has no events.
func (s *Store) lastEvent(caller, ctx context.Context, stream string) (events.Recorded, bool, error) {
	opts := esdb.ReadStreamOptions{Direction: esdb.Backwards, From: esdb.End{}}
	recs, err := retry(s, caller, ctx, "read stream", func(ctx context.Context, cl *esdb.Client) ([]events.Recorded, error) {
		return s.collect(ctx, cl, stream, opts, 1)
	})
	if isCode(err, esdb.ErrorCodeResourceNotFound) || isCode(err, esdb.ErrorCodeStreamDeleted) {
		return events.Recorded{}, false, nil
	}
	if err != nil || len(recs) == 0 {
		return events.Recorded{}, false, err
	}
	return recs[0], true, nil
}

// collect runs one stream read to its end.
func (s *Store) collect(ctx context.Context, cl *esdb.Client, stream string, opts esdb.ReadStreamOptions, count uint64) ([]events.Recorded, error) {
	rs, err := cl.ReadStream(ctx, s.opts.Namespace+stream, opts, count)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []events.Recorded
	for {
		ev, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s.recorded(ev))
	}
}

// ReadAll returns up to limit events of the global log after after. It
// reads $all page by page and keeps the events of our streams.
func (s *Store) ReadAll(ctx context.Context, after events.Position, limit int) ([]events.Recorded, error) {
	cctx, done, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	var out []events.Recorded
	cursor := after
	page := uint64(s.opts.PageSize)
	if limit > 0 {
		// Not much more than asked for (+1: a read from a position starts
		// with the event at it), nor so little that events of other
		// streams cost a round trip each.
		page = uint64(min(s.opts.PageSize, max(limit+1, 64)))
	}
	for {
		opts := esdb.ReadAllOptions{Direction: esdb.Forwards, From: esdb.Start{}}
		if !cursor.IsZero() {
			opts.From = esdb.Position{Commit: cursor.Commit, Prepare: cursor.Prepare}
		}
		batch, err := retry(s, ctx, cctx, "read $all", func(ctx context.Context, cl *esdb.Client) ([]*esdb.ResolvedEvent, error) {
			rs, err := cl.ReadAll(ctx, opts, page)
			if err != nil {
				return nil, err
			}
			defer rs.Close()
			var got []*esdb.ResolvedEvent
			for {
				ev, err := rs.Recv()
				if errors.Is(err, io.EOF) {
					return got, nil
				}
				if err != nil {
					return nil, err
				}
				got = append(got, ev)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("esdb: read $all after %s: %w", cursor, err)
		}
		for _, ev := range batch {
			e := ev.OriginalEvent()
			pos := events.Position{Commit: e.Position.Commit, Prepare: e.Position.Prepare}
			// Reading from a position includes the event at that position.
			if !cursor.Less(pos) {
				continue
			}
			cursor = pos
			if !s.opts.includes(e.StreamID) {
				continue
			}
			out = append(out, s.recorded(ev))
			if limit > 0 && len(out) == limit {
				return out, nil
			}
		}
		if uint64(len(batch)) < page {
			return out, nil
		}
	}
}

// Subscribe delivers the global log after after to handle, then follows
// it. When the subscription drops (server restart, lost leader, network) it
// subscribes again from the last event handled, so nothing is lost and
// nothing is handled twice.
func (s *Store) Subscribe(ctx context.Context, after events.Position, handle func(events.Recorded) error) error {
	cctx, done, err := s.enter(ctx)
	if err != nil {
		return err
	}
	defer done()
	cursor := after
	backoff := s.opts.MinBackoff
	for {
		opts := esdb.SubscribeToAllOptions{From: esdb.Start{}, Filter: s.filter}
		if !cursor.IsZero() {
			opts.From = esdb.Position{Commit: cursor.Commit, Prepare: cursor.Prepare}
		}
		type live struct {
			sub  *esdb.Subscription
			stop func() bool
		}
		l, gen, err := run(cctx, s.clients, func(ctx context.Context, cl *esdb.Client) (live, error) {
			sub, err := cl.SubscribeToAll(ctx, opts)
			if err != nil {
				return live{}, err
			}
			// Ends the subscription with Subscribe, even when Subscribe
			// stopped waiting for it before it was made.
			return live{sub: sub, stop: context.AfterFunc(cctx, func() { _ = sub.Close() })}, nil
		})
		if gen == nil {
			return s.ended(ctx, err)
		}
		if err == nil {
			backoff = s.opts.MinBackoff // the server is there
			sub := l.sub
			err = s.pump(sub, &cursor, handle)
			l.stop()
			_ = sub.Close()
			var herr *handlerError
			if errors.As(err, &herr) {
				return fmt.Errorf("esdb: subscription handler at %s: %w", cursor, herr.err)
			}
		}
		if cctx.Err() != nil {
			return s.ended(ctx, cctx.Err())
		}
		if !transient(err) && !(isDrop(err) && !permanent(err)) {
			return fmt.Errorf("esdb: subscribe after %s: %w", cursor, err)
		}
		s.clients.retire(gen, err)
		lvl := slog.LevelInfo
		if l.sub == nil {
			lvl = slog.LevelDebug // never subscribed: the connection's own line says why
		}
		s.opts.Logger.Log(cctx, lvl, "esdb subscription dropped; resubscribing", "position", cursor.String(), "error", err)
		if err := wait(cctx, backoff); err != nil {
			return s.ended(ctx, err)
		}
		backoff = min(2*backoff, s.opts.MaxBackoff)
	}
}

// handlerError carries the error of the subscriber's handler out of pump.
type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }

// dropError is a dropped subscription.
type dropError struct{ err error }

func (e *dropError) Error() string { return "subscription dropped: " + e.err.Error() }
func (e *dropError) Unwrap() error { return e.err }

func isDrop(err error) bool {
	var d *dropError
	return errors.As(err, &d)
}

// permanent reports whether a dropped subscription was refused for a reason
// that subscribing again will not cure.
func permanent(err error) bool {
	switch status.Code(err) {
	case codes.PermissionDenied, codes.Unauthenticated, codes.InvalidArgument, codes.NotFound, codes.Unimplemented:
		return true
	}
	return false
}

// pump hands the subscription's events to handle until it drops or handle
// fails, advancing *cursor past every event handled or filtered out.
func (s *Store) pump(sub *esdb.Subscription, cursor *events.Position, handle func(events.Recorded) error) error {
	for {
		ev, err := recv(sub)
		if err != nil {
			return err
		}
		if ev.EventAppeared == nil {
			continue // checkpoints, caught-up and fell-behind notices
		}
		e := ev.EventAppeared.OriginalEvent()
		pos := events.Position{Commit: e.Position.Commit, Prepare: e.Position.Prepare}
		if !cursor.Less(pos) {
			continue // already handled before a resubscription
		}
		if !s.opts.includes(e.StreamID) {
			*cursor = pos
			continue
		}
		if err := handle(s.recorded(ev.EventAppeared)); err != nil {
			return &handlerError{err: err}
		}
		*cursor = pos
	}
}

// recv reads the next subscription message; a drop becomes an error.
func recv(sub *esdb.Subscription) (ev *esdb.SubscriptionEvent, err error) {
	defer recoverClient(&err)
	ev = sub.Recv()
	if ev.SubscriptionDropped != nil {
		cause := ev.SubscriptionDropped.Error
		if cause == nil {
			cause = errors.New("no reason given")
		}
		return nil, &dropError{err: cause}
	}
	return ev, nil
}

// recorded converts an event read from the server. Metadata that is not
// ours leaves Schema at 0 (which events.Decode refuses) and At at the
// server's creation time; the problem is logged.
func (s *Store) recorded(ev *esdb.ResolvedEvent) events.Recorded {
	e := ev.OriginalEvent()
	r := events.Recorded{
		Metadata: events.Metadata{
			ID:       e.EventID,
			Stream:   strings.TrimPrefix(e.StreamID, s.opts.Namespace),
			Version:  e.EventNumber,
			Position: events.Position{Commit: e.Position.Commit, Prepare: e.Position.Prepare},
			At:       e.CreatedDate.UTC(),
		},
		Type: e.EventType,
		Data: e.Data,
	}
	m, err := decodeMetadata(e.UserMetadata)
	if err != nil {
		s.opts.Logger.Warn("esdb event metadata not understood", "stream", e.StreamID, "version", e.EventNumber, "error", err)
		return r
	}
	if !m.At.IsZero() {
		r.At = m.At.UTC()
	}
	r.Schema = m.Schema
	if m.CausationID != nil {
		r.CausationID = *m.CausationID
	}
	if m.CorrelationID != nil {
		r.CorrelationID = *m.CorrelationID
	}
	return r
}

// StreamVersion is the version of stream's last event
// (events.StreamVersioner): one backward read of one event.
func (s *Store) StreamVersion(ctx context.Context, stream string) (uint64, error) {
	if err := checkStream(stream); err != nil {
		return 0, err
	}
	cctx, done, err := s.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer done()
	rec, found, err := s.lastEvent(ctx, cctx, stream)
	if err != nil {
		return 0, fmt.Errorf("esdb: read %q: %w", stream, err)
	}
	if !found {
		return 0, fmt.Errorf("esdb: read %q: %w", stream, events.ErrStreamNotFound)
	}
	return rec.Version, nil
}
