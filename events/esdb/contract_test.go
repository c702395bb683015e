package esdb_test

import (
	"errors"
	"os"
	"testing"

	"github.com/google/uuid"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/esdb"
	"github.com/cronactor/cronactor/events/esdb/esdbtestserver"
	"github.com/cronactor/cronactor/events/storetest"
)

// contractAppendSize is the maximum append size the contract suite needs
// (its largest append is about 2 MiB); a real server runs it with
// --max-append-size at least this large.
const contractAppendSize = 4 << 20

// TestContract runs the shared store contract suite against a fresh
// in-process test server per case, and, when CRONACTOR_ESDB_URL is set,
// against that EventStoreDB, in a namespace of its own per case (so the
// database may hold anything else).
func TestContract(t *testing.T) {
	t.Run("testserver", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) events.Store {
			srv, err := esdbtestserver.New()
			if err != nil {
				t.Fatal(err)
			}
			srv.SetMaxAppendSize(contractAppendSize)
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Stop)
			return openStore(t, fastURL(srv), fastOptions(t))
		})
	})
	t.Run("eventstoredb", func(t *testing.T) {
		url := os.Getenv("CRONACTOR_ESDB_URL")
		if url == "" {
			t.Skip("CRONACTOR_ESDB_URL is not set: no EventStoreDB server to run the contract suite against (the in-process test server ran it)")
		}
		storetest.Run(t, func(t *testing.T) events.Store {
			opts := fastOptions(t)
			opts.Namespace = "crtest" + uuid.NewString()[:8] + "."
			return openStore(t, url, opts)
		})
	})
}

// The test server refuses appends over its maximum size as EventStoreDB
// does, and the adapter says so.
func TestAppendTooLarge(t *testing.T) {
	srv := esdbtestserver.Run(t)
	s := openStore(t, fastURL(srv), fastOptions(t))
	big := proposal(t, "Big", 0)
	big.Data = make([]byte, esdbtestserver.DefaultMaxAppendSize+1)
	_, err := s.Append(ctxFor(t), events.TaskStream(uuid.New()), events.NoStream, big)
	if err == nil || !errors.Is(err, esdb.ErrTooLarge) {
		t.Fatalf("oversized append: %v, want ErrTooLarge", err)
	}
}
