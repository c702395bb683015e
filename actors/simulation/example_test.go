package simulation_test

import (
	"context"
	"fmt"

	"github.com/cronactor/cronactor/actors/simulation"
)

// Run a scenario and list what the scheduler recorded, tick rows included.
func Example() {
	sc, err := simulation.Parse([]byte(`
tick: 30s
until: "01:32"
tasks:
  - name: A
    interval: 1m
    first_run: "00:30"
    runs:
      - {start: "00:35", duration: 10s}
      - {start: "01:32", duration: 10s}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := simulation.Run(context.Background(), sc, simulation.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range res.Entries {
		what := e.Record.Type
		if e.Tick {
			what = "Tick"
		}
		fmt.Println(simulation.FormatTime(e.At.Sub(simulation.Epoch)), res.Tasks[e.Task], what)
	}
	// Output:
	// 00:00 A TaskCreated
	// 00:30 A RunEnqueued
	// 00:35 A RunStarted
	// 00:45 A RunCompleted
	// 01:00 A Tick
	// 01:30 A RunEnqueued
	// 01:32 A RunStarted
}

// Parse names the line and field of what is wrong.
func ExampleParse() {
	_, err := simulation.Parse([]byte("tick: 30s\nuntil: \"03:00\"\ntasks:\n  - name: A\n    intervall: 1m\n"))
	fmt.Println(err)
	// Output:
	// simulation: invalid scenario: line 5: tasks[0].intervall: unknown field (known: at, backfill_at, create_at, cron, delete_at, dst_gap, dst_overlap, end_at, exclude, first_run, heartbeat_timeout, interval, jitter, max_runs, max_waiting, missed_after, missed_run_policy, name, overlap, pause_after_failures, pause_at, queue, resume_at, retry, runs, start_at, start_deadline, timebox, timezone, tolerance, trigger_at)
}
