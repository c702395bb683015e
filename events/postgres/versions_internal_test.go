package postgres

import (
	"context"
	"errors"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// requireVersions reads stream's versions, in order, and fails t unless they
// are 0, 1, … n-1.
func requireVersions(t *testing.T, s *Store, stream string, n int) {
	t.Helper()
	recs, err := s.ReadStream(context.Background(), stream, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n {
		t.Fatalf("stream %s has %d events, want %d", stream, len(recs), n)
	}
	for i, r := range recs {
		if r.Version != uint64(i) {
			t.Fatalf("stream %s: event %d has version %d", stream, i, r.Version)
		}
	}
}

// Two stores (two processes) append to one stream. The first remembers the
// version it wrote; the second moves the stream past it. An append of the
// first refused against its remembered version is decided again against
// the stream's version read (and lands); one accepted against it (any
// version) is refused by the check under the head row and decided again;
// a remembered version above the stream's (a server that lost commits) is
// refused the same way instead of leaving a gap.
func TestRememberedVersionsAreChecked(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	st := events.TaskStream(uuid.New())
	if _, err := a.Append(ctx, st, events.NoStream, ev("a0")); err != nil {
		t.Fatal(err)
	}
	if v, ok := a.versions.get(st); !ok || v != 0 {
		t.Fatalf("a remembers %d, %v; want 0", v, ok)
	}
	if _, err := b.Append(ctx, st, events.Exactly(0), ev("b1")); err != nil {
		t.Fatal(err)
	}
	// a remembers 0, the stream is at 1.
	res, err := a.Append(ctx, st, events.Exactly(1), ev("a2"))
	if err != nil || res.Version != 2 {
		t.Fatalf("append after the remembered version: %+v, %v; want version 2", res, err)
	}
	if _, err := b.Append(ctx, st, events.Exactly(2), ev("b3")); err != nil {
		t.Fatal(err)
	}
	// a remembers 2, the stream is at 3: accepted against 2, refused by
	// the check.
	res, err = a.Append(ctx, st, events.AnyVersion, events.Proposed{Type: "TestHappened", Schema: 1, Data: []byte("a4")})
	if err != nil || res.Version != 4 {
		t.Fatalf("any-version append after the remembered version: %+v, %v; want version 4", res, err)
	}
	// Remembered above the stream's version.
	a.versions.put(st, 9)
	res, err = a.Append(ctx, st, events.AnyVersion, events.Proposed{Type: "TestHappened", Schema: 1, Data: []byte("a5")})
	if err != nil || res.Version != 5 {
		t.Fatalf("append with a remembered version above the stream's: %+v, %v; want version 5", res, err)
	}
	// A conflict that is one stays one.
	_, err = a.Append(ctx, st, events.Exactly(3), ev("late"))
	var vc *events.VersionConflictError
	if !errors.As(err, &vc) || vc.Actual != 5 {
		t.Fatalf("append expecting 3 at 5: %v, want a conflict at 5", err)
	}
	requireVersions(t, a, st, 6)
}

// Another process appends to a group's stream between the group's read of
// the versions and its insert: the insert collides on (stream, version),
// and the group is decided again under the head row: an append expecting
// the version read gets a conflict, one with any version lands after the
// other's.
func TestCollisionDecidedAgainUnderTheHead(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	a, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	st := events.TaskStream(uuid.New())
	if _, err := b.Append(ctx, st, events.NoStream, ev("b0")); err != nil {
		t.Fatal(err)
	}
	interleave := func(label string) (reads *int) {
		reads = new(int)
		afterVersionsRead = func() {
			*reads++
			if *reads == 1 {
				// a's committer is waiting for this: b's committer does
				// not read (it remembers st).
				if _, err := b.Append(ctx, st, events.AnyVersion, ev(label)); err != nil {
					t.Error(err)
				}
			}
		}
		return reads
	}
	defer func() { afterVersionsRead = nil }()

	reads := interleave("b1")
	_, err = a.Append(ctx, st, events.Exactly(0), ev("a-late"))
	var vc *events.VersionConflictError
	if !errors.As(err, &vc) || vc.Actual != 1 {
		t.Fatalf("append expecting the version read, moved meanwhile: %v, want a conflict at 1", err)
	}
	if *reads != 2 {
		t.Fatalf("versions read %d times, want 2 (the second under the head row)", *reads)
	}

	a.versions.forget([]string{st})
	interleave("b2")
	res, err := a.Append(ctx, st, events.AnyVersion, ev("a3"))
	if err != nil || res.Version != 3 {
		t.Fatalf("any-version append, stream moved meanwhile: %+v, %v; want version 3", res, err)
	}
	requireVersions(t, a, st, 4)
}

// A database at schema 1 (streams' versions in cronactor_streams) is
// migrated with its events: appends go on at each stream's next version
// and cronactor_streams is gone.
func TestMigrateFromSchema1(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := migrateTo(ctx, pool, 1); err != nil {
		t.Fatal(err)
	}
	st := events.TaskStream(uuid.New())
	// What a schema-1 committer wrote for two events of st.
	if _, err := pool.Exec(ctx, `
		INSERT INTO cronactor_events (position, stream, version, id, type, schema, at, at_nanos, causation_id, correlation_id, data)
		VALUES (1, $1, 0, gen_random_uuid(), 'TestHappened', 1, now(), 0, gen_random_uuid(), gen_random_uuid(), ''),
		       (2, $1, 1, gen_random_uuid(), 'TestHappened', 1, now(), 0, gen_random_uuid(), gen_random_uuid(), '')`, st); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO cronactor_streams (stream, version) VALUES ($1, 1)`, st); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `UPDATE cronactor_head SET position = 2`); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var have int
	var streams bool
	if err := pool.QueryRow(ctx, `SELECT max(version), to_regclass('cronactor_streams') IS NOT NULL FROM cronactor_schema`).Scan(&have, &streams); err != nil {
		t.Fatal(err)
	}
	if have != SchemaVersion || streams {
		t.Fatalf("after Open: schema %d, cronactor_streams there: %v; want %d, false", have, streams, SchemaVersion)
	}
	if _, err := s.Append(ctx, st, events.Exactly(0), ev("stale")); !errors.Is(err, events.ErrVersionConflict) {
		t.Fatalf("append expecting 0 at 1: %v, want a conflict", err)
	}
	res, err := s.Append(ctx, st, events.Exactly(1), ev("third"))
	if err != nil || res.Version != 2 || res.Position.Commit != 3 {
		t.Fatalf("append after the migration: %+v, %v; want version 2 at position 3", res, err)
	}
	requireVersions(t, s, st, 3)
}
