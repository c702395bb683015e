package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/cronactor/cronactor/projections/history"
)

func init() {
	commands["task"] = command{summary: "create|list|get|update|pause|resume|delete tasks through the HTTP API", run: runTask}
	commands["owner"] = command{summary: "owner delete OWNER: delete every task of an owner", run: runOwner}
	commands["history"] = command{summary: "history TASK [--format table|json]: a task's audit trail", run: runHistory}
}

// errServer is an error answer from the daemon, shown as it came.
var errServer = errors.New("server")

// client talks to the daemon's HTTP API.
type client struct {
	server string
	token  string
	http   *http.Client
}

// clientFlags adds --server and --token to fs.
func clientFlags(fs *flag.FlagSet, env *cliEnv) *client {
	c := &client{http: &http.Client{Timeout: 60 * time.Second}}
	def := env.getenv("CRONACTOR_SERVER")
	if def == "" {
		def = "http://127.0.0.1:7070"
	}
	fs.StringVar(&c.server, "server", def, "daemon URL (CRONACTOR_SERVER)")
	fs.StringVar(&c.token, "token", env.getenv("CRONACTOR_TOKEN"), "bearer token (CRONACTOR_TOKEN)")
	return c
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
		return b, fmt.Errorf("%w: %s: %s", errServer, resp.Status, strings.TrimSpace(string(b)))
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return b, fmt.Errorf("unexpected answer from %s: %w", c.server, err)
		}
	}
	return b, nil
}

func parse(fs *flag.FlagSet, args []string) error {
	// Allow flags after positional arguments: `task get ID --json`.
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		args = fs.Args()
		if len(args) > 0 {
			pos = append(pos, args[0])
			args = args[1:]
		}
	}
	return fs.Parse(append([]string{"--"}, pos...))
}

