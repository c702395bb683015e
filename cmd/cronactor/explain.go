package main

import (
	"context"
	"errors"
	"fmt"
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
	// The events around --at, not the whole stream (projections/audit).
	ex, exact, err := cliAudit(c, id).ExplainExact(ctx, id, at, *window)
	var refused *serverError
	if errors.As(err, &refused) {
		return refused // the server's refusal, in its one line
	}
	if err != nil {
		return fmt.Errorf("explain task %s: %w", id, err)
	}
	if !exact {
		fmt.Fprintln(env.stderr, notExact)
	}
	return ex.Write(env.stdout, history.Absolute())
}
