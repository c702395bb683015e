package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/jackc/pgx/v5"
)

// Appends in a caller's transaction (docs/decisions/0026-insert-tx.md).
//
// AppendTx writes events in a transaction the caller owns, so they exist
// exactly when that transaction commits: an embedder creates a task in the
// same transaction as its own rows (package actors/scheduler/pgtx builds
// the task's events). It keeps the store's one order: it takes the head
// row, reads its streams' versions under it (every appender inserts only
// while it holds that row), and takes its positions from it, and
// PostgreSQL makes the
// transaction visible before it releases the head row, so no follower can
// skip its events or read them out of order, whenever the caller commits.
//
// The price is the head row: from AppendTx until the caller's COMMIT or
// ROLLBACK, every other appending transaction on the database — the
// committer of every scheduler on it included — waits. Call it last in
// your transaction, right before Commit, and keep that short.

// ErrTxAppended: a transaction called AppendTx a second time. One call
// holds the head row from that call to the caller's COMMIT, the stretch
// that should be short; a second call means the caller's work between the
// two calls ran holding it, stopping every appender on the database.
// Pass every stream to one call.
var ErrTxAppended = errors.New("postgres: AppendTx was called in this transaction already; pass every stream to one call")

// TxAppend is one stream's append of an AppendTx call.
type TxAppend struct {
	Stream   string
	Expected events.ExpectedVersion
	Events   []events.Proposed
}

// txMarker is the transaction-local setting AppendTx leaves behind to
// recognise a second call in the same transaction.
const txMarker = "cronactor.appended"

// txSavepoint is the savepoint AppendTx takes the head row in.
const txSavepoint = "cronactor_append"

