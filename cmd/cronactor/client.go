package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cronactor/cronactor/projections/audit"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

func init() {
	commands["task"] = command{summary: "create, list, get, update, upcoming, trigger, backfill, pause, resume, delete tasks", run: runTask,
		subs: []string{"create", "list", "get", "update", "upcoming", "trigger", "backfill", "pause", "resume", "delete"}}
	commands["owner"] = command{summary: "delete every task of an owner", run: runOwner, subs: []string{"delete"}}
	commands["history"] = command{summary: "a task's audit trail: history TASK [--format table|json]", run: runHistory}
}

// errServer is an error answer from the daemon (a *serverError).
var errServer = errors.New("server")

// client talks to the daemon's HTTP API.
type client struct {
	server string
	token  string
	http   *http.Client
}

// defaultServer is the daemon's URL when neither --server nor
// CRONACTOR_SERVER says otherwise.
const defaultServer = "http://127.0.0.1:7070"

// clientFlags adds --server and --token to fs; CRONACTOR_SERVER and
// CRONACTOR_TOKEN are their defaults (the flag wins). Every command that
// talks to the daemon takes them from here.
func clientFlags(fs *flagSet) *client {
	c := &client{http: &http.Client{Timeout: 60 * time.Second}}
	def := fs.env.getenv("CRONACTOR_SERVER")
	if def == "" {
		def = defaultServer
	}
	fs.StringVar(&c.server, "server", def, "daemon `URL` (CRONACTOR_SERVER)")
	fs.StringVar(&c.token, "token", "", "bearer `token` (CRONACTOR_TOKEN)")
	return c
}

// resolve fills what the flags left unset from the environment; called
// after parsing, so a token never shows as a default in --help.
func (c *client) resolve(env *cliEnv) error {
	if c.token == "" {
		c.token = env.getenv("CRONACTOR_TOKEN")
	}
	u, err := url.Parse(c.server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: --server %q: want http(s)://host:port", errUsage, c.server)
	}
	return nil
}

// do sends a request and decodes a 2xx JSON answer into out (if non-nil).
// It returns the raw body too, for --json.
func (c *client) do(ctx context.Context, method, path string, body any, out any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.server, "/")+path, rd)
	if err != nil {
		return nil, fmt.Errorf("%w: --server %q: %v", errUsage, c.server, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the daemon at %s (is `cronactor serve` running?): %w", c.server, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return b, newServerError(resp.StatusCode, resp.Status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return b, fmt.Errorf("unexpected answer from %s: %w", c.server, err)
		}
	}
	return b, nil
}

// Flags of task create that task update does not take, and the other way
// round: given to the wrong one, the error says what to use.
var (
	createMisplaced = map[string]string{
		"next-run": "a new task's first due time is --first-run (--next-run moves an existing task's, with task update)",
	}
	updateMisplaced = map[string]string{
		"kind":      "a task's kind cannot change: delete the task and create it again with the new kind",
		"first-run": "use --next-run to move the task's next due time",
	}
)

