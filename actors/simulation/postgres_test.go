package simulation_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"testing"

	"github.com/cronactor/cronactor/actors/simulation"
	"github.com/cronactor/cronactor/events/postgres"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
)

// TestMain stops the throwaway Postgres server of the tests on Postgres.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// varies is what differs between two runs of one scenario: a panic's
// stack has goroutine numbers and addresses.
var varies = regexp.MustCompile(`goroutine \d+|0x[0-9a-f]+`)

// entryKey is what an entry says, without its global position (tasks
// deciding at the same instant may take either order in the log).
func entryKey(e simulation.Entry) string {
	return fmt.Sprintf("%s task=%d tick=%v %s@%d %s %s", e.At.Format("15:04:05.000"), e.Task, e.Tick,
		e.Record.Stream, e.Record.Version, e.Record.Type, varies.ReplaceAll(e.Record.Data, nil))
}

// Random scenarios on the Postgres store keep the scheduling rules and
// record the same timeline as on the embedded store.
func TestPropertyRandomScenariosOnPostgres(t *testing.T) {
	n := 6
	if testing.Short() {
		n = 2
	}
	for seed := range n {
		sc, maxDelay := randomScenario(rand.New(rand.NewSource(int64(seed))))
		want, err := simulation.Run(context.Background(), sc, simulation.Options{})
		if err != nil {
			t.Fatalf("seed %d on the embedded store: %v", seed, err)
		}
		store, err := postgres.Open(context.Background(), pgtest.URL(t), postgres.Options{MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		got, err := simulation.Run(context.Background(), sc, simulation.Options{Store: store})
		store.Close()
		if err != nil {
			t.Fatalf("seed %d on Postgres: %v", seed, err)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			checkInvariants(t, sc, got, maxDelay)
			if len(got.Entries) != len(want.Entries) {
				t.Fatalf("%d entries on Postgres, %d on the embedded store", len(got.Entries), len(want.Entries))
			}
			for i := range want.Entries {
				if g, w := entryKey(got.Entries[i]), entryKey(want.Entries[i]); g != w {
					t.Fatalf("entry %d on Postgres:\n  %s\nembedded:\n  %s", i, g, w)
				}
			}
		})
	}
}
