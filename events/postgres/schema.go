package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are the schema's versions: migrations[i] takes a database
// from version i to i+1. Never change one that has shipped; add the next.
var migrations = []string{
	// 1: the log, the streams' heads, the head counter, the snapshot table.
	`CREATE TABLE cronactor_events (
		position       bigint PRIMARY KEY,
		stream         text NOT NULL,
		version        bigint NOT NULL,
		id             uuid NOT NULL,
		type           text NOT NULL,
		schema         integer NOT NULL,
		at             timestamptz NOT NULL,
		at_nanos       smallint NOT NULL,
		causation_id   uuid NOT NULL,
		correlation_id uuid NOT NULL,
		data           bytea NOT NULL,
		UNIQUE (stream, version)
	);
	CREATE TABLE cronactor_streams (
		stream  text PRIMARY KEY,
		version bigint NOT NULL
	);
	CREATE TABLE cronactor_head (
		id       integer PRIMARY KEY CHECK (id = 1),
		position bigint NOT NULL
	);
	INSERT INTO cronactor_head (id, position) VALUES (1, 0);
	CREATE TABLE cronactor_snapshot (
		key   bytea PRIMARY KEY,
		value bytea NOT NULL
	);`,
	// 2: a stream's version is its last event's, read from
	// cronactor_events' (stream, version) index: no second row written per
	// append (docs/decisions/0021-postgres-store.md, amended). A process of
	// an older build still running fails its appends on the missing table
	// instead of writing versions from a stale row.
	//
	// cronactor_check_versions(streams, versions) raises SQLSTATE CA001
	// unless each stream's last version is the one given (-1: no events):
	// the committer's check of the versions it remembers (versionCache),
	// in the same pipeline as its writes.
	`DROP TABLE cronactor_streams;
	CREATE FUNCTION cronactor_check_versions(streams text[], versions bigint[]) RETURNS void
	LANGUAGE plpgsql AS $$
	DECLARE
		moved text;
	BEGIN
		SELECT u.stream INTO moved
		FROM unnest(streams, versions) AS u(stream, version)
		WHERE u.version IS DISTINCT FROM coalesce((SELECT max(e.version) FROM cronactor_events e WHERE e.stream = u.stream), -1)
		LIMIT 1;
		IF moved IS NOT NULL THEN
			RAISE EXCEPTION 'cronactor: stream % moved', moved USING ERRCODE = 'CA001';
		END IF;
	END
	$$;`,
}

// SchemaVersion is the schema version this package writes.
var SchemaVersion = len(migrations)

// migrateLock is the key of the advisory lock migrations run under
// (the bytes of "cronacto").
const migrateLock int64 = 0x63726f6e6163746f

// migrate brings the database's schema to SchemaVersion in one transaction,
// under a transaction-level advisory lock: processes opening at once wait
// for each other, and the later ones find the work done.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return migrateTo(ctx, pool, len(migrations))
}

// migrateTo is migrate up to schema version target (tests start from an
// older schema with it).
func migrateTo(ctx context.Context, pool *pgxpool.Pool, target int) (err error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLock); err != nil {
		return err
	}
	// Created only when missing: a role without CREATE on the schema can
	// open a migrated database (docs/postgres.md, privileges).
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT to_regclass('cronactor_schema') IS NOT NULL").Scan(&exists); err != nil {
		return err
	}
	if !exists {
		if _, err := tx.Exec(ctx, `CREATE TABLE cronactor_schema (
			version    integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return err
		}
	}
	var have int
	if err := tx.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM cronactor_schema").Scan(&have); err != nil {
		return err
	}
	if have > len(migrations) {
		return fmt.Errorf("%w: the database is at schema version %d, this build knows up to %d", ErrSchemaTooNew, have, len(migrations))
	}
	for v := have; v < target; v++ {
		if _, err := tx.Exec(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migration %d: %w", v+1, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO cronactor_schema (version) VALUES ($1)", v+1); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}
