// Package simulation runs scheduling scenarios: the scheduler's own actors,
// decisions and store code (an in-memory embedded store) driven by a
// virtual clock, with scripted handlers and a scripted queue, so that the
// question "what would the scheduler do if the queue were this slow?" has
// a deterministic answer. It backs `cronactor simulate` and the end-to-end
// tests of the scheduling rules.
//
// A scenario (see Parse and docs/simulation.md) names a tick, an end time
// and tasks, and scripts when each enqueued run is picked up, how long its
// handler works and whether it fails, panics or saves a checkpoint. Run
// returns the recorded events and the tick times in a canonical order:
// time, then the task's place in the scenario, then the task's stream
// order, so the same scenario always yields the same timeline.
//
// Parse is pure. Run owns the scheduler it starts and stops it before
// returning; a Scenario may be run concurrently by several goroutines.
package simulation
