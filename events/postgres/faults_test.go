package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/postgres"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
	"github.com/google/uuid"
)

// The server stops (as a crash: immediate) and comes back: meanwhile
// appends fail with ErrUnavailable and WriteStatus says unreachable (the
// failed append counted), nothing acknowledged before
// is lost, a subscription rides the outage out, and appends work again
// once it is back.
func TestServerRestart(t *testing.T) {
	srv := pgtest.Start(t)
	url, err := srv.CreateDatabase("restart")
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, url, fastOptions())
	ctx := ctxFor(t)
	st := events.TaskStream(uuid.New())
	before := proposal("before")
	if _, err := s.Append(ctx, st, events.NoStream, before); err != nil {
		t.Fatal(err)
	}
	got := make(chan events.Recorded, 10)
	subCtx, cancel := context.WithCancel(ctx)
	subDone := make(chan error, 1)
	go func() {
		subDone <- s.Subscribe(subCtx, events.Start, func(r events.Recorded) error { got <- r; return nil })
	}()
	if r := <-got; r.ID != before.ID {
		t.Fatalf("subscriber got %s first", r.ID)
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	_, err = s.Append(ctx, st, events.Exactly(0), proposal("while down"))
	if !errors.Is(err, postgres.ErrUnavailable) || !errors.Is(err, events.ErrUnreachable) || events.Condition(err) != "unreachable" {
		t.Fatalf("append while the server is down: %v, want ErrUnavailable and events.ErrUnreachable (the API's 503)", err)
	}
	waitStatus(t, s, 5*time.Second, "after a failed append", func(st events.WriteStatus) bool {
		return errors.Is(st.Err, events.ErrUnreachable) && errors.Is(st.Err, postgres.ErrUnavailable) && st.Refused == 1
	})

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	after := proposal("after")
	var res events.AppendResult
	// The pool's connections died with the server: an attempt may meet
	// one before the pool replaces it.
	for i := 0; ; i++ {
		res, err = s.Append(ctx, st, events.Exactly(0), after)
		if err == nil || i == 3 {
			break
		}
	}
	if err != nil {
		t.Fatalf("append after the restart: %v", err)
	}
	if res.Version != 1 {
		t.Fatalf("append after the restart at version %d, want 1 (the failed one must not have landed)", res.Version)
	}
	if st := s.WriteStatus(); st.Err != nil {
		t.Fatalf("WriteStatus after an append succeeded: %v", st.Err)
	}
	select {
	case r := <-got:
		if r.ID != after.ID {
			t.Fatalf("subscriber got %s after the restart, want the new event", r.ID)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the subscription did not resume after the restart")
	}
	cancel()
	if err := <-subDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("Subscribe ended with %v", err)
	}
	recs, err := s.ReadStream(ctx, st, 0, 0)
	if err != nil || len(recs) != 2 || recs[0].ID != before.ID {
		t.Fatalf("stream after the restart: %d events, %v", len(recs), err)
	}
}

// waitStatus polls WriteStatus until want says yes, for at most limit; it
// returns how long that took.
func waitStatus(t *testing.T, s *postgres.Store, limit time.Duration, what string, want func(events.WriteStatus) bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !want(s.WriteStatus()) {
		if time.Since(start) > limit {
			t.Fatalf("%s: WriteStatus still %+v after %s", what, s.WriteStatus(), limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// An idle store learns that its server went away, and that it came back,
// without an append to find out: the listener's broken connection calls
// the prober in, which says it is unreachable, and then that it answers
// again; each within a bound (a probe every 500 ms). A connection killed by pg_terminate_backend (the listener's) is
// not an outage: the status stays writable.
func TestWriteStatusOfAnIdleStore(t *testing.T) {
	srv := pgtest.Start(t)
	url, err := srv.CreateDatabase("idle")
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, url, fastOptions())
	ctx := ctxFor(t)
	if st := s.WriteStatus(); st.Err != nil {
		t.Fatalf("WriteStatus of a fresh store: %v", st.Err)
	}
	if _, err := s.Append(ctx, events.TaskStream(uuid.New()), events.NoStream, proposal("one")); err != nil {
		t.Fatal(err)
	}
	// Kill every other backend of the database: the listener's connection
	// and the pool's idle ones.
	if n, err := srv.TerminateBackends("idle"); err != nil || n == 0 {
		t.Fatalf("terminate backends: %d, %v", n, err)
	}
	// Watched for a second: the listener reconnects, the prober probes.
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if st := s.WriteStatus(); st.Err != nil {
			t.Fatalf("WriteStatus after its connections were killed: %v, want writable", st.Err)
		}
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	took := waitStatus(t, s, 5*time.Second, "server stopped", func(st events.WriteStatus) bool {
		return errors.Is(st.Err, events.ErrUnreachable) && st.Condition() == "unreachable" && !st.RestartNeeded
	})
	t.Logf("unreachable after %s", took)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	took = waitStatus(t, s, 5*time.Second, "server restarted", func(st events.WriteStatus) bool { return st.Err == nil })
	t.Logf("writable again after %s", took)
}

// Connections killed by pg_terminate_backend (an operator, a pooler's
// failover) while the store is idle: the next appends find the pool's
// connections broken before they wrote anything and go on other
// connections, instead of failing their callers.
func TestAppendAfterConnectionsKilled(t *testing.T) {
	srv := pgtest.Start(t)
	url, err := srv.CreateDatabase("killed")
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, url, fastOptions())
	ctx := ctxFor(t)
	for round := range 3 {
		// Several appends at once, so the pool holds several connections.
		errs := make(chan error, 8)
		for range 8 {
			go func() {
				_, err := s.Append(ctx, events.TaskStream(uuid.New()), events.NoStream, proposal("fill"))
				errs <- err
			}()
		}
		for range 8 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		if n, err := srv.TerminateBackends("killed"); err != nil || n == 0 {
			t.Fatalf("terminate backends: %d, %v", n, err)
		}
		if _, err := s.Append(ctx, events.TaskStream(uuid.New()), events.NoStream, proposal("after")); err != nil {
			t.Fatalf("round %d: the append after the kill failed: %v", round, err)
		}
	}
}
