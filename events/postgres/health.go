package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/jackc/pgx/v5"
)

var _ events.WriteStatusReader = (*Store)(nil)

// probeInterval is how often the prober asks the server whether it answers
// while the store holds it unreachable, or suspects it is.
const probeInterval = 500 * time.Millisecond

// probeTimeout bounds one probe (at most OpTimeout).
const probeTimeout = 2 * time.Second

// health is what the store knows about its server. One judge decides it:
// the prober, which opens a connection of its own and asks SELECT 1; the
// store's other work (a group commit, a read, the listener) only calls it
// in when it meets a broken connection, and a committed group says the
// server answers. So one killed connection (pg_terminate_backend, a
// pooler's restart) is not taken for an outage, and an outage is seen
// within a probe's time whatever failed first. WriteStatus reads it
// without blocking.
type health struct {
	mu       sync.Mutex
	down     error     // why appends are refused (the last failed probe); nil: accepted
	since    time.Time // when down began
	failures int       // probes failed in a row since down began
	refused  uint64    // appends failed on the server since the last success
	kick     chan struct{}
}

func newHealth() *health { return &health{kick: make(chan struct{}, 1)} }

// WriteStatus implements events.WriteStatusReader. While the server cannot
// be reached (the prober could not connect and run SELECT 1, and no group
// has committed since) Err matches events.ErrUnreachable and
// ErrUnavailable and says since when; the prober tries again every
// probeInterval meanwhile, so the status clears within about a second of
// the server answering again, even when nothing appends. It does not
// block.
func (s *Store) WriteStatus() events.WriteStatus {
	h := s.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down == nil {
		return events.WriteStatus{}
	}
	return events.WriteStatus{
		Err: fmt.Errorf("%w since %s (%d probes failed in a row): %w", events.ErrUnreachable,
			h.since.UTC().Format(time.RFC3339), h.failures, h.down),
		Refused: h.refused,
	}
}

// failed records that work of the store met a broken connection or an
// unreachable server (refused: the appends that failed with it) and has
// the prober find out which.
func (s *Store) failed(refused int) {
	s.health.mu.Lock()
	s.health.refused += uint64(refused)
	s.health.mu.Unlock()
	s.suspect()
}

// suspect kicks the prober.
func (s *Store) suspect() {
	select {
	case s.health.kick <- struct{}{}:
	default:
	}
}

// markDown records a failed probe; the first after a success is logged at
// ERROR, once.
func (s *Store) markDown(err error) {
	h := s.health
	h.mu.Lock()
	first := h.down == nil
	if first {
		h.since = time.Now()
		h.failures = 0
	}
	h.down = err
	h.failures++
	h.mu.Unlock()
	if first {
		s.log.Error("postgres server unreachable: appends refused until it answers; reads of the view go on",
			"condition", "unreachable", "error", err)
	}
}

// answered records that the server took a commit or answered a probe.
func (s *Store) answered() {
	h := s.health
	h.mu.Lock()
	was, refused, since := h.down, h.refused, h.since
	h.down, h.refused, h.failures = nil, 0, 0
	h.mu.Unlock()
	if was != nil {
		s.log.Info("postgres server answers again: appends resume", "refused_appends", refused,
			"down_for", time.Since(since).Round(time.Millisecond))
	}
}

func (s *Store) isDown() bool {
	s.health.mu.Lock()
	defer s.health.mu.Unlock()
	return s.health.down != nil
}

// probeLoop runs until ctx ends: once kicked, it probes the server, and
// again every probeInterval for as long as the server does not answer.
func (s *Store) probeLoop(ctx context.Context) {
	defer s.bg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.health.kick:
		}
		for {
			s.probe(ctx)
			if ctx.Err() != nil || !s.isDown() {
				break
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(probeInterval):
			}
		}
	}
}

// probe connects (a connection of its own: the pool's may be broken ones
// it has not found yet), asks SELECT 1, and records the outcome.
func (s *Store) probe(ctx context.Context) {
	limit := min(probeTimeout, s.opts.OpTimeout)
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	err := func() error {
		conn, err := pgx.ConnectConfig(pctx, s.connCf)
		if err != nil {
			return err
		}
		defer conn.Close(context.WithoutCancel(pctx))
		var one int
		return conn.QueryRow(pctx, "SELECT 1").Scan(&one)
	}()
	switch {
	case err == nil:
		s.answered()
	case ctx.Err() != nil: // closing
	case pctx.Err() != nil && !errors.Is(err, ErrUnavailable):
		s.markDown(fmt.Errorf("%w: no answer within %s: %w", ErrUnavailable, limit, err))
	default:
		s.markDown(fmt.Errorf("%w: %w", ErrUnavailable, err))
	}
}
