package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/cronactor/cronactor/actors/simulation"
	"github.com/cronactor/cronactor/projections/history"
)

func init() {
	commands["simulate"] = command{
		summary: "run a scenario on a virtual clock and print what the scheduler did: simulate SCENARIO [--format table|json] [--hide-idle]",
		run:     runSimulate,
	}
}

// simulateMaxScenario bounds the scenario file read.
const simulateMaxScenario = 4 << 20

func runSimulate(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "simulate")
	format := fs.String("format", "table", "output `format`: table (the audit table) or json (one object per line)")
	hideIdle := fs.Bool("hide-idle", false, "leave out the ticks that found nothing to do (\"Cron executes\" rows, \"Tick\" lines)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(1))
	}
	path := fs.Arg(0)
	if path == "" {
		return fmt.Errorf("%w: simulate needs a SCENARIO file (YAML or JSON)", errUsage)
	}
	if *format != "table" && *format != "json" {
		return fmt.Errorf("%w: --format must be table or json, not %q", errUsage, *format)
	}
	text, err := readScenario(path)
	if err != nil {
		return err
	}
	sc, err := simulation.Parse(text)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	res, err := simulation.Run(ctx, sc, simulation.Options{})
	if err != nil {
		return fmt.Errorf("simulate %s: %w", path, err)
	}
	return writeSimulation(env.stdout, res, *format, history.TimelineOptions{HideIdle: *hideIdle})
}

func readScenario(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	defer f.Close()
	text, err := io.ReadAll(io.LimitReader(f, simulateMaxScenario+1))
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	if len(text) > simulateMaxScenario {
		return nil, fmt.Errorf("scenario %s: larger than %d bytes", path, simulateMaxScenario)
	}
	return text, nil
}

// writeSimulation renders a simulation's timeline with projections/history,
// the renderer of `cronactor history`: the worked example's table (with a
// Task column when the scenario has several tasks), or JSON lines; times as
// MM:SS, or RFC 3339 instants when the scenario gives its start.
func writeSimulation(w io.Writer, res *simulation.Result, format string, opt history.TimelineOptions) error {
	tf := history.Relative(res.Start)
	if res.Absolute {
		tf = history.Absolute()
	}
	return history.WriteTimelineWith(w, timeline(res.Entries), tf, format, opt)
}

func timeline(entries []simulation.Entry) []history.TimelineEntry {
	out := make([]history.TimelineEntry, len(entries))
	for i, e := range entries {
		out[i] = history.TimelineEntry{At: e.At, TaskID: e.TaskID, Tick: e.Tick, Record: e.Record}
	}
	return out
}