func runTask(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: task needs one of create, list, get, update, pause, resume, delete", errUsage)
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("task "+sub, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	c := clientFlags(fs, env)
	asJSON := fs.Bool("json", false, "print the server's JSON")
	switch sub {
	case "create", "update":
		name := fs.String("name", "", "task name (create)")
		owner := fs.String("owner", "", "owner reference, e.g. channel/pop3/42 (create)")
		kind := fs.String("kind", "", "handler kind: noop, http, exec (create)")
		payload := fs.String("payload", "", "JSON payload")
		interval := fs.String("interval", "", "interval, e.g. 1m")
		tolerance := fs.String("tolerance", "", "tolerance, e.g. 5s")
		timebox := fs.String("timebox", "", "timebox, e.g. 30s")
		priority := fs.String("priority", "", "priority (higher runs first)")
		firstRun := fs.String("first-run", "", "first due time, RFC 3339 (create)")
		nextRun := fs.String("next-run", "", "next due time, RFC 3339 (update)")
		if err := parse(fs, args); err != nil {
			return err
		}
		body := map[string]any{}
		set := func(k, v string) {
			if v != "" {
				body[k] = v
			}
		}
		set("interval", *interval)
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
			set("name", *name)
			set("owner", *owner)
			set("kind", *kind)
			set("first_run", *firstRun)
			if fs.NArg() != 0 {
				return fmt.Errorf("%w: task create takes flags only", errUsage)
			}
			method, path = http.MethodPost, "/v1/tasks"
		} else {
			set("next_run", *nextRun)
			if fs.NArg() != 1 {
				return fmt.Errorf("%w: task update TASK_ID [flags]", errUsage)
			}
			method, path = http.MethodPatch, "/v1/tasks/"+url.PathEscape(fs.Arg(0))
		}
		return c.showTask(ctx, env, method, path, body, *asJSON)
	case "get", "pause", "resume", "delete":
		if err := parse(fs, args); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return fmt.Errorf("%w: task %s TASK_ID", errUsage, sub)
		}
		path := "/v1/tasks/" + url.PathEscape(fs.Arg(0))
		method := map[string]string{"get": http.MethodGet, "pause": http.MethodPost, "resume": http.MethodPost, "delete": http.MethodDelete}[sub]
		if sub == "pause" || sub == "resume" {
			path += "/" + sub
		}
		return c.showTask(ctx, env, method, path, nil, *asJSON)
	case "list":
		owner := fs.String("owner", "", "only this owner's tasks")
		status := fs.String("status", "", "only tasks with this status: active, paused, deleted")
		dueBefore := fs.String("due-before", "", "only tasks due at or before this RFC 3339 time")
		limit := fs.Int("limit", 0, "page size (default 100, at most 1000)")
		cursor := fs.String("cursor", "", "cursor of the next page")
		asOf := fs.String("as-of", "", "the view as of a past RFC 3339 time or log position")
		if err := parse(fs, args); err != nil {
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
			return err
		}
		if *asJSON {
			_, err := env.stdout.Write(raw)
			return err
		}
		printTasks(env.stdout, page.Tasks)
		if page.Next != "" {
			fmt.Fprintf(env.stdout, "more: --cursor %s\n", page.Next)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown task command %q", errUsage, sub)
}

func (c *client) showTask(ctx context.Context, env *cliEnv, method, path string, body any, asJSON bool) error {
	var t crontasks.Task
	raw, err := c.do(ctx, method, path, body, &t)
	if err != nil {
		return err
	}
	if asJSON {
		_, err := env.stdout.Write(raw)
		return err
	}
	printTasks(env.stdout, []crontasks.Task{t})
	return nil
}

func printTasks(w io.Writer, ts []crontasks.Task) {
	tw := tabwriter.NewWriter(w, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tOWNER\tNAME\tKIND\tINTERVAL\tSTATUS\tNEXT RUN\tLAST RUN\tRUNS\tDONE\tDROPPED\tFORCED\tFAILED")
	ts0 := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\n", t.ID, t.Owner, t.Name, t.Kind, t.Interval,
			t.Status, ts0(t.NextRun), ts0(t.LastRun), t.RunCount, t.CompletedCount, t.DroppedCount, t.ForcedCount, t.FailedCount)
	}
	tw.Flush()
}

func runOwner(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 || args[0] != "delete" {
		return fmt.Errorf("%w: owner delete OWNER", errUsage)
	}
	fs := flag.NewFlagSet("owner delete", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	c := clientFlags(fs, env)
	asJSON := fs.Bool("json", false, "print the server's JSON")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) == "" {
		return fmt.Errorf("%w: owner delete OWNER", errUsage)
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
	fmt.Fprintf(env.stdout, "deleted %d task(s) of owner %s\n", out.Deleted, out.Owner)
	return nil
}

func runHistory(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	c := clientFlags(fs, env)
	format := fs.String("format", "table", "table or json (one JSON object per line)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: history TASK_ID [--format table|json]", errUsage)
	}
	if *format != "table" && *format != "json" {
		return fmt.Errorf("%w: --format must be table or json, got %q", errUsage, *format)
	}
	// The events come in pages; "next" names the following one.
	var list history.EventList
	for after := ""; ; {
		var page history.EventList
		path := "/v1/tasks/" + url.PathEscape(fs.Arg(0)) + "/events"
		if after != "" {
			path += "?after=" + url.QueryEscape(after)
		}
		if _, err := c.do(ctx, http.MethodGet, path, nil, &page); err != nil {
			return err
		}
		list.Events = append(list.Events, page.Events...)
		if page.Next == "" || page.Next == after {
			break
		}
		after = page.Next
	}
	recs, err := list.Recorded()
	if err != nil {
		return err
	}
	rows, err := history.Rows(recs)
	if err != nil {
		return err
	}
	if *format == "json" {
		return history.WriteLines(env.stdout, rows, history.Absolute(), history.LineFields{RunID: true, Detail: true})
	}
	return history.WriteTable(env.stdout, rows, history.Absolute())
}
