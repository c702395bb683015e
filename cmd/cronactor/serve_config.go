package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"go.yaml.in/yaml/v3"
)

// serveConfig is the daemon's configuration. Each field comes from, in
// order of precedence: its flag, its CRONACTOR_* environment variable, the
// --config YAML file, its default (serveOptions lists all four).
type serveConfig struct {
	data      string
	listen    string
	tick      time.Duration
	store     string
	esdbURL   string
	pgURL     string
	token     string
	insecure  bool
	allowExec bool
	logFormat string
	logFile   string
	workers   int
	// queues are the named queues' limits (--queue NAME=N, repeatable).
	queues       map[string]int
	drainTimeout time.Duration
	// acceptDataLoss lets the embedded store cut a damaged write-ahead log
	// (embedded.Options.AcceptDataLoss). A flag only, never from the
	// environment or the config file, so it cannot stay on by accident.
	acceptDataLoss bool
	// viewRebuildRate caps a background rebuild of the view (events/s; 0:
	// no cap).
	viewRebuildRate int
	// maxStreamClients and maxAsOf cap the event streams open and the
	// as_of requests served at once (0: no cap).
	maxStreamClients int
	maxAsOf          int
	// historyRetention is how long the events of a task that sets no
	// history_retention are kept (0: everything).
	historyRetention time.Duration

	// configFile is the file read, "" for none.
	configFile string
	// source names where each option's value came from, by flag name:
	// "default", "file", "env CRONACTOR_TICK" or "flag --tick".
	source map[string]string
}

// serveOption is one setting of serve: its flag, environment variable and
// YAML key, and how to read and show its value.
type serveOption struct {
	flag  string // "drain-timeout"; the YAML key is the same with _ ("drain_timeout")
	def   string
	usage string
	kind  string // "string", "duration", "bool", "int": the value's type in the file and in --print-config
	set   func(c *serveConfig, v string) error
	get   func(c *serveConfig) string
}

func (o serveOption) env() string {
	return "CRONACTOR_" + strings.ToUpper(strings.ReplaceAll(o.flag, "-", "_"))
}

func (o serveOption) key() string { return strings.ReplaceAll(o.flag, "-", "_") }

func stringOpt(name, def, usage string, p func(*serveConfig) *string) serveOption {
	return serveOption{flag: name, def: def, usage: usage, kind: "string",
		set: func(c *serveConfig, v string) error { *p(c) = v; return nil },
		get: func(c *serveConfig) string { return *p(c) }}
}

func durationOpt(name, def, usage string, p func(*serveConfig) *time.Duration) serveOption {
	return serveOption{flag: name, def: def, usage: usage, kind: "duration",
		set: func(c *serveConfig, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("want a duration such as 30s or 1m, got %q", v)
			}
			*p(c) = d
			return nil
		},
		get: func(c *serveConfig) string { return p(c).String() }}
}

func boolOpt(name, usage string, p func(*serveConfig) *bool) serveOption {
	return serveOption{flag: name, def: "false", usage: usage, kind: "bool",
		set: func(c *serveConfig, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("want true or false, got %q", v)
			}
			*p(c) = b
			return nil
		},
		get: func(c *serveConfig) string { return strconv.FormatBool(*p(c)) }}
}

func intOpt(name, def, usage string, p func(*serveConfig) *int) serveOption {
	return serveOption{flag: name, def: def, usage: usage, kind: "int",
		set: func(c *serveConfig, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("want a whole number, got %q", v)
			}
			*p(c) = n
			return nil
		},
		get: func(c *serveConfig) string { return strconv.Itoa(*p(c)) }}
}

// queuesOpt is a repeatable NAME=N setting: each --queue adds one (or a
// comma-separated list); the environment variable and a scalar in the file
// take a comma-separated list, the file a list or a mapping too.
func queuesOpt(name, usage string, p func(*serveConfig) *map[string]int) serveOption {
	return serveOption{flag: name, def: "", usage: usage, kind: "queues",
		set: func(c *serveConfig, v string) error {
			m, err := parseQueues(v)
			if err != nil {
				return err
			}
			*p(c) = m
			return nil
		},
		get: func(c *serveConfig) string { return formatQueues(*p(c)) }}
}

