package esdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cronactor/cronactor/events"
)

// Errors of this package. Store methods also return the events package's
// sentinels (events.ErrVersionConflict, events.ErrStreamNotFound, …).
var (
	// ErrInvalidOptions: a field of Options is out of its limits.
	ErrInvalidOptions = errors.New("esdb: invalid options")
	// ErrInvalidURL: the connection string does not parse.
	ErrInvalidURL = errors.New("esdb: invalid connection string")
	// ErrUnavailable: the server could not be reached within
	// Options.RetryFor.
	ErrUnavailable = errors.New("esdb: server unavailable")
	// ErrInvalidEvent: a proposed event cannot be stored (no type).
	ErrInvalidEvent = errors.New("esdb: invalid event")
	// ErrTooLarge: the server refused an append larger than its maximum
	// append size (EventStoreDB's MaxAppendSize, 1 MiB by default).
	ErrTooLarge = errors.New("esdb: append exceeds the server's maximum append size")
	// ErrMetadata: an event's user metadata is not ours.
	ErrMetadata = errors.New("esdb: malformed event metadata")

	// errClientBroken marks a panic of the client library turned into an
	// error; the client that panicked is replaced.
	errClientBroken = errors.New("esdb: client library failed")
)

// errRetired: the call was abandoned because its client was replaced
// meanwhile; it is retried on the new client.
var errRetired = errors.New("esdb: connection replaced during the call")

// clients holds the current client and replaces it when it breaks.
//
// The v4 client has failure modes it does not recover from by itself: a
// client whose connection discovery failed (first connection, or after a
// lost connection) stays closed for good, and a failed read does not make it
// look for the leader again. So the adapter keeps one client at a time (a
// generation); an operation that fails for a reason of the connection
// retires its generation and the next operation builds a fresh client.
//
// Closing a client while one of its calls is reporting a failure makes the
// client send on a closed channel (a panic, and a data race). So a retired
// client is closed only once no call runs on it any more: each generation
// counts the calls running on it. Until a generation has reached the server
// once, only one call at a time (the pilot) may use it: a failed discovery
// then strands no other call inside the client.
type clients struct {
	cfg esdb.Configuration // template; each client gets its own copy
	log *slog.Logger
	// minBackoff and maxBackoff bound the wait between two connection
	// attempts (Options.MinBackoff, MaxBackoff).
	minBackoff, maxBackoff time.Duration
	now                    func() time.Time // time.Now; tests may replace it

	mu     sync.Mutex
	cur    *generation
	nextID uint64
	closed bool
	// The connection's state, shared by every call: while the server
	// cannot be reached, a new client (a connection attempt) is built no
	// sooner than notBefore, the backoff doubling with each failed
	// attempt, whatever the number of callers — one attempt, and one log
	// line, at a time.
	failures  int       // connection attempts failed in a row
	notBefore time.Time // no connection attempt before
	down      error     // why the server is unreachable; nil: reached, or not tried yet
	downSince time.Time
	// connecting is when the current attempt to reach the server began,
	// while no attempt has reached it yet (zero once one has).
	connecting time.Time

	// calls counts the goroutines running client calls, which may outlive
	// their caller (see run).
	calls sync.WaitGroup
}

// generation is one client and the calls running on it.
type generation struct {
	id     uint64
	client *esdb.Client
	pilot  chan struct{} // capacity 1: held by the call trying to connect
	ready  chan struct{} // closed once a call reached the server
	gone   chan struct{} // closed when retired

	// guarded by clients.mu
	refs      int
	isReady   bool
	retired   bool
	clientOff bool // client closed
}

