// Command cronactor runs the scheduler daemon and its command-line clients.
//
// Each subcommand lives in its own file and registers itself in commands
// from an init function; its help (usage, description, worked example) is
// in help.go. Exit status: 0 on success and for -h/--help, 1 when the work
// failed, 2 for a usage error (unknown command or flag, bad argument).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"
)

// command is one subcommand: run gets the arguments after its name.
type command struct {
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
	// subs are the names of its own subcommands, for help and completion.
	subs []string
	// hidden commands are left out of the command list.
	hidden bool
}

// cliEnv is what a subcommand may use of the process: its streams and
// environment lookups (injected so tests can run subcommands in-process).
type cliEnv struct {
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
	// now is the wall clock, for relative times in tables.
	now func() time.Time
	// progress receives progress lines of long work; nil when stderr is
	// not a terminal (quiet).
	progress *progressLine
	// ready, when set, is told the address serve listens on once it
	// serves (tests wait on it instead of polling).
	ready func(net.Addr)
	// describe, when set, is handed each command's flag set instead of
	// printing its help (completion scripts list the flags this way).
	describe func(path string, fs *flag.FlagSet)
}

var commands = map[string]command{}

// errUsage marks an error caused by bad arguments; main exits 2 on it.
var errUsage = errors.New("usage")

// errHelp is returned by a command's flag parsing after it printed the
// help on request; dispatch turns it into success (exit 0).
var errHelp = errors.New("help printed")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &cliEnv{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, now: time.Now}
	if ok, code := runAsService(env, os.Args[1:]); ok {
		os.Exit(code)
	}
	if isTerminal(os.Stderr) {
		env.progress = &progressLine{w: os.Stderr}
	}
	os.Exit(runMain(ctx, env, os.Args[1:]))
}

// runMain runs one command line and returns the exit status.
func runMain(ctx context.Context, env *cliEnv, args []string) int {
	err := dispatch(ctx, env, args)
	var logged *loggedError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &logged):
		return 1 // the daemon's log has it, in the log's format
	case errors.Is(err, errUsage):
		fmt.Fprintf(env.stderr, "cronactor: %s\n", strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
		fmt.Fprintf(env.stderr, "Run '%s --help' for usage.\n", helpPath(args))
		return 2
	default:
		fmt.Fprintln(env.stderr, "cronactor:", err)
		return 1
	}
}

// helpPath is the command path whose help a usage error points to:
// "cronactor", "cronactor task" or "cronactor task create".
func helpPath(args []string) string {
	path := "cronactor"
	if len(args) == 0 {
		return path
	}
	c, ok := commands[args[0]]
	if !ok {
		return path
	}
	path += " " + args[0]
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") {
			continue
		}
		for _, s := range c.subs {
			if s == a {
				return path + " " + a
			}
		}
		break
	}
	return path
}

func isHelpArg(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

func dispatch(ctx context.Context, env *cliEnv, args []string) error {
	if env.now == nil {
		env.now = time.Now
	}
	if len(args) == 0 {
		usage(env.stderr)
		return fmt.Errorf("%w: no command given", errUsage)
	}
	switch {
	case isHelpArg(args[0]):
		usage(env.stdout)
		return nil
	case args[0] == "--version" || args[0] == "-version":
		return runVersion(ctx, env, args[1:])
	case args[0] == "help":
		// `cronactor help task create` is `cronactor task create --help`.
		if len(args) == 1 {
			usage(env.stdout)
			return nil
		}
		return dispatch(ctx, env, append(append([]string(nil), args[1:]...), "--help"))
	}
	c, ok := commands[args[0]]
	if !ok {
		msg := fmt.Sprintf("unknown command %q", args[0])
		if s := suggest(args[0], commandNames(false)); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return fmt.Errorf("%w: %s", errUsage, msg)
	}
	if len(c.subs) > 0 {
		// A command made of subcommands answers help itself and names an
		// unknown subcommand; the subcommand parses its own flags.
		if len(args) == 1 {
			return fmt.Errorf("%w: %s needs a subcommand: %s", errUsage, args[0], strings.Join(c.subs, ", "))
		}
		if isHelpArg(args[1]) {
			printHelp(env, args[0], nil)
			return nil
		}
		if !contains(c.subs, args[1]) {
			msg := fmt.Sprintf("unknown subcommand %q of %s (have: %s)", args[1], args[0], strings.Join(c.subs, ", "))
			if s := suggest(args[1], c.subs); s != "" {
				msg = fmt.Sprintf("unknown subcommand %q of %s; did you mean %q?", args[1], args[0], s)
			}
			return fmt.Errorf("%w: %s", errUsage, msg)
		}
	}
	err := c.run(ctx, env, args[1:])
	if errors.Is(err, errHelp) || errors.Is(err, flag.ErrHelp) {
		return nil // help was printed on request
	}
	return err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func commandNames(withHidden bool) []string {
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden || withHidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

func usage(w io.Writer) {
	fmt.Fprint(w, `cronactor — a durable recurring-task scheduler: the daemon and its clients.

usage: cronactor COMMAND [ARGS] [FLAGS]

commands:
`)
	for _, n := range commandNames(false) {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Every command answers -h/--help with its flags and an example:
  cronactor serve --help
  cronactor help task create

Client commands reach the daemon at --server (CRONACTOR_SERVER, default
http://127.0.0.1:7070) with --token (CRONACTOR_TOKEN).
Exit status: 0 done, 1 failed, 2 usage error.
`)
}

// suggest returns the name closest to s when it is close enough to be a
// typo (edit distance at most 2, or a unique prefix).
func suggest(s string, names []string) string {
	best, bestD := "", 3
	var prefixed []string
	for _, n := range names {
		if strings.HasPrefix(n, s) {
			prefixed = append(prefixed, n)
		}
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" && len(prefixed) == 1 && len(s) > 0 {
		return prefixed[0]
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