// parseQueues reads "reports=2,mail=8" (nil for "").
func parseQueues(v string) (map[string]int, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	m := map[string]int{}
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		name, n, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("want NAME=N (e.g. reports=2), got %q", item)
		}
		if err := scheduler.CheckQueueName(name); err != nil {
			return nil, err
		}
		limit, err := strconv.Atoi(n)
		if err != nil {
			return nil, fmt.Errorf("%s: want a whole number of runs executing at once, got %q", name, n)
		}
		if limit < 1 || limit > scheduler.MaxQueueLimit {
			return nil, fmt.Errorf("%s: the limit must be between 1 and %d, got %d", name, scheduler.MaxQueueLimit, limit)
		}
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("queue %s given twice", name)
		}
		m[name] = limit
	}
	return m, nil
}

// formatQueues writes m as parseQueues reads it, by name.
func formatQueues(m map[string]int) string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		names[i] = name + "=" + strconv.Itoa(m[name])
	}
	return strings.Join(names, ",")
}

// serveOptions are every setting of serve, in the order --help and
// --print-config show them. The first five and their defaults are the
// published contract of serve; the rest were added behind them.
var serveOptions = []serveOption{
	stringOpt("data", "./cronactor-data", "data `directory` of the embedded store and the view", func(c *serveConfig) *string { return &c.data }),
	stringOpt("listen", "127.0.0.1:7070", "HTTP listen `address`", func(c *serveConfig) *string { return &c.listen }),
	durationOpt("tick", "1s", "clock tick: a `duration` such as 1s or 30s", func(c *serveConfig) *time.Duration { return &c.tick }),
	stringOpt("store", "embedded", "event `store`: embedded, esdb or postgres", func(c *serveConfig) *string { return &c.store }),
	stringOpt("esdb", "", "EventStoreDB connection `URL`, e.g. esdb://host:2113?tls=false", func(c *serveConfig) *string { return &c.esdbURL }),
	stringOpt("postgres", "", "PostgreSQL connection `URL` (libpq form), e.g. postgres://cronactor@db:5432/cronactor", func(c *serveConfig) *string { return &c.pgURL }),
	stringOpt("token", "", "bearer `token` required on /v1", func(c *serveConfig) *string { return &c.token }),
	boolOpt("insecure", "allow a non-loopback listen address without a token", func(c *serveConfig) *bool { return &c.insecure }),
	boolOpt("allow-exec", "enable the exec handler kind", func(c *serveConfig) *bool { return &c.allowExec }),
	intOpt("workers", "8", "`number` of runs of the default queue executing at once", func(c *serveConfig) *int { return &c.workers }),
	queuesOpt("queue", "a named queue and how many of its runs execute at once, `NAME=N` (repeatable; e.g. --queue reports=2 --queue mail=8)", func(c *serveConfig) *map[string]int { return &c.queues }),
	durationOpt("drain-timeout", "30s", "on SIGINT/SIGTERM, how long running runs may finish (a `duration`)", func(c *serveConfig) *time.Duration { return &c.drainTimeout }),
	stringOpt("log-format", "text", "log `format`: text or json (one format for the whole run)", func(c *serveConfig) *string { return &c.logFormat }),
	stringOpt("log-file", "", "append logs to this `file` instead of stderr", func(c *serveConfig) *string { return &c.logFile }),
	intOpt("max-stream-clients", "256", "event streams (GET /v1/events/stream) open at once; one more gets 429 (a `number`; 0: no cap)", func(c *serveConfig) *int { return &c.maxStreamClients }),
	intOpt("max-as-of", "8", "requests with ?as_of= (views of the past, each folding the log) served at once; one more gets 429 (a `number`; 0: no cap)", func(c *serveConfig) *int { return &c.maxAsOf }),
	durationOpt("history-retention", "0s", "keep the events of a task that sets no history_retention for this `duration` (0s: keep everything); older ones leave its stream after a TaskCompacted", func(c *serveConfig) *time.Duration { return &c.historyRetention }),
	intOpt("view-rebuild-rate", "0", "events per second a background rebuild of a damaged cron_tasks view folds at most (a `number`; 0: no cap)", func(c *serveConfig) *int { return &c.viewRebuildRate }),
}

// optionFlag is the flag.Value of one option: it only records the text
// given, applied after the file and the environment.
type optionFlag struct {
	opt   serveOption
	given *map[string]string
}

func (f optionFlag) String() string {
	if f.opt.kind == "bool" && f.opt.def == "false" {
		return "false"
	}
	return f.opt.def
}
func (f optionFlag) Set(v string) error {
	if prev, ok := (*f.given)[f.opt.flag]; ok && f.opt.kind == "queues" {
		v = prev + "," + v // repeatable: each --queue adds one
	}
	(*f.given)[f.opt.flag] = v
	return nil
}
func (f optionFlag) IsBoolFlag() bool { return f.opt.kind == "bool" }

// serveMaxConfig bounds the config file read.
const serveMaxConfig = 1 << 20

