package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Sentinel errors of the package.
var (
	// ErrUnavailable: the server could not be reached, or the connection
	// broke during the call. It matches events.ErrUnreachable (and so
	// events.ErrUnwritable): callers that know no backend (the API's 503
	// naming the condition) see the condition.
	ErrUnavailable error = unavailableError{}
	// ErrSchemaTooNew: the database was migrated by a newer cronactor.
	ErrSchemaTooNew = errors.New("postgres: schema is newer than this build")
	// ErrOptions: an Options field is out of its limits.
	ErrOptions = errors.New("postgres: invalid options")
)

// notifyChannel is the LISTEN/NOTIFY channel appends announce their last
// position on.
const notifyChannel = "cronactor_events"

// Store is the Postgres events.Store. See the package comment.
type Store struct {
	pool   *pgxpool.Pool
	connCf *pgx.ConnConfig // for the listener's own connection
	opts   Options
	log    *slog.Logger

	intake   *intake
	versions *versionCache // the committer's remembered stream versions (versions.go)
	stopped  chan struct{} // closed when the committer has ended
	health   *health       // the server as the store's work found it (health.go)

	mu      sync.Mutex
	closed  bool
	done    chan struct{} // closed by Close
	notify  chan struct{} // closed and replaced when the head moves
	head    atomic.Uint64 // highest position known
	cancel  context.CancelFunc
	bg      sync.WaitGroup // listener, prober
	closeMu sync.Once
	users   sync.WaitGroup // calls in flight, waited for by Close
}

var (
	_ events.Store         = (*Store)(nil)
	_ events.AsyncAppender = (*Store)(nil)
	_ events.HeadReader    = (*Store)(nil)
	_ events.SnapshotStore = (*Store)(nil)
)

// Open connects to the database at connString (a libpq URL or key=value
// string), creates or migrates the schema, and starts the committer and the
// listener. ctx bounds the opening only.
func Open(ctx context.Context, connString string, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		// pgx quotes the string with its password masked (TestOpenBadConnString).
		return nil, fmt.Errorf("postgres: connection string: %w", err)
	}
	cfg.MaxConns = int32(opts.MaxConns)
	if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > opts.OpTimeout {
		cfg.ConnConfig.ConnectTimeout = opts.OpTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: open: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: schema: %w", classify(err))
	}
	var head int64
	if err := pool.QueryRow(ctx, "SELECT position FROM cronactor_head WHERE id = 1").Scan(&head); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: read head: %w", classify(err))
	}
	s := &Store{
		pool:     pool,
		connCf:   cfg.ConnConfig.Copy(),
		opts:     opts,
		log:      opts.Logger,
		intake:   newIntake(),
		versions: newVersionCache(),
		stopped:  make(chan struct{}),
		done:     make(chan struct{}),
		notify:   make(chan struct{}),
		health:   newHealth(),
	}
	s.head.Store(uint64(head))
	bgCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.bg.Add(2)
	go s.listen(bgCtx)
	go s.probeLoop(bgCtx)
	go s.commitLoop()
	return s, nil
}

// use registers a call in flight; it fails once the store is closed.
func (s *Store) use() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return events.ErrClosed
	}
	s.users.Add(1)
	return nil
}

func (s *Store) release() { s.users.Done() }

// Close stops the committer (after it has decided the appends queued before
// Close), ends subscriptions with events.ErrClosed, and closes the
// connections. A second Close returns nil.
func (s *Store) Close() error {
	s.closeMu.Do(func() {
		s.mu.Lock()
		s.closed = true
		close(s.done)
		s.mu.Unlock()
		s.intake.wakeUp()
		<-s.stopped
		s.cancel()
		s.bg.Wait()
		s.users.Wait()
		s.pool.Close()
	})
	return nil
}

// Head implements events.HeadReader: the highest position this store has
// appended, read or been told of by a notification. Another process's
// newer appends show once their notification arrives.
func (s *Store) Head() events.Position {
	h := s.head.Load()
	return events.Position{Commit: h, Prepare: h}
}

// advance raises the known head to pos and wakes the subscribers.
func (s *Store) advance(pos uint64) {
	for {
		cur := s.head.Load()
		if pos <= cur {
			return
		}
		if s.head.CompareAndSwap(cur, pos) {
			break
		}
	}
	s.wake()
}

// wake wakes every waiting subscriber.
func (s *Store) wake() {
	s.mu.Lock()
	close(s.notify)
	s.notify = make(chan struct{})
	s.mu.Unlock()
}

func (s *Store) waiter() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.notify
}

// listen keeps a connection LISTENing for other processes' appends, and
// reconnects (with backoff) when it breaks; the subscribers' poll covers the
// gaps.
func (s *Store) listen(ctx context.Context) {
	defer s.bg.Done()
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		connected, err := s.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		s.suspect() // the prober finds out whether the server is away
		if connected {
			backoff = 50 * time.Millisecond // a broken connection, not a failed attempt
		}
		s.log.Warn("postgres listener lost its connection; subscribers poll meanwhile", "error", err, "retry_in", backoff)
		s.wake() // a notification may have been missed: read now
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// listenOnce listens on one connection until it breaks; connected says
// whether the connection was made.
func (s *Store) listenOnce(ctx context.Context) (connected bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, s.opts.OpTimeout)
	conn, err := pgx.ConnectConfig(cctx, s.connCf)
	cancel()
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return true, err
	}
	s.wake() // anything appended while not listening
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		if pos, err := strconv.ParseUint(n.Payload, 10, 64); err == nil {
			s.advance(pos)
		} else {
			s.wake()
		}
	}
}

// classify marks the errors that mean the server is out of reach with
// ErrUnavailable.
func classify(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	if unavailable(err) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 57P01-57P03: admin shutdown,
		// crash shutdown, cannot connect now (starting up, shutting down).
		c := pgErr.Code
		return len(c) == 5 && (c[:2] == "08" || c == "57P01" || c == "57P02" || c == "57P03")
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return true
	}
	return pgconn.SafeToRetry(err) || pgconn.Timeout(err) || isNetErr(err)
}
