package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

func init() {
	commands["explain"] = command{
		summary: "why did (or didn't) a task run at a time: explain TASK --at TIME",
		run:     runExplain,
	}
}

// explainMaxBody bounds the events response read from the server.
const explainMaxBody = 64 << 20

func runExplain(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlags(env, "explain")
	c := clientFlags(fs)
	ref := addTaskRef(fs)
	atFlag := fs.String("at", "", "the `time` to explain, RFC 3339 (e.g. 2026-11-22T02:03:00Z); required")
	window := fs.Duration("window", 0, "list decisions this far on each side of --at (default: one interval of the task)")
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(1))
	}
	if err := ref.check(); err != nil {
		return err
	}
	if fs.NArg() == 1 {
		if _, err := uuid.Parse(fs.Arg(0)); err != nil {
			return fmt.Errorf("%w: TASK must be a task id: %v", errUsage, err)
		}
	}
	if *atFlag == "" {
		return fmt.Errorf("%w: --at is required", errUsage)
	}
	at, err := time.Parse(time.RFC3339Nano, *atFlag)
	if err != nil {
		return fmt.Errorf("%w: --at: want an RFC 3339 time: %v", errUsage, err)
	}
	if *window < 0 {
		return fmt.Errorf("%w: --window must not be negative", errUsage)
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
	list, err := fetchTaskEvents(ctx, c, id)
	if err != nil {
		return err
	}
	recs, err := list.Recorded()
	if err != nil {
		return fmt.Errorf("events of task %s from %s: %w", id, c.server, err)
	}
	ex, err := history.Explain(recs, at, *window)
	if err != nil {
		return fmt.Errorf("explain task %s: %w", id, err)
	}
	return ex.Write(env.stdout, history.Absolute())
}

// fetchTaskEvents reads every page of GET /v1/tasks/{id}/events.
func fetchTaskEvents(ctx context.Context, c *client, id uuid.UUID) (history.EventList, error) {
	all := history.EventList{TaskID: id}
	for after := ""; ; {
		page, err := fetchTaskEventsPage(ctx, c, id, after)
		if err != nil {
			return history.EventList{}, err
		}
		all.Events = append(all.Events, page.Events...)
		if page.Next == "" || page.Next == after {
			return all, nil
		}
		after = page.Next
	}
}

// fetchTaskEventsPage reads the page of GET /v1/tasks/{id}/events after
// the stream version after ("": the first page).
func fetchTaskEventsPage(ctx context.Context, c *client, id uuid.UUID, after string) (history.EventList, error) {
	base, err := url.Parse(c.server)
	if err != nil {
		return history.EventList{}, fmt.Errorf("%w: --server %q: %v", errUsage, c.server, err)
	}
	u := base.JoinPath("v1", "tasks", id.String(), "events")
	if after != "" {
		u.RawQuery = url.Values{"after": {after}}.Encode()
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return history.EventList{}, err
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return history.EventList{}, fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, explainMaxBody+1))
	if err != nil {
		return history.EventList{}, fmt.Errorf("GET %s: %w", u, err)
	}
	if len(body) > explainMaxBody {
		return history.EventList{}, fmt.Errorf("GET %s: response larger than %d bytes", u, explainMaxBody)
	}
	if resp.StatusCode != http.StatusOK {
		return history.EventList{}, newServerError(resp.StatusCode, resp.Status, body)
	}
	var list history.EventList
	if err := json.Unmarshal(body, &list); err != nil {
		return history.EventList{}, fmt.Errorf("GET %s: malformed response: %w", u, err)
	}
	if list.TaskID != uuid.Nil && list.TaskID != id {
		return history.EventList{}, errors.New("GET " + u.String() + ": the server answered for another task")
	}
	return list, nil
}
