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
// appends and Check fail with ErrUnavailable, nothing acknowledged before
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
	if !errors.Is(err, postgres.ErrUnavailable) {
		t.Fatalf("append while the server is down: %v, want ErrUnavailable", err)
	}
	if err := s.Check(ctx); !errors.Is(err, postgres.ErrUnavailable) {
		t.Fatalf("Check while the server is down: %v, want ErrUnavailable", err)
	}

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
	if err := s.Check(ctx); err != nil {
		t.Fatalf("Check after the restart: %v", err)
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
