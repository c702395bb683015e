package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/postgres"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
)

// AppendTx takes the head row before it reads its streams' versions; a
// conflict gives it back at once (its savepoint is rolled back), so the
// caller's transaction, still open and deciding what to do, holds no
// appender of the database.
func TestAppendTxConflictReleasesTheHead(t *testing.T) {
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
	if _, err := s.Append(ctx, "b", events.NoStream, e()); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	_, err = postgres.AppendTx(ctx, tx, postgres.TxAppend{Stream: "b", Expected: events.NoStream, Events: []events.Proposed{e()}})
	if !errors.Is(err, events.ErrVersionConflict) {
		t.Fatalf("stale expectation: %v", err)
	}
	done := make(chan error, 1)
	s.AppendAsync(ctx, "c", events.NoStream, []events.Proposed{e()}, func(_ events.AppendResult, err error) { done <- err })
	// A bound, not a wait for something to happen: the append needs no more
	// than a round trip and a commit.
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("an append waited for the head row of a transaction whose AppendTx conflicted")
	}
	// The transaction is still usable: read, decide again, append.
	if _, err := postgres.AppendTx(ctx, tx, postgres.TxAppend{Stream: "b", Expected: events.Exactly(0), Events: []events.Proposed{e()}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	recs, err := s.ReadStream(ctx, "b", 0, 0)
	if err != nil || len(recs) != 2 {
		t.Fatalf("b after the commit: %d events, %v", len(recs), err)
	}
}
