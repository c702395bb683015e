package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
)

// benchCommands holds the benchmarks under `cronactor bench`; each registers
// itself from its own file.
var benchCommands = map[string]command{}

func init() {
	commands["bench"] = command{
		summary: "measure throughput and latency next to a baseline (bench store|...)",
		run: func(ctx context.Context, env *cliEnv, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("%w: bench needs one of: %s", errUsage, strings.Join(benchNames(), ", "))
			}
			c, ok := benchCommands[args[0]]
			if !ok {
				return fmt.Errorf("%w: unknown benchmark %q (have: %s)", errUsage, args[0], strings.Join(benchNames(), ", "))
			}
			return c.run(ctx, env, args[1:])
		},
	}
}

func benchNames() []string {
	var names []string
	for n := range benchCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// percentile returns the p-th percentile (0..100) of sorted values.
func percentile[T any](sorted []T, p float64) T {
	var zero T
	if len(sorted) == 0 {
		return zero
	}
	i := int(float64(len(sorted)-1) * p / 100)
	return sorted[i]
}

// benchDir returns the directory a benchmark writes under: dir if given
// (kept afterwards), else a new temporary one removed by cleanup.
func benchDir(dir string) (base string, cleanup func(), err error) {
	if dir != "" {
		return dir, func() {}, nil
	}
	d, err := os.MkdirTemp("", "cronactor-bench-")
	if err != nil {
		return "", nil, err
	}
	return d, func() { os.RemoveAll(d) }, nil
}