// acquire returns the current generation, building one if needed, with a
// call counted on it. pilot is true when the caller is the one call allowed
// on a generation that has not reached the server yet; it must pass it back
// to release.
func (c *clients) acquire(ctx context.Context) (g *generation, pilot bool, err error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, false, events.ErrClosed
		}
		if c.cur == nil {
			if d := c.notBefore.Sub(c.now()); d > 0 {
				c.mu.Unlock()
				if err := wait(ctx, d); err != nil {
					return nil, false, err
				}
				continue
			}
			cfg := c.cfg
			cl, err := esdb.NewClient(&cfg)
			if err != nil {
				c.mu.Unlock()
				return nil, false, fmt.Errorf("%w: %v", ErrInvalidURL, err)
			}
			c.nextID++
			if c.connecting.IsZero() && (c.nextID == 1 || c.down != nil) {
				c.connecting = c.now()
			}
			c.cur = &generation{id: c.nextID, client: cl, pilot: make(chan struct{}, 1), ready: make(chan struct{}), gone: make(chan struct{})}
			if c.nextID > 1 {
				c.log.Debug("esdb client replaced", "generation", c.nextID)
			}
		}
		g = c.cur
		c.mu.Unlock()

		pilot = false
		select {
		case <-g.ready:
		case g.pilot <- struct{}{}:
			pilot = true
		case <-g.gone:
			continue
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
		c.mu.Lock()
		if g.retired {
			c.mu.Unlock()
			if pilot {
				<-g.pilot
			}
			continue
		}
		g.refs++
		c.mu.Unlock()
		return g, pilot, nil
	}
}

// release ends a call on g. reached tells whether the call got an answer
// from the server, which makes the generation ready for everyone.
func (c *clients) release(g *generation, pilot, reached bool) {
	c.mu.Lock()
	g.refs--
	var was error
	var after int
	var downFor time.Duration
	if reached && !g.isReady {
		g.isReady = true
		close(g.ready)
		if !g.retired {
			was, after, downFor = c.down, c.failures, c.now().Sub(c.downSince)
			c.down, c.failures, c.notBefore, c.connecting = nil, 0, time.Time{}, time.Time{}
		}
	}
	closeNow := g.retired && g.refs == 0 && !g.clientOff
	if closeNow {
		g.clientOff = true
	}
	c.mu.Unlock()
	if was != nil {
		c.log.Info("esdb server reached again", "generation", g.id, "failed_attempts", after, "down_for", downFor.Round(time.Millisecond))
	}
	if pilot {
		<-g.pilot
	}
	if closeNow {
		_ = g.client.Close()
	}
}

// retire drops g if not done yet: calls waiting for it move on to a new
// generation, calls running on it are abandoned by their callers, and the
// client is closed once the last of them returns.
func (c *clients) retire(g *generation, why error) {
	c.mu.Lock()
	if g.retired {
		c.mu.Unlock()
		return
	}
	g.retired = true
	close(g.gone)
	if c.cur == g {
		c.cur = nil
	}
	closeNow := g.refs == 0 && !g.clientOff
	if closeNow {
		g.clientOff = true
	}
	// A generation that never reached the server was one failed
	// connection attempt: the next waits out the backoff. One that had
	// reached it lost its connection: the next attempt is at once.
	attempt, backoff := 0, time.Duration(0)
	if why != nil {
		now := c.now()
		if c.down == nil {
			c.downSince = now
		}
		c.down = why
		if !g.isReady {
			c.failures++
			attempt = c.failures
			backoff = c.minBackoff
			for i := 1; i < c.failures && backoff < c.maxBackoff; i++ {
				backoff *= 2
			}
			backoff = min(backoff, c.maxBackoff)
			c.notBefore = now.Add(backoff)
		}
	}
	c.mu.Unlock()
	switch {
	case why == nil:
	case attempt > 0:
		c.log.Warn("esdb server unreachable", "generation", g.id, "attempt", attempt, "backoff", backoff, "error", why)
	default:
		c.log.Warn("esdb connection lost", "generation", g.id, "error", why)
	}
	if closeNow {
		_ = g.client.Close()
	}
}

// connectGrace is how long a first attempt to reach the server may take
// before the store says it is unreachable without waiting for the attempt
// to fail: the client's discovery of an absent server takes a second or
// more (its maxDiscoverAttempts × discoveryInterval), a present one
// answers in milliseconds.
const connectGrace = 500 * time.Millisecond

