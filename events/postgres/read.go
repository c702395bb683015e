package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const eventColumns = `position, stream, version, id, type, schema, at, at_nanos, causation_id, correlation_id, data`

// subscribePage is how many events Subscribe reads at a time.
const subscribePage = 512

// ReadStream implements events.Store.
func (s *Store) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	if err := events.ValidateStream(stream); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.use(); err != nil {
		return nil, err
	}
	defer s.release()
	recs, err := s.query(ctx, `SELECT `+eventColumns+` FROM cronactor_events
		WHERE stream = $1 AND version >= $2 ORDER BY version LIMIT $3`, stream, clampInt64(from), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("postgres: read stream %q: %w", stream, err)
	}
	if len(recs) == 0 {
		var exists bool
		if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM cronactor_events WHERE stream = $1)`, stream).Scan(&exists); err != nil {
			return nil, fmt.Errorf("postgres: read stream %q: %w", stream, s.readErr(ctx, err))
		}
		if !exists {
			return nil, fmt.Errorf("%w: %q", events.ErrStreamNotFound, stream)
		}
	}
	return recs, nil
}

// ReadAll implements events.Store.
func (s *Store) ReadAll(ctx context.Context, after events.Position, limit int) ([]events.Recorded, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.use(); err != nil {
		return nil, err
	}
	defer s.release()
	recs, err := s.readAll(ctx, after.Commit, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: read all after %s: %w", after, err)
	}
	return recs, nil
}

func (s *Store) readAll(ctx context.Context, after uint64, limit int) ([]events.Recorded, error) {
	recs, err := s.query(ctx, `SELECT `+eventColumns+` FROM cronactor_events
		WHERE position > $1 ORDER BY position LIMIT $2`, clampInt64(after), limitArg(limit))
	if err == nil && len(recs) > 0 {
		s.advance(recs[len(recs)-1].Position.Commit)
	}
	return recs, err
}

// query reads events; a pooled connection found broken (killed, or dead
// since a restart the pool has not seen) costs a retry on another, not
// the caller's read: reads are safe to repeat.
func (s *Store) query(ctx context.Context, sql string, args ...any) ([]events.Recorded, error) {
	for attempt := 0; ; attempt++ {
		recs, err := s.queryOnce(ctx, sql, args...)
		if err == nil || attempt >= s.opts.MaxConns || ctx.Err() != nil || !brokenConn(err) {
			return recs, err
		}
	}
}

// brokenConn says whether err is a connection that broke (not a failure
// to connect: the server is away then).
func brokenConn(err error) bool {
	var ce *pgconn.ConnectError
	return unavailable(err) && !errors.As(err, &ce)
}

func (s *Store) queryOnce(ctx context.Context, sql string, args ...any) ([]events.Recorded, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, s.readErr(ctx, err)
	}
	out, err := scanRecorded(rows)
	if err != nil {
		return nil, s.readErr(ctx, err)
	}
	return out, nil
}

// readErr is err, marked ErrUnavailable when the server is out of reach,
// or the context's error when the context ended.
func (s *Store) readErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%w (%w)", cerr, err)
	}
	err = classify(err)
	if errors.Is(err, ErrUnavailable) {
		s.suspect() // the prober finds out whether appends would fail too
	}
	return err
}

func limitArg(limit int) any {
	if limit <= 0 {
		return nil // LIMIT NULL: all
	}
	return int64(limit)
}

func clampInt64(v uint64) int64 {
	if v > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(v)
}

// Subscribe implements events.Store. It reads the log in pages; at the end
// it waits for a commit of this store, a notification, or the poll. A read
// that fails (the server away) is retried with backoff for as long as ctx
// lasts, and logged.
func (s *Store) Subscribe(ctx context.Context, after events.Position, handle func(events.Recorded) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.use(); err != nil {
		return err
	}
	defer s.release()
	// Close ends a read in flight too, not only a wait.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	// end is the reason to stop once ctx is done: Close's, if it was Close.
	end := func() error {
		select {
		case <-s.done:
			return events.ErrClosed
		default:
			return ctx.Err()
		}
	}
	pos := after.Commit
	poll := time.NewTimer(s.opts.PollInterval)
	defer poll.Stop()
	backoff := 20 * time.Millisecond
	for {
		select {
		case <-s.done:
			return events.ErrClosed
		default:
		}
		if ctx.Err() != nil {
			return end()
		}
		wake := s.waiter()
		recs, err := s.readAll(ctx, pos, subscribePage)
		if err != nil {
			if ctx.Err() != nil {
				return end()
			}
			s.log.Warn("postgres subscription read failed; retrying", "error", err, "position", pos, "retry_in", backoff)
			select {
			case <-ctx.Done():
				return end()
			case <-s.done:
				return events.ErrClosed
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 20 * time.Millisecond
		for _, r := range recs {
			if err := handle(r); err != nil {
				return fmt.Errorf("postgres: subscriber at %s: %w", r.Position, err)
			}
			pos = r.Position.Commit
		}
		if len(recs) == subscribePage {
			continue
		}
		if !poll.Stop() {
			select {
			case <-poll.C:
			default:
			}
		}
		poll.Reset(s.opts.PollInterval)
		select {
		case <-ctx.Done():
			return end()
		case <-s.done:
			return events.ErrClosed
		case <-wake:
		case <-poll.C:
		}
	}
}

// WriteSnapshot implements events.SnapshotStore: one transaction, committed
// without waiting for its log flush (FlushSnapshot waits for that), so
// writes stay cheap and a crash keeps a prefix of them, in order.
func (s *Store) WriteSnapshot(ctx context.Context, entries []events.SnapshotEntry) error {
	if len(entries) == 0 {
		return nil
	}
	// The last value of a key repeated in entries wins, as in a batch.
	idx := make(map[string]int, len(entries))
	keys := make([][]byte, 0, len(entries))
	vals := make([][]byte, 0, len(entries))
	for _, e := range entries {
		if len(e.Key) == 0 {
			return errors.New("postgres: snapshot table: write: empty key")
		}
		v := e.Value
		if v == nil {
			v = []byte{}
		}
		if i, ok := idx[string(e.Key)]; ok {
			vals[i] = v
			continue
		}
		idx[string(e.Key)] = len(keys)
		keys = append(keys, e.Key)
		vals = append(vals, v)
	}
	return s.snapshotTx(ctx, "write", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO cronactor_snapshot (key, value) SELECT * FROM unnest($1::bytea[], $2::bytea[])
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, keys, vals)
		return err
	})
}

// FlushSnapshot implements events.SnapshotStore: a transaction committed
// synchronously flushes the server's log up to its commit, which covers
// every snapshot write committed before it.
func (s *Store) FlushSnapshot(ctx context.Context) error {
	return s.snapshotTx(ctx, "flush", func(tx pgx.Tx) error {
		// An ID makes the commit write a record and wait for its flush.
		_, err := tx.Exec(ctx, "SELECT pg_current_xact_id()")
		return err
	})
}

// ReadSnapshot implements events.SnapshotStore, in pages of keys.
func (s *Store) ReadSnapshot(ctx context.Context, fn func(key, value []byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.use(); err != nil {
		return err
	}
	defer s.release()
	var after []byte
	for first := true; ; first = false {
		rows, err := s.pool.Query(ctx, `SELECT key, value FROM cronactor_snapshot WHERE $1::bytea IS NULL OR key > $1 ORDER BY key LIMIT 1000`, nilIfFirst(first, after))
		if err != nil {
			return fmt.Errorf("postgres: snapshot table: read: %w", s.readErr(ctx, err))
		}
		n := 0
		var fnErr error
		for rows.Next() {
			var k, v []byte
			if err := rows.Scan(&k, &v); err != nil {
				rows.Close()
				return fmt.Errorf("postgres: snapshot table: read: %w", s.readErr(ctx, err))
			}
			n++
			after = k
			if fnErr = fn(k, v); fnErr != nil {
				break
			}
		}
		rows.Close()
		if fnErr != nil {
			return fnErr
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("postgres: snapshot table: read: %w", s.readErr(ctx, err))
		}
		if n < 1000 {
			return nil
		}
	}
}

func nilIfFirst(first bool, b []byte) any {
	if first {
		return nil
	}
	return b
}

// ClearSnapshot implements events.SnapshotStore.
func (s *Store) ClearSnapshot(ctx context.Context) error {
	return s.snapshotTx(ctx, "clear", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "DELETE FROM cronactor_snapshot")
		return err
	})
}

func (s *Store) snapshotTx(ctx context.Context, what string, fn func(pgx.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.use(); err != nil {
		return err
	}
	defer s.release()
	err := pgx.BeginFunc(ctx, s.pool, fn)
	if err != nil {
		return fmt.Errorf("postgres: snapshot table: %s: %w", what, s.readErr(ctx, err))
	}
	return nil
}
