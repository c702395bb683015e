package postgres

import (
	"context"
	"fmt"

	"github.com/cronactor/cronactor/events"
)

var _ events.Truncater = (*Store)(nil)

// truncateBatch bounds the events one transaction of TruncateBefore
// deletes, so that a long stream's removal holds no lock, and writes no
// WAL, for long at a time.
var truncateBatch = 4096

// TruncateBefore implements events.Truncater: the events of stream below
// version before are deleted from the log, oldest first, in transactions
// of at most truncateBatch events each (docs/decisions/0023-retention.md).
//
// Readers stay exact without any coordination: every read is one statement,
// so it sees the log as of one snapshot, in which the removal is either
// done or not for each batch; positions are never renumbered, so a reader
// of the global log that pages with "position > p" skips only what was
// deleted, and the log's last event, the last of its stream, is never
// deleted, so a reader cannot take a removal for the end of the log. A
// stream read sees a contiguous run of versions, because the batches
// remove from the oldest version up. Appends are not held: they read the
// stream's version as its last event's, which a removal never deletes nor
// locks.
func (s *Store) TruncateBefore(ctx context.Context, stream string, before uint64) error {
	if err := events.ValidateStream(stream); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := s.use(); err != nil {
		return err
	}
	defer s.release()
	// The stream's last version as committed; a concurrent append only
	// raises it, so a cut at or below it stays valid.
	var last *int64
	err := s.pool.QueryRow(ctx, `SELECT max(version) FROM cronactor_events WHERE stream = $1`, stream).Scan(&last)
	switch {
	case err == nil && last == nil:
		return fmt.Errorf("%w: %q", events.ErrStreamNotFound, stream)
	case err != nil:
		return fmt.Errorf("postgres: truncate %q: %w", stream, s.readErr(ctx, err))
	case before > uint64(*last):
		return fmt.Errorf("%w: %q before version %d (its last is %d)", events.ErrTruncateRange, stream, before, *last)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		tag, err := s.pool.Exec(ctx, `DELETE FROM cronactor_events WHERE position IN (
			SELECT position FROM cronactor_events WHERE stream = $1 AND version < $2 ORDER BY version LIMIT $3)`,
			stream, int64(before), truncateBatch)
		if err != nil {
			return fmt.Errorf("postgres: truncate %q before %d: %w", stream, before, s.readErr(ctx, err))
		}
		if tag.RowsAffected() < int64(truncateBatch) {
			return nil
		}
	}
}