// parseServeFlags reads serve's settings from flags, environment and the
// config file. printConfig reports --print-config.
func parseServeFlags(env *cliEnv, args []string) (serveConfig, error) {
	c, _, err := parseServe(env, args)
	return c, err
}

func parseServe(env *cliEnv, args []string) (c serveConfig, printConfig bool, err error) {
	fs := newFlags(env, "serve")
	given := map[string]string{}
	for _, o := range serveOptions {
		fs.Var(optionFlag{opt: o, given: &given}, o.flag, o.usage+" ("+o.env()+")")
	}
	configFile := fs.String("config", "", "YAML `file` of settings: keys are these flags with _ for - (drain_timeout: 1m) (CRONACTOR_CONFIG)")
	fs.BoolVar(&c.acceptDataLoss, "accept-data-loss", false, "embedded store: open even if the newest write-ahead log is damaged before its end, giving up the events after the damage; a copy of the log and a DATA_LOSS report are kept in the data directory (use once, on purpose; a flag only, never from the environment or the file)")
	fs.BoolVar(&printConfig, "print-config", false, "print the effective settings as YAML, each with where it came from, and exit")
	if err := fs.parse(args); err != nil {
		return c, false, err
	}
	if err := fs.noArgs(); err != nil {
		return c, false, err
	}
	c.source = map[string]string{}
	for _, o := range serveOptions {
		if err := o.set(&c, o.def); err != nil {
			panic(fmt.Sprintf("serve: default of --%s: %v", o.flag, err))
		}
		c.source[o.flag] = "default"
	}
	c.configFile = *configFile
	if c.configFile == "" {
		c.configFile = env.getenv("CRONACTOR_CONFIG")
	}
	if c.configFile != "" {
		if err := c.readFile(c.configFile); err != nil {
			return c, false, err
		}
	}
	for _, o := range serveOptions {
		if v := env.getenv(o.env()); v != "" {
			if err := o.set(&c, v); err != nil {
				return c, false, fmt.Errorf("%w: %s: %v", errUsage, o.env(), err)
			}
			c.source[o.flag] = "env " + o.env()
		}
	}
	for _, o := range serveOptions {
		if v, ok := given[o.flag]; ok {
			if err := o.set(&c, v); err != nil {
				return c, false, fmt.Errorf("%w: --%s: %v", errUsage, o.flag, err)
			}
			c.source[o.flag] = "flag --" + o.flag
		}
	}
	return c, printConfig, c.validate()
}

// readFile applies the YAML config file: a mapping of option keys to
// scalars; an unknown key or a bad value is an error naming its line.
func (c *serveConfig) readFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: --config: %v", errUsage, err)
	}
	defer f.Close()
	text, err := io.ReadAll(io.LimitReader(f, serveMaxConfig+1))
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if len(text) > serveMaxConfig {
		return fmt.Errorf("%w: config %s: larger than %d bytes", errUsage, path, serveMaxConfig)
	}
	return c.applyFile(path, text)
}

// applyFile applies the text of the config file read from path.
func (c *serveConfig) applyFile(path string, text []byte) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return fmt.Errorf("%w: config %s: %v", errUsage, path, err)
	}
	if len(doc.Content) == 0 {
		return nil // an empty file sets nothing
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("%w: config %s: line %d: want a mapping of settings (tick: 1s)", errUsage, path, m.Line)
	}
	byKey := map[string]serveOption{}
	for _, o := range serveOptions {
		byKey[o.key()] = o
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		o, ok := byKey[k.Value]
		if !ok {
			return fmt.Errorf("%w: config %s: line %d: unknown setting %q (settings are the serve flags with _ for -, e.g. drain_timeout)", errUsage, path, k.Line, k.Value)
		}
		if seen[k.Value] {
			return fmt.Errorf("%w: config %s: line %d: %s given twice", errUsage, path, k.Line, k.Value)
		}
		seen[k.Value] = true
		if o.kind == "queues" && (v.Kind == yaml.SequenceNode || v.Kind == yaml.MappingNode) {
			text, err := queuesNode(v)
			if err != nil {
				return fmt.Errorf("%w: config %s: line %d: %s: %v", errUsage, path, v.Line, k.Value, err)
			}
			v = &yaml.Node{Kind: yaml.ScalarNode, Value: text, Line: v.Line}
		}
		if v.Kind != yaml.ScalarNode {
			return fmt.Errorf("%w: config %s: line %d: %s: want a single value", errUsage, path, v.Line, k.Value)
		}
		if err := o.set(c, v.Value); err != nil {
			return fmt.Errorf("%w: config %s: line %d: %s: %v", errUsage, path, v.Line, k.Value, err)
		}
		c.source[o.flag] = "file"
	}
	return nil
}

