// Command cronactor runs the scheduler daemon and its command-line clients.
//
// Each subcommand lives in its own file and registers itself in commands
// from an init function, so subcommands are added without touching this file.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand: run gets the arguments after its name.
type command struct {
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

// cliEnv is what a subcommand may use of the process: its streams and
// environment lookups (injected so tests can run subcommands in-process).
type cliEnv struct {
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

var commands = map[string]command{}

// errUsage marks an error caused by bad arguments; main exits 2 on it.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &cliEnv{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	if err := dispatch(ctx, env, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "cronactor:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func dispatch(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(env.stdout)
		if len(args) == 0 {
			return fmt.Errorf("%w: no command given", errUsage)
		}
		return nil
	}
	c, ok := commands[args[0]]
	if !ok {
		usage(env.stderr)
		return fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	return c.run(ctx, env, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: cronactor COMMAND [ARGS]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
}