// AppendTx appends to each stream of appends inside tx, the caller's
// transaction, and returns where each append's last event will be once tx
// commits (nothing is visible before). The expected versions are checked
// under the streams' locks, which tx holds until it ends: a conflict
// returns an error matching events.ErrVersionConflict (a
// *events.VersionConflictError) and writes nothing; tx stays usable, and
// its caller decides (roll back, or read the stream again in tx and
// decide again). Events with a zero ID get a random one. A retry with the
// same event IDs is not recognised: the transaction either committed or
// did not.
//
// The database must have the store's schema (Open creates it). Call
// AppendTx once per transaction and last (see above): a call after one
// that appended fails with ErrTxAppended (one that met a conflict may be
// made again).
func AppendTx(ctx context.Context, tx pgx.Tx, appends ...TxAppend) ([]events.AppendResult, error) {
	if len(appends) == 0 {
		return nil, events.ErrNoEvents
	}
	names := make([]string, 0, len(appends))
	for _, a := range appends {
		if err := events.ValidateStream(a.Stream); err != nil {
			return nil, err
		}
		if len(a.Events) == 0 {
			return nil, fmt.Errorf("%w (stream %q)", events.ErrNoEvents, a.Stream)
		}
		names = append(names, a.Stream)
	}
	slices.Sort(names)
	names = slices.Compact(names)

	var marked string
	if err := tx.QueryRow(ctx, `SELECT coalesce(current_setting('`+txMarker+`', true), '')`).Scan(&marked); err != nil {
		return nil, fmt.Errorf("postgres: append in transaction: %w", classify(err))
	}
	if marked == "on" {
		return nil, ErrTxAppended
	}
	// The head row first, then the versions, which no one can change
	// while it is ours (every appender inserts only under it). Taken in a
	// savepoint: a conflict rolls back to it, which gives the head row back
	// at once, and tx stays usable.
	read := &pgx.Batch{}
	read.Queue(`SAVEPOINT ` + txSavepoint)
	read.Queue(`SELECT position FROM cronactor_head WHERE id = 1 FOR UPDATE`)
	read.Queue(streamVersionsSQL, names)
	heads, err := readStreamVersions(tx.SendBatch(ctx, read), true, true)
	if err != nil {
		return nil, fmt.Errorf("postgres: append in transaction: %w", classify(err))
	}

	var w writeSet
	for _, a := range appends {
		h := heads[a.Stream]
		var cur uint64
		exists := h.version >= 0
		if exists {
			cur = uint64(h.version)
		}
		if !a.Expected.Allows(cur, exists) {
			conflict := &events.VersionConflictError{Stream: a.Stream, Expected: a.Expected, Actual: cur, ActualExists: exists}
			if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT `+txSavepoint+`; RELEASE SAVEPOINT `+txSavepoint); err != nil {
				return nil, fmt.Errorf("postgres: append in transaction: %w (after %w)", classify(err), conflict)
			}
			return nil, conflict
		}
		first := h.version + 1
		w.add(&appendReq{stream: a.Stream, expected: a.Expected, evs: a.Events}, first)
		h.version = first + int64(len(a.Events)) - 1
	}
	// From here to the caller's COMMIT the head row is this transaction's.
	total := int64(len(w.stream))
	wb := &pgx.Batch{}
	wb.Queue(`UPDATE cronactor_head SET position = position + $1 WHERE id = 1 RETURNING position`, total)
	wb.Queue(`INSERT INTO cronactor_events (position, stream, version, id, type, schema, at, at_nanos, causation_id, correlation_id, data)
		SELECT h.position - $1 + e.ord, e.stream, e.version, e.id, e.type, e.schema, e.at, e.at_nanos, e.causation_id, e.correlation_id, e.data
		FROM cronactor_head h,
			unnest($2::text[], $3::bigint[], $4::uuid[], $5::text[], $6::integer[], $7::timestamptz[], $8::smallint[], $9::uuid[], $10::uuid[], $11::bytea[])
			WITH ORDINALITY AS e(stream, version, id, type, schema, at, at_nanos, causation_id, correlation_id, data, ord)
		WHERE h.id = 1`,
		total, w.stream, w.version, w.id, w.typ, w.schema, w.at, w.atNanos, w.causation, w.correlation, w.data)
	// Delivered at COMMIT, and only then: followers wake when the events
	// are visible.
	wb.Queue(`SELECT pg_notify($1, (SELECT position FROM cronactor_head WHERE id = 1)::text)`, notifyChannel)
	// Marked only once the appends are written: a call that met a conflict
	// rolled back to its savepoint, and may be made again.
	wb.Queue(`SELECT set_config('` + txMarker + `', 'on', true)`)
	wb.Queue(`RELEASE SAVEPOINT ` + txSavepoint)
	br := tx.SendBatch(ctx, wb)
	var headPos int64
	err = func() error {
		defer br.Close()
		if err := br.QueryRow().Scan(&headPos); err != nil {
			return err
		}
		for range 4 {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		return nil, fmt.Errorf("postgres: append in transaction: %w", classify(err))
	}
	base := uint64(headPos) - uint64(total)
	out := make([]events.AppendResult, len(appends))
	for i := range appends {
		end := base + uint64(w.ends[i])
		out[i] = events.AppendResult{Version: uint64(w.version[w.ends[i]-1]), Position: events.Position{Commit: end, Prepare: end}}
	}
	return out, nil
}

// ReadStreamTx is ReadStream inside tx: the events of stream with version
// >= from, in order, as tx sees them (under READ COMMITTED, the latest
// committed ones at each statement; under REPEATABLE READ, those of tx's
// snapshot). A stream with no events yields an error matching
// events.ErrStreamNotFound. It takes no lock: read, decide, then
// AppendTx with the version read, which checks it under the stream's lock.
func ReadStreamTx(ctx context.Context, tx pgx.Tx, stream string, from uint64) ([]events.Recorded, error) {
	if err := events.ValidateStream(stream); err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT `+eventColumns+` FROM cronactor_events
		WHERE stream = $1 AND version >= $2 ORDER BY version`, stream, clampInt64(from))
	if err != nil {
		return nil, fmt.Errorf("postgres: read stream %q in transaction: %w", stream, classify(err))
	}
	recs, err := scanRecorded(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: read stream %q in transaction: %w", stream, classify(err))
	}
	if len(recs) == 0 {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM cronactor_events WHERE stream = $1)`, stream).Scan(&exists); err != nil {
			return nil, fmt.Errorf("postgres: read stream %q in transaction: %w", stream, classify(err))
		}
		if !exists {
			return nil, fmt.Errorf("%w: %q", events.ErrStreamNotFound, stream)
		}
	}
	return recs, nil
}

// scanRecorded reads rows of eventColumns and closes them.
func scanRecorded(rows pgx.Rows) ([]events.Recorded, error) {
	defer rows.Close()
	var out []events.Recorded
	for rows.Next() {
		var r events.Recorded
		var pos, version int64
		var schema int32
		var at time.Time
		var nanos int16
		// [16]byte, not uuid.UUID: pgx decodes it in place, where a
		// uuid.UUID (an sql.Scanner) would go through its text form.
		var id, cause, corr [16]byte
		if err := rows.Scan(&pos, &r.Stream, &version, &id, &r.Type, &schema, &at, &nanos, &cause, &corr, &r.Data); err != nil {
			return nil, err
		}
		r.Position = events.Position{Commit: uint64(pos), Prepare: uint64(pos)}
		r.Version = uint64(version)
		r.ID, r.CausationID, r.CorrelationID = id, cause, corr
		r.Schema = int(schema)
		r.At = joinTime(at, nanos)
		out = append(out, r)
	}
	return out, rows.Err()
}
