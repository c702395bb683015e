package postgres_test

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/postgres"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

func proposal(label string) events.Proposed {
	return events.Proposed{ID: uuid.New(), Type: "TestHappened", Schema: 1,
		At: time.Date(2026, 1, 2, 3, 4, 5, 6789, time.UTC), Data: []byte(fmt.Sprintf(`{"label":%q}`, label))}
}

// Several processes start on an empty database at once: each migration is
// applied exactly once and every one of them opens.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	url := pgtest.URL(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := postgres.Open(ctxFor(t), url, postgres.Options{MaxConns: 2})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
	}
	conn, err := pgx.Connect(ctxFor(t), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var rows, max int
	if err := conn.QueryRow(ctxFor(t), "SELECT count(*), max(version) FROM cronactor_schema").Scan(&rows, &max); err != nil {
		t.Fatal(err)
	}
	if rows != postgres.SchemaVersion || max != postgres.SchemaVersion {
		t.Fatalf("cronactor_schema has %d rows up to version %d, want %d once each", rows, max, postgres.SchemaVersion)
	}
	// A database a newer build migrated is refused, not written.
	if _, err := conn.Exec(ctxFor(t), "INSERT INTO cronactor_schema (version) VALUES ($1)", postgres.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(ctxFor(t), url, postgres.Options{}); !errors.Is(err, postgres.ErrSchemaTooNew) {
		t.Fatalf("open of a newer schema: %v, want ErrSchemaTooNew", err)
	}
}

// Writers on separate stores (separate connection pools, as separate nodes
// would have) append concurrently, while a follower on a store of its own
// reads the global log: it must see every acknowledged event exactly once,
// at positions 1, 2, 3… with no gap (a gap would be an event it skipped,
// committed later below a position it had passed).
func TestConcurrentWritersFollowerSeesEveryEventOnce(t *testing.T) {
	url := pgtest.URL(t)
	const writers, appends = 4, 15
	follower := open(t, url, fastOptions())

	var mu sync.Mutex
	acked := map[uuid.UUID]bool{}
	var wg sync.WaitGroup
	for w := range writers {
		s := open(t, url, fastOptions())
		for g := range 3 { // three goroutines per writer, so groups carry several appends
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range appends {
					e1, e2 := proposal(fmt.Sprintf("w%d-g%d-%d-a", w, g, i)), proposal(fmt.Sprintf("w%d-g%d-%d-b", w, g, i))
					// Shared streams too, so writers also conflict.
					st := events.TaskStream(uuid.New())
					if i%4 == 0 {
						st = "task-shared-" + fmt.Sprint(i%3)
					}
					if _, err := s.Append(context.Background(), st, events.AnyVersion, e1, e2); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					acked[e1.ID], acked[e2.ID] = true, true
					mu.Unlock()
				}
			}()
		}
	}
	total := writers * 3 * appends * 2

	// The follower: ReadAll in small pages while the writers write, then
	// Subscribe to the same end; both must see positions 1..total.
	seen := map[uuid.UUID]bool{}
	var last uint64
	check := func(r events.Recorded) error {
		if r.Position.Commit != last+1 {
			return fmt.Errorf("position %d after %d: the follower skipped events", r.Position.Commit, last)
		}
		if seen[r.ID] {
			return fmt.Errorf("event %s seen twice", r.ID)
		}
		seen[r.ID] = true
		last = r.Position.Commit
		return nil
	}
	deadline := time.Now().Add(3 * time.Minute) // a bound for a hang, not a measure: the machine may be loaded
	for len(seen) < total {
		if time.Now().After(deadline) {
			t.Fatalf("follower saw %d of %d events", len(seen), total)
		}
		recs, err := follower.ReadAll(ctxFor(t), events.Position{Commit: last, Prepare: last}, 7)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := check(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	wg.Wait()
	for id := range acked {
		if !seen[id] {
			t.Fatalf("acknowledged event %s not seen by the follower", id)
		}
	}

	// A live subscriber from the start sees the same order.
	sub := open(t, url, fastOptions())
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	var n uint64
	err := sub.Subscribe(ctx, events.Start, func(r events.Recorded) error {
		n++
		if r.Position.Commit != n {
			return fmt.Errorf("subscriber got position %d as event %d", r.Position.Commit, n)
		}
		if n == uint64(total) {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// An append of another process reaches an idle subscriber through
// LISTEN/NOTIFY: its poll is a minute away.
func TestNotifyWakesSubscriberOfAnotherStore(t *testing.T) {
	url := pgtest.URL(t)
	slow := fastOptions()
	slow.PollInterval = time.Minute
	follower := open(t, url, slow)
	writer := open(t, url, fastOptions())
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	// The subscriber reads a first event, then waits: the second can reach
	// it only by a wake-up, and the only one due within a minute is the
	// notification of the writer's commit.
	first := proposal("first")
	if _, err := writer.Append(ctxFor(t), events.TaskStream(uuid.New()), events.NoStream, first); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	got := make(chan events.Recorded, 1)
	go func() {
		_ = follower.Subscribe(ctx, events.Start, func(r events.Recorded) error {
			if r.ID == first.ID {
				close(ready)
				return nil
			}
			got <- r
			cancel()
			return nil
		})
	}()
	select {
	case <-ready:
	case <-ctx.Done():
		t.Fatal("the subscriber did not get the first event")
	}
	e := proposal("notified")
	res, err := writer.Append(ctxFor(t), events.TaskStream(uuid.New()), events.NoStream, e)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.ID != e.ID {
			t.Fatalf("got %s, want %s", r.ID, e.ID)
		}
	case <-ctx.Done():
		// The subscriber cancels ctx right after handing the event over,
		// so both may be ready at once: the event counts if it is there.
		select {
		case r := <-got:
			if r.ID != e.ID {
				t.Fatalf("got %s, want %s", r.ID, e.ID)
			}
		default:
			t.Fatal("the subscriber was not woken by the other store's append within 15s (poll is 1 min)")
		}
	}
	if h := follower.Head(); h.Less(res.Position) {
		t.Fatalf("follower head %s, below the append's %s", h, res.Position)
	}
}

// Once the owner has migrated the database, a role with only CONNECT and
// SELECT, INSERT, UPDATE, DELETE on the tables opens it and appends, reads
// and keeps snapshots (docs/postgres.md, privileges).
func TestOpenWithRestrictedRole(t *testing.T) {
	url := pgtest.URL(t)
	owner := open(t, url, fastOptions())
	owner.Close()
	conn, err := pgx.Connect(ctxFor(t), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	role := "crtest_app_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	var db string
	if err := conn.QueryRow(ctxFor(t), "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"REVOKE CREATE ON SCHEMA public FROM PUBLIC",
		"GRANT CONNECT ON DATABASE " + db + " TO " + role,
		"GRANT USAGE ON SCHEMA public TO " + role,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + role,
	} {
		if _, err := conn.Exec(ctxFor(t), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), url)
		if err != nil {
			t.Logf("drop role %s: %v", role, err)
			return
		}
		defer c.Close(context.Background())
		// Roles belong to the server, not the database: drop it.
		if _, err := c.Exec(context.Background(), "DROP OWNED BY "+role+"; DROP ROLE "+role); err != nil {
			t.Logf("drop role %s: %v", role, err)
		}
	})
	u, err := neturl.Parse(url)
	if err != nil {
		t.Skipf("a key=value connection string: %v", err)
	}
	u.User = neturl.User(role)
	s := open(t, u.String(), fastOptions())
	st := events.TaskStream(uuid.New())
	if _, err := s.Append(ctxFor(t), st, events.NoStream, proposal("restricted")); err != nil {
		t.Fatalf("append as %s: %v", role, err)
	}
	if recs, err := s.ReadStream(ctxFor(t), st, 0, 0); err != nil || len(recs) != 1 {
		t.Fatalf("read as %s: %d, %v", role, len(recs), err)
	}
	if err := s.WriteSnapshot(ctxFor(t), []events.SnapshotEntry{{Key: []byte("k"), Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.ClearSnapshot(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	// Without CREATE, the role cannot have created the tables itself.
	if _, err := conn.Exec(ctxFor(t), "SET ROLE "+role); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctxFor(t), "CREATE TABLE crtest_x (n int)"); err == nil {
		t.Fatal("the restricted role could create a table: the test proves nothing")
	}
}
