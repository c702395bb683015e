package simulation_test

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/simulation"
	"github.com/cronactor/cronactor/events"
)

// R9 across restarts: the process stops at random instants (as if killed)
// and starts again at once from the same store and clock. Every enqueued
// run still gets exactly one outcome, and a run that was running at a stop
// is forced to end (process_lost) once its deadline has passed.
func TestRestartRandomStops(t *testing.T) {
	n := 25
	if testing.Short() {
		n = 8
	}
	seen := map[string]int{}
	lost := 0
	for seed := range n {
		rng := rand.New(rand.NewSource(int64(1000 + seed)))
		sc, maxDelay := randomScenario(rng)
		var crashes []time.Duration
		for range 1 + rng.Intn(3) {
			crashes = append(crashes, time.Duration(1+rng.Int63n(int64(sc.Until/time.Second)-1))*time.Second)
		}
		res, err := simulation.Run(context.Background(), sc, simulation.Options{Crashes: crashes})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(res.Lives) < 2 {
			t.Fatalf("seed %d: %d lives for crashes at %v", seed, len(res.Lives), crashes)
		}
		tally(seen, res)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			facts := checkInvariants(t, sc, res, maxDelay)
			for _, life := range res.Lives[:len(res.Lives)-1] {
				for id, runs := range facts {
					for n, f := range runs {
						if f.started == nil || life.Head.Less(f.started.Position) {
							continue // not started in or before this life
						}
						endedBefore := false
						for _, o := range f.outcomes {
							endedBefore = endedBefore || !life.Head.Less(o.Position)
						}
						if endedBefore || len(f.outcomes) == 0 {
							continue
						}
						// Running when the process stopped.
						o := f.outcomes[0]
						e, err := events.Decode(o)
						if err != nil {
							t.Fatal(err)
						}
						fe, ok := e.(events.RunForcedEnd)
						if !ok || fe.Reason != events.ForcedProcessLost {
							t.Errorf("task %s run %d was running at the stop at %s; its outcome is %s %+v, want RunForcedEnd process_lost", id, n, simulation.FormatTime(life.To), o.Type, e)
							continue
						}
						if o.At.Before(f.deadline) {
							t.Errorf("task %s run %d forced to end at %s, before its deadline %s", id, n, o.At, f.deadline)
						}
						lost++
					}
				}
			}
		})
	}
	if lost == 0 {
		t.Errorf("no run was running at any stop in %d scenarios: the test proves nothing (%v)", n, seen)
	}
}
