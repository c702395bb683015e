package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/postgres"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
	"github.com/cronactor/cronactor/events/storetest"
)

// TestMain (pgtest.Main, stopping the shared server) is in commit_internal_test.go.

// fastOptions polls often and gives up on an unreachable server soon, so
// the tests that stop the server stay short.
func fastOptions() postgres.Options {
	return postgres.Options{PollInterval: 50 * time.Millisecond, OpTimeout: 5 * time.Second, MaxConns: 4}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// open opens a store on url, closed when t ends.
func open(t *testing.T, url string, opts postgres.Options) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(ctxFor(t), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestContract runs the shared store contract suite, each case on a fresh
// database.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) events.Store {
		return open(t, pgtest.URL(t), fastOptions())
	})
}
