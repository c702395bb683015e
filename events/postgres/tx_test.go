package postgres_test

import (
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/postgres"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
)

// AppendTx in a caller's transaction: nothing after a rollback, nothing
// visible before the commit, a conflict that leaves the transaction
// usable, several streams in one call, and one call per transaction.
func TestAppendTx(t *testing.T) {
	url := pgtest.URL(t)
	ctx := ctxFor(t)
	s := open(t, url, fastOptions())
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	e := func() events.Proposed {
		return events.Proposed{ID: uuid.New(), Type: "TestHappened", Schema: 1, Data: []byte("x")}
	}

	// Rolled back: nothing.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.AppendTx(ctx, tx, postgres.TxAppend{Stream: "a", Expected: events.NoStream, Events: []events.Proposed{e()}}); err != nil {
		t.Fatal(err)
	}
	tx.Rollback(ctx)
	if _, err := s.ReadStream(ctx, "a", 0, 0); !errors.Is(err, events.ErrStreamNotFound) {
		t.Fatalf("after rollback: %v", err)
	}

	// The store appends to b meanwhile; the transaction's stale expectation
	// conflicts, b is read again in the transaction, and the append goes
	// through.
	if _, err := s.Append(ctx, "b", events.NoStream, e()); err != nil {
		t.Fatal(err)
	}
	tx, err = pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	_, err = postgres.AppendTx(ctx, tx, postgres.TxAppend{Stream: "b", Expected: events.NoStream, Events: []events.Proposed{e()}})
	if !errors.Is(err, events.ErrVersionConflict) {
		t.Fatalf("stale expectation: %v", err)
	}
	recs, err := postgres.ReadStreamTx(ctx, tx, "b", 0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("read in tx: %d, %v", len(recs), err)
	}
	res, err := postgres.AppendTx(ctx, tx,
		postgres.TxAppend{Stream: "b", Expected: events.Exactly(0), Events: []events.Proposed{e(), e()}},
		postgres.TxAppend{Stream: "a", Expected: events.NoStream, Events: []events.Proposed{e()}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Version != 2 || res[0].Position.Commit != 3 || res[1].Version != 0 || res[1].Position.Commit != 4 {
		t.Fatalf("results: %+v", res)
	}
	if _, err := postgres.AppendTx(ctx, tx, postgres.TxAppend{Stream: "c", Expected: events.AnyVersion, Events: []events.Proposed{e()}}); !errors.Is(err, postgres.ErrTxAppended) {
		t.Fatalf("second call: %v", err)
	}
	if recs, _ := s.ReadAll(ctx, events.Start, 0); len(recs) != 1 {
		t.Fatalf("visible before the commit: %d events", len(recs))
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	recs, err = s.ReadAll(ctx, events.Start, 0)
	if err != nil || len(recs) != 4 || recs[3].Stream != "a" || recs[1].Stream != "b" || recs[2].Version != 2 {
		t.Fatalf("after the commit: %+v, %v", recs, err)
	}
}