func runTask(ctx context.Context, env *cliEnv, args []string) error {
	sub, args := args[0], args[1:] // dispatch checked the subcommand
	fs := newFlags(env, "task "+sub)
	c := clientFlags(fs)
	asJSON := fs.Bool("json", false, "print the server's JSON (same as -o json)")
	var output string
	fs.stringAlias(&output, "o", "output", "table", "output `format`: table, wide or json")
	switch sub {
	case "create", "update":
		var name, owner, kind, firstRun, nextRun *string
		var ref *taskRef
		if sub == "create" {
			name = fs.String("name", "", "task `name`, unique within its owner (required)")
			owner = fs.String("owner", "", "`owner` reference, e.g. channel/pop3/42 (required)")
			kind = fs.String("kind", "", "handler `kind`: noop, http, exec, or one an embedder registered (required)")
			firstRun = fs.String("first-run", "", "first due `time` of an interval task, RFC 3339 (default: one interval from now)")
			fs.misplaced = createMisplaced
		} else {
			ref = addTaskRef(fs)
			ref.fixed = true
			nextRun = fs.String("next-run", "", "next due `time`, RFC 3339")
			fs.misplaced = updateMisplaced
		}
		payload := fs.String("payload", "", "payload handed to each run, as `JSON`")
		interval := fs.String("interval", "", "time between runs, a `duration` such as 1m")
		tolerance := fs.String("tolerance", "", "tolerance of the start check, a `duration` such as 5s")
		timebox := fs.String("timebox", "", "longest a run may take, a `duration` such as 30s")
		priority := fs.String("priority", "", "priority, a whole `number` (higher runs first)")
		sched := addScheduleFlags(fs)
		pol := addPolicyFlags(fs)
		if err := fs.parse(args); err != nil {
			return err
		}
		out, err := outputFormat(output, *asJSON)
		if err != nil {
			return err
		}
		body := map[string]any{}
		set := func(k, v string) {
			if v != "" {
				body[k] = v
			}
		}
		set("interval", *interval)
		if err := sched.apply(body); err != nil {
			return err
		}
		if err := pol.apply(body); err != nil {
			return err
		}
		set("tolerance", *tolerance)
		set("timebox", *timebox)
		if *payload != "" {
			if !json.Valid([]byte(*payload)) {
				return fmt.Errorf("%w: --payload must be JSON", errUsage)
			}
			body["payload"] = json.RawMessage(*payload)
		}
		if *priority != "" {
			var p int
			if _, err := fmt.Sscan(*priority, &p); err != nil {
				return fmt.Errorf("%w: --priority must be a number", errUsage)
			}
			body["priority"] = p
		}
		var path, method string
		if sub == "create" {
			if err := fs.noArgs(); err != nil {
				return err
			}
			if err := createRequired(fs); err != nil {
				return err
			}
			set("name", *name)
			set("owner", *owner)
			set("kind", *kind)
			set("first_run", *firstRun)
			if err := c.resolve(env); err != nil {
				return err
			}
			method, path = http.MethodPost, "/v1/tasks"
		} else {
			set("next_run", *nextRun)
			if err := ref.check(); err != nil {
				return err
			}
			if err := c.resolve(env); err != nil {
				return err
			}
			id, err := ref.id(ctx, c)
			if err != nil {
				return err
			}
			method, path = http.MethodPatch, "/v1/tasks/"+url.PathEscape(id)
		}
		return namedByFlag(c.showTask(ctx, env, method, path, body, out), fs)
	case "upcoming", "trigger", "backfill", "get", "pause", "resume", "delete":
		ref := addTaskRef(fs)
		count := 10
		if sub == "upcoming" {
			fs.IntVar(&count, "count", 10, "how many slots, a `number` from 1 to 1000")
		}
		var from, to string
		if sub == "backfill" {
			fs.StringVar(&from, "from", "", "the window's start, an RFC 3339 `time` (its slots at or after it)")
			fs.StringVar(&to, "to", "", "the window's end, an RFC 3339 `time` in the past (its slots before it)")
		}
		if err := fs.parse(args); err != nil {
			return err
		}
		out, err := outputFormat(output, *asJSON)
		if err != nil {
			return err
		}
		if err := ref.check(); err != nil {
			return err
		}
		if sub == "upcoming" && (count < 1 || count > 1000) {
			return fmt.Errorf("%w: --count must be between 1 and 1000", errUsage)
		}
		if sub == "backfill" {
			for _, f := range []struct{ name, v string }{{"from", from}, {"to", to}} {
				if f.v == "" {
					return fmt.Errorf("%w: --%s is required (an RFC 3339 time; the window is [--from, --to))", errUsage, f.name)
				}
			}
		}
		if err := c.resolve(env); err != nil {
			return err
		}
		id, err := ref.id(ctx, c)
		if err != nil {
			return err
		}
		switch sub {
		case "upcoming":
			return runTaskUpcoming(ctx, env, c, id, count, out == "json")
		case "trigger":
			return describeTaskError(runTaskTrigger(ctx, env, c, id, out == "json"), id)
		case "backfill":
			return describeTaskError(namedByFlag(runTaskBackfill(ctx, env, c, id, from, to, out == "json"), fs), id)
		}
		path := "/v1/tasks/" + url.PathEscape(id)
		method := map[string]string{"get": http.MethodGet, "pause": http.MethodPost, "resume": http.MethodPost, "delete": http.MethodDelete}[sub]
		if sub == "pause" || sub == "resume" {
			path += "/" + sub
		}
		return describeTaskError(c.showTask(ctx, env, method, path, nil, out), id)
	case "list":
		owner := fs.String("owner", "", "only this `owner`'s tasks")
		status := fs.String("status", "", "only tasks with this `status`: active, paused, finished, deleted")
		all := fs.Bool("all", false, "include deleted tasks")
		dueBefore := fs.String("due-before", "", "only tasks due at or before this RFC 3339 `time`")
		limit := fs.Int("limit", 0, "page `size` (default 100, at most 1000)")
		cursor := fs.String("cursor", "", "`cursor` of the next page")
		asOf := fs.String("as-of", "", "the view as of a past RFC 3339 time or log `position`")
		if err := fs.parse(args); err != nil {
			return err
		}
		out, err := outputFormat(output, *asJSON)
		if err != nil {
			return err
		}
		if err := fs.noArgs(); err != nil {
			return err
		}
		if err := c.resolve(env); err != nil {
			return err
		}
		q := url.Values{}
		for k, v := range map[string]string{"owner": *owner, "status": *status, "due_before": *dueBefore, "cursor": *cursor, "as_of": *asOf} {
			if v != "" {
				q.Set(k, v)
			}
		}
		if *limit != 0 {
			q.Set("limit", fmt.Sprint(*limit))
		}
		var page crontasks.Page
		raw, err := c.do(ctx, http.MethodGet, "/v1/tasks?"+q.Encode(), nil, &page)
		if err != nil {
			return namedByFlag(err, fs)
		}
		if out == "json" {
			_, err := env.stdout.Write(raw)
			return err
		}
		shown := page.Tasks[:0:0]
		for _, t := range page.Tasks {
			if t.Status != "deleted" || *all || *status == "deleted" {
				shown = append(shown, t)
			}
		}
		switch {
		case len(shown) > 0:
			printTasks(env.stdout, shown, out == "wide", env.now())
		case page.Next != "":
			fmt.Fprintln(env.stdout, "no tasks on this page")
		case len(page.Tasks) > 0:
			fmt.Fprintln(env.stdout, "no tasks (only deleted ones: --all shows them)")
		default:
			fmt.Fprintln(env.stdout, "no tasks")
		}
		if page.Next != "" {
			fmt.Fprintf(env.stdout, "more: --cursor %s\n", page.Next)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown task command %q", errUsage, sub)
}

// createRequired checks, before asking the daemon, that task create has
// what every task needs: a name, an owner, a kind and a schedule.
func createRequired(fs *flagSet) error {
	for _, r := range []struct{ flag, what string }{
		{"name", "the task's name, unique within its owner"},
		{"owner", "who the task belongs to, e.g. channel/pop3/42"},
		{"kind", "the handler that runs it: noop, http, exec, or one an embedder registered"},
	} {
		if fs.Lookup(r.flag).Value.String() == "" {
			return fmt.Errorf("%w: task create: --%s is required: %s", errUsage, r.flag, r.what)
		}
	}
	if !fs.given("interval") && !fs.given("cron") && !fs.given("at") {
		return fmt.Errorf("%w: task create: a schedule is required: --interval DURATION, --cron EXPR or --at TIMES", errUsage)
	}
	return nil
}

// outputFormat checks -o (or the older --json).
func outputFormat(o string, asJSON bool) (string, error) {
	if asJSON {
		return "json", nil
	}
	switch o {
	case "table", "wide", "json":
		return o, nil
	}
	return "", fmt.Errorf("%w: -o must be table, wide or json, got %q", errUsage, o)
}

func (c *client) showTask(ctx context.Context, env *cliEnv, method, path string, body any, out string) error {
	var t crontasks.Task
	raw, err := c.do(ctx, method, path, body, &t)
	if err != nil {
		return err
	}
	if out == "json" {
		_, err := env.stdout.Write(raw)
		return err
	}
	printTasks(env.stdout, []crontasks.Task{t}, out == "wide", env.now())
	return nil
}

// Table cells longer than these many columns are cut with "…" (the NAME,
// OWNER, SCHEDULE and ZONE columns); -o wide and -o json show them whole.
const (
	maxNameColumns     = 32
	maxScheduleColumns = 40
	maxZoneColumns     = 24
)

// printTasks writes tasks as a table, like `kubectl get`: times relative to
// now (absolute in wide), names and owners with control characters escaped,
// columns aligned by display width, long cells cut (whole in wide).
func printTasks(w io.Writer, ts []crontasks.Task, wide bool, now time.Time) {
	t := &table{}
	if wide {
		t.row("ID", "NAME", "OWNER", "KIND", "SCHEDULE", "ZONE", "QUEUE", "TOLERANCE", "TIMEBOX", "PRIORITY", "STATUS", "RUN STATE", "NEXT RUN", "LAST RUN", "LAST OUTCOME", "RUNS", "DONE", "DROPPED", "FORCED", "FAILED", "RETRIES", "MISSED", "AGE")
	} else {
		t.row("ID", "NAME", "OWNER", "SCHEDULE", "ZONE", "STATUS", "NEXT RUN", "LAST RUN", "AGE")
		t.limits = map[int]int{1: maxNameColumns, 2: maxNameColumns, 3: maxScheduleColumns, 4: maxZoneColumns}
	}
	for _, task := range ts {
		name, owner := escapeControl(task.Name), escapeControl(task.Owner)
		sched, zone := scheduleText(task), zoneText(task)
		age := shortDuration(now.Sub(task.CreatedAt))
		next := shownNextRun(task)
		if wide {
			t.row(task.ID.String(), name, owner, escapeControl(task.Kind), sched, zone, escapeControl(or(task.Queue, "default")),
				compactDuration(time.Duration(task.Tolerance)), compactDuration(time.Duration(task.Timebox)), fmt.Sprint(task.Priority), task.Status,
				or(task.RunState, "-"), absTime(next), absTime(task.LastRun), lastOutcome(task.LastOutcome),
				fmt.Sprint(task.RunCount), fmt.Sprint(task.CompletedCount), fmt.Sprint(task.DroppedCount), fmt.Sprint(task.ForcedCount),
				fmt.Sprint(task.FailedCount), fmt.Sprint(task.RetryCount), fmt.Sprint(task.MissedCount), age)
			continue
		}
		t.row(task.ID.String(), name, owner, sched, zone, task.Status, relTime(next, now), relTime(task.LastRun, now), age)
	}
	t.write(w)
}

// lastOutcome is how the latest run that ended, ended, with its number and
// time, as the dashboard's "Last outcome" says it: often another run than
// LAST RUN's (a retry, a manual trigger, a run still going), so apart.
func lastOutcome(o *crontasks.Outcome) string {
	if o == nil {
		return "-"
	}
	s := fmt.Sprintf("%s #%d", o.Outcome, o.Run)
	if o.Attempt > 1 {
		s += fmt.Sprintf(" (attempt %d)", o.Attempt)
	}
	return s + " " + o.At.UTC().Format(time.RFC3339)
}

// shownNextRun is the next run the table shows: none for a task that will
// not run (paused, deleted, finished), whatever next_run the row keeps for
// a resume, as the dashboard shows it.
func shownNextRun(t crontasks.Task) *time.Time {
	switch t.Status {
	case "paused", "deleted", "finished":
		return nil
	}
	return t.NextRun
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func absTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// relTime is "in 30s" for the future, "2m ago" for the past, "-" for none.
func relTime(t *time.Time, now time.Time) string {
	if t == nil {
		return "-"
	}
	if d := t.Sub(now); d > 0 {
		return "in " + shortDuration(d)
	}
	return shortDuration(now.Sub(*t)) + " ago"
}

// compactDuration is d as Go writes it without zero units: 1m, 1h30m, 90s
// stays 1m30s.
func compactDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// shortDuration is kubectl's age style: 45s, 5m30s, 3h10m, 12d, 2y.
func shortDuration(d time.Duration) string {
	switch {
	case d < 0:
		d = 0
	case d < time.Second && d > 0:
		return d.Round(time.Millisecond).String()
	}
	s := int64(d / time.Second)
	switch {
	case s < 120:
		return fmt.Sprintf("%ds", s)
	case s < 600:
		if s%60 == 0 {
			return fmt.Sprintf("%dm", s/60)
		}
		return fmt.Sprintf("%dm%ds", s/60, s%60)
	case s < 3*3600:
		return fmt.Sprintf("%dm", s/60)
	case s < 8*3600:
		if s%3600/60 == 0 {
			return fmt.Sprintf("%dh", s/3600)
		}
		return fmt.Sprintf("%dh%dm", s/3600, s%3600/60)
	case s < 2*86400:
		return fmt.Sprintf("%dh", s/3600)
	case s < 365*86400:
		return fmt.Sprintf("%dd", s/86400)
	}
	return fmt.Sprintf("%dy", s/(365*86400))
}

// escapeControl shows control characters (and bytes that are not UTF-8) as
// Go escapes, so that a name cannot break a table or drive the terminal:
// "a\nb" and "\x1b[31m" print as typed here.
func escapeControl(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func runOwner(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "owner delete")
	c := clientFlags(fs)
	asJSON := fs.Bool("json", false, "print the server's JSON")
	if err := fs.parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		return fmt.Errorf("%w: owner delete needs one OWNER", errUsage)
	}
	if err := c.resolve(env); err != nil {
		return err
	}
	var out struct {
		Owner   string `json:"owner"`
		Deleted int    `json:"deleted"`
	}
	raw, err := c.do(ctx, http.MethodDelete, "/v1/owners/"+url.PathEscape(fs.Arg(0))+"/tasks", nil, &out)
	if err != nil {
		return err
	}
	if *asJSON {
		_, err := env.stdout.Write(raw)
		return err
	}
	fmt.Fprintf(env.stdout, "deleted %d task(s) of owner %s\n", out.Deleted, escapeControl(out.Owner))
	return nil
}

func runHistory(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "history")
	c := clientFlags(fs)
	ref := addTaskRef(fs)
	format := fs.String("format", "table", "`format`: table or json (one JSON object per line)")
	limit := fs.Int("limit", historyLimit, fmt.Sprintf("show at most `N` events, the latest (1 to %d)", historyMaxLimit))
	before := fs.String("before", "", "show the events before stream `VERSION` (the first version of a page shown; default: up to the latest)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := ref.check(); err != nil {
		return err
	}
	if *format != "table" && *format != "json" {
		return fmt.Errorf("%w: --format must be table or json, got %q", errUsage, *format)
	}
	if *limit < 1 || *limit > historyMaxLimit {
		return fmt.Errorf("%w: --limit must be from 1 to %d, got %d", errUsage, historyMaxLimit, *limit)
	}
	rg := audit.Range{Limit: *limit}
	if *before != "" {
		v, err := strconv.ParseUint(*before, 10, 64)
		if err != nil {
			return fmt.Errorf("%w: --before must be a stream version (a number), got %q", errUsage, *before)
		}
		rg.Before = &v
	}
	if fs.NArg() == 1 {
		if _, err := uuid.Parse(fs.Arg(0)); err != nil {
			return fmt.Errorf("%w: TASK must be a task id: %v", errUsage, err)
		}
	}
	if err := c.resolve(env); err != nil {
		return err
	}
	task, err := ref.id(ctx, c)
	if err != nil {
		return err
	}
	id, err := uuid.Parse(task)
	if err != nil {
		return fmt.Errorf("%w: TASK must be a task id: %v", errUsage, err)
	}
	// A page folded from the stream's first event when that is near, and
	// from a look-back otherwise (projections/audit, cliMaxFold).
	page, err := cliAudit(c, id).ReadPage(ctx, id, rg)
	if err != nil {
		return err
	}
	if *format == "json" {
		err = history.WriteLines(env.stdout, page.Rows, history.Absolute(), history.LineFields{RunID: true, Detail: true, Retry: true})
	} else {
		err = history.WriteTable(env.stdout, page.Rows, history.Absolute())
	}
	if err == nil && !page.Exact {
		fmt.Fprintln(env.stderr, notExact)
	}
	if err == nil && page.Older() {
		fmt.Fprintf(env.stderr, "%d older event(s) not shown: cronactor history %s --before %d (or --limit up to %d)\n",
			page.Events[0].Version, id, page.Events[0].Version, historyMaxLimit)
	}
	return err
}

// cliMaxFold bounds the events `history` and `explain` read over the API
// before what they show, to fold it exactly from the stream's first event:
// the daemon keeps marks of long streams (projections/audit), the CLI
// none. Past it they fold history.Lookback events before it, and say so.
// A variable for the tests.
var cliMaxFold = audit.DefaultMaxFold

// notExact is what `history` and `explain` say on stderr when they folded a
// look-back.
var notExact = fmt.Sprintf("note: the task's stream is long: folded from the %d events before what is shown, so a status, spec or waiting run set earlier may not show (the daemon's GET /v1/tasks/{id}/history and /explain fold from their marks, and say \"exact\")", history.Lookback)

// cliAudit reads task id's audit trail over the API.
func cliAudit(c *client, id uuid.UUID) *audit.Reader {
	return &audit.Reader{Store: &eventsAPI{c: c, id: id}, MaxFold: cliMaxFold}
}

// history's page: the default shows this many of the latest events.
const (
	historyLimit    = 1000
	historyMaxLimit = 10000
)