// unreachable says why the server cannot be reached, as the connection
// attempts found it, or nil while it was reached (or before any attempt,
// or during the first connectGrace of one). It does not block.
func (c *clients) unreachable() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	switch {
	case c.down != nil:
		return fmt.Errorf("%w since %s (%d connection attempts failed in a row): %v",
			events.ErrUnreachable, c.downSince.UTC().Format(time.RFC3339), c.failures, c.down)
	case !c.connecting.IsZero() && now.Sub(c.connecting) >= connectGrace:
		return fmt.Errorf("%w: no answer %s after the first attempt to connect began",
			events.ErrUnreachable, now.Sub(c.connecting).Round(time.Millisecond))
	}
	return nil
}

// closeWait bounds how long close waits for client calls to return after
// their context ended. A call can only outlive that when it is stuck inside
// a client whose connection goroutine is gone.
const closeWait = 5 * time.Second

// close retires the current generation and waits (up to closeWait) for the
// calls still inside the client library; acquire fails afterwards.
func (c *clients) close() {
	c.mu.Lock()
	g := c.cur
	c.closed = true
	c.mu.Unlock()
	if g != nil {
		c.retire(g, nil)
	}
	done := make(chan struct{})
	go func() {
		c.calls.Wait()
		close(done)
	}()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.log.Warn("esdb close: calls still stuck in the client library", "waited", closeWait.String())
	}
}

// recoverClient turns a panic of the client library, raised on the calling
// goroutine, into *err. Use as: defer recoverClient(&err).
func recoverClient(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %v", errClientBroken, r)
	}
}

// transient reports whether err is a failure of the connection rather than
// an answer of the server: retrying on a fresh client may succeed.
func transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, errClientBroken) || errors.Is(err, errRetired) {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		// A request stream that broke while sending reports a bare EOF.
		return true
	}
	var e *esdb.Error
	if errors.As(err, &e) {
		switch e.Code() {
		case esdb.ErrorCodeConnectionClosed, esdb.ErrorUnavailable, esdb.ErrorCodeNotLeader,
			esdb.ErrorCodeDeadlineExceeded, esdb.ErrorAborted:
			return true
		case esdb.ErrorCodeUnknown:
			// Look at the gRPC status underneath.
		default:
			return false
		}
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.Canceled, codes.Aborted, codes.DeadlineExceeded:
		// Canceled without the caller's context being done means the
		// connection was closed under the call (a retired client).
		return true
	}
	return false
}

// isCode reports whether err is an *esdb.Error with the given code.
func isCode(err error, code esdb.ErrorCode) bool {
	var e *esdb.Error
	return errors.As(err, &e) && e.Code() == code
}

// run calls op on the current client, on a goroutine of its own, so that
// the caller's context bounds the wait even where the client ignores it
// (connection discovery, its internal channel), so that a call stuck in a
// replaced client is abandoned, and so that a panic of the client is
// recovered. It returns the generation used, for retire. op gets a context
// without the caller's cancellation (see below); a call that must end with
// the caller (a subscription) arranges that itself.
func run[T any](ctx context.Context, c *clients, op func(context.Context, *esdb.Client) (T, error)) (T, *generation, error) {
	var zero T
	g, pilot, err := c.acquire(ctx)
	if err != nil {
		return zero, nil, err
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	c.calls.Add(1)
	go func() {
		defer c.calls.Done()
		var r result
		defer func() {
			c.release(g, pilot, r.err == nil || !transient(r.err))
			ch <- r
		}()
		defer recoverClient(&r.err)
		// The client is not given the caller's cancellation: when a
		// call is cancelled from outside while its request stream is
		// failing, the v4 client reads the call's header and trailer
		// while gRPC still writes them (a data race). The caller still
		// stops waiting when its context ends; the call then finishes on
		// its own (the client bounds appends by its default deadline).
		r.v, r.err = op(context.WithoutCancel(ctx), g.client)
	}()
	select {
	case r := <-ch:
		return r.v, g, r.err
	case <-ctx.Done():
		return zero, g, ctx.Err()
	case <-g.gone:
		select {
		case r := <-ch:
			return r.v, g, r.err
		default:
			return zero, g, errRetired
		}
	}
}
