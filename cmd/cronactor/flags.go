package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// flagSet is a command's flags: parsed in any order with its positional
// arguments, answering -h/--help with the command's help (exit 0) and
// turning every parse error into a one-line usage error (exit 2).
type flagSet struct {
	*flag.FlagSet
	env  *cliEnv
	path string
	// short maps a long flag name to its one-letter alias (-o for --output).
	short map[string]string
	// misplaced says, for a flag another command has but this one does
	// not, what to do instead ("next-run" on task create: "use
	// --first-run …"); its error names the flag and says so.
	misplaced map[string]string
}

// newFlags starts the flag set of the command at path ("task create").
func newFlags(env *cliEnv, path string) *flagSet {
	fs := flag.NewFlagSet(path, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, env: env, path: path, short: map[string]string{}}
}

// stringAlias defines --long and its one-letter alias -short on one value.
func (f *flagSet) stringAlias(p *string, short, long, def, usage string) {
	f.StringVar(p, long, def, usage)
	f.StringVar(p, short, def, usage)
	f.short[long] = short
}

// parse parses args: flags before, between and after the positional
// arguments all count; "--" ends the flags.
func (f *flagSet) parse(args []string) error {
	if f.env.describe != nil {
		f.env.describe(f.path, f.FlagSet)
		return errHelp
	}
	var pos []string
	for len(args) > 0 {
		err := f.FlagSet.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			printHelp(f.env, f.path, f)
			return errHelp
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %s", errUsage, f.path, f.flagError(err))
		}
		rest := f.FlagSet.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) > 0 {
			pos = append(pos, rest[0])
			rest = rest[1:]
		}
		args = rest
	}
	return f.FlagSet.Parse(append([]string{"--"}, pos...))
}

// flagError rewords the flag package's messages for people; a flag that
// belongs to another command says what to use instead.
func (f *flagSet) flagError(err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		if hint, ok := f.misplaced[strings.TrimLeft(name, "-")]; ok {
			return fmt.Sprintf("--%s does not apply here: %s", strings.TrimLeft(name, "-"), hint)
		}
		if len(name) > 2 {
			name = "-" + name // the flag package shows --name as -name
		}
		return "unknown flag " + name
	}
	// "invalid boolean value "x" for -name: parse error" and "invalid value
	// "x" for flag -name: …": the flag first, as the user typed it.
	if m := badValue.FindStringSubmatch(msg); m != nil {
		name, value, why := m[3], m[2], m[4]
		if len(name) > 1 {
			name = "-" + name
		}
		if m[1] == "boolean " {
			return fmt.Sprintf("-%s: want true or false, got %s", name, value)
		}
		return fmt.Sprintf("-%s: invalid value %s: %s", name, value, why)
	}
	return msg
}

var badValue = regexp.MustCompile(`^invalid (boolean )?value ("(?:[^"\\]|\\.)*") for (?:flag )?-(\S+): (.*)$`)

// given reports whether the flag name was set on the command line.
func (f *flagSet) given(name string) bool {
	set := false
	f.Visit(func(fl *flag.Flag) { set = set || fl.Name == name })
	return set
}

// putGiven puts each string flag named that was set on the command line
// into body, under the API's name for it: the flag's, with _ for -.
func (f *flagSet) putGiven(body map[string]any, names ...string) {
	for _, name := range names {
		if f.given(name) {
			body[strings.ReplaceAll(name, "-", "_")] = f.Lookup(name).Value.String()
		}
	}
}

// noArgs fails when positional arguments were given to a command that
// takes none.
func (f *flagSet) noArgs() error {
	if f.NArg() > 0 {
		return fmt.Errorf("%w: %s takes no arguments, got %q", errUsage, f.path, f.Args())
	}
	return nil
}

// printHelp prints the help of the command at path: usage, what it does,
// its subcommands or flags, and a worked example.
func printHelp(env *cliEnv, path string, f *flagSet) {
	w := env.stdout
	h := helps[path]
	usageLine := h.usage
	if usageLine == "" {
		usageLine = "cronactor " + path + " [FLAGS]"
	}
	fmt.Fprintf(w, "usage: %s\n", usageLine)
	if h.about != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(h.about))
	}
	if c, ok := commands[path]; ok && len(c.subs) > 0 {
		fmt.Fprintf(w, "\ncommands:\n")
		for _, s := range c.subs {
			fmt.Fprintf(w, "  %-12s %s\n", s, helps[path+" "+s].summary)
		}
		fmt.Fprintf(w, "\nRun 'cronactor %s COMMAND --help' for a command's flags.\n", path)
	}
	if f != nil {
		writeFlags(w, f)
	}
	if h.example != "" {
		fmt.Fprintf(w, "\nexample:\n")
		for _, l := range strings.Split(strings.TrimSpace(h.example), "\n") {
			fmt.Fprintf(w, "  %s\n", strings.TrimRight(l, " \t"))
		}
	}
}

func writeFlags(w io.Writer, f *flagSet) {
	aliases := map[string]bool{}
	for _, s := range f.short {
		aliases[s] = true
	}
	type row struct{ name, usage string }
	var rows []row
	width := 0
	f.VisitAll(func(fl *flag.Flag) {
		if aliases[fl.Name] {
			return
		}
		typ, usage := flag.UnquoteUsage(fl)
		name := "--" + fl.Name
		if s, ok := f.short[fl.Name]; ok {
			name = "-" + s + ", " + name
		}
		if typ != "" {
			name += " " + strings.ToUpper(typ)
		}
		// A zero default goes unsaid, and so does one the usage states itself.
		if d := fl.DefValue; d != "" && d != "false" && d != "0" && d != "0s" && !strings.Contains(usage, "(default") {
			usage += fmt.Sprintf(" (default %s)", d)
		}
		rows = append(rows, row{name, usage})
		width = max(width, len(name))
	})
	if len(rows) == 0 {
		return
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].name < rows[j].name })
	fmt.Fprintf(w, "\nflags:\n")
	for _, r := range rows {
		fmt.Fprintf(w, "  %-*s  %s\n", width, r.name, r.usage)
	}
	fmt.Fprintf(w, "  %-*s  %s\n", width, "-h, --help", "show this help")
}