// queuesNode reads the queues of the config file written as a list
// ([reports=2, mail=8]) or a mapping ({reports: 2, mail: 8}) as the
// comma-separated list parseQueues reads.
func queuesNode(v *yaml.Node) (string, error) {
	var items []string
	if v.Kind == yaml.SequenceNode {
		for _, it := range v.Content {
			if it.Kind != yaml.ScalarNode || strings.Contains(it.Value, ",") {
				return "", fmt.Errorf("line %d: want NAME=N items (reports=2)", it.Line)
			}
			items = append(items, it.Value)
		}
	} else {
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, n := v.Content[i], v.Content[i+1]
			if n.Kind != yaml.ScalarNode || strings.ContainsAny(k.Value, ",=") {
				return "", fmt.Errorf("line %d: want NAME: N entries (reports: 2)", k.Line)
			}
			items = append(items, k.Value+"="+n.Value)
		}
	}
	return strings.Join(items, ","), nil
}

func (c serveConfig) validate() error {
	switch {
	case c.store != "embedded" && c.store != "esdb" && c.store != "postgres":
		return fmt.Errorf("%w: --store must be embedded, esdb or postgres, got %q", errUsage, c.store)
	case c.store == "esdb" && c.esdbURL == "":
		return fmt.Errorf("%w: --store esdb needs --esdb URL (or CRONACTOR_ESDB)", errUsage)
	case c.store == "postgres" && c.pgURL == "":
		return fmt.Errorf("%w: --store postgres needs --postgres URL (or CRONACTOR_POSTGRES)", errUsage)
	case c.store == "embedded" && c.data == "":
		return fmt.Errorf("%w: --data must not be empty", errUsage)
	case c.tick < time.Millisecond:
		return fmt.Errorf("%w: --tick must be at least 1ms, got %s", errUsage, c.tick)
	case c.workers < 1 || c.workers > 100000:
		return fmt.Errorf("%w: --workers must be between 1 and 100000, got %d", errUsage, c.workers)
	case c.drainTimeout < 0:
		return fmt.Errorf("%w: --drain-timeout must not be negative", errUsage)
	case c.viewRebuildRate < 0 || c.viewRebuildRate > 10_000_000:
		return fmt.Errorf("%w: --view-rebuild-rate must be between 0 and 10000000, got %d", errUsage, c.viewRebuildRate)
	case c.maxStreamClients < 0 || c.maxStreamClients > 1_000_000:
		return fmt.Errorf("%w: --max-stream-clients must be between 0 and 1000000, got %d", errUsage, c.maxStreamClients)
	case c.maxAsOf < 0 || c.maxAsOf > 100_000:
		return fmt.Errorf("%w: --max-as-of must be between 0 and 100000, got %d", errUsage, c.maxAsOf)
	case c.logFormat != "text" && c.logFormat != "json":
		return fmt.Errorf("%w: --log-format must be text or json, got %q", errUsage, c.logFormat)
	}
	host, _, err := net.SplitHostPort(c.listen)
	if err != nil {
		return fmt.Errorf("%w: --listen %q: %v", errUsage, c.listen, err)
	}
	if c.token == "" && !c.insecure && !isLoopback(host) {
		return fmt.Errorf("%w: refusing to listen on %s without --token; give a token, or --insecure to accept the risk", errUsage, c.listen)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// printConfig writes the effective settings as a YAML file --config
// reads, each value followed by where it came from. The token is shown as
// set or not, never its value.
func (c serveConfig) print(w io.Writer) error {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	for _, o := range serveOptions {
		v := o.get(&c)
		val := &yaml.Node{Kind: yaml.ScalarNode, Value: v, LineComment: c.source[o.flag]}
		switch o.kind {
		case "bool":
			val.Tag = "!!bool"
		case "int":
			val.Tag = "!!int"
		default:
			val.Tag = "!!str"
		}
		if o.flag == "token" && v != "" {
			val.Value = "(set, not shown)"
			val.Style = yaml.DoubleQuotedStyle
		}
		doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: o.key()}, val)
	}
	var buf bytes.Buffer
	from := "no config file"
	if c.configFile != "" {
		from = "config file " + c.configFile
	}
	fmt.Fprintf(&buf, "# cronactor serve: effective settings (%s); precedence: flag > env > file > default\n", from)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	out := buf.Bytes()
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	_, err := w.Write(out)
	return err
}

var _ flag.Value = optionFlag{}
