package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/cronactor/cronactor/actors/worker"
)

// PollArgs is a task's payload as a Go type.
type PollArgs struct {
	Mailbox string `json:"mailbox"`
	Since   int    `json:"since"`
}

// Validate makes Typed refuse, when the task is created, a payload that
// could never run.
func (a PollArgs) Validate() error {
	if a.Mailbox == "" {
		return errors.New("mailbox is required")
	}
	return nil
}

// A typed handler gets the payload decoded. A payload it cannot decode
// fails the run permanently (no retry), naming the field; the same check
// refuses such a task when it is created.
func ExampleTyped() {
	poll := worker.Typed(func(ctx context.Context, r *worker.Run, a PollArgs) (json.RawMessage, error) {
		fmt.Printf("polling %s since %d\n", a.Mailbox, a.Since)
		return nil, nil
	})
	run := func(payload string) {
		_, err := poll.Handle(context.Background(), worker.NewRun(worker.Run{Payload: json.RawMessage(payload)}, nil))
		if err != nil {
			fmt.Println("run failed:", err, "| permanent:", worker.IsPermanent(err))
		}
	}
	run(`{"mailbox":"inbox","since":41}`)
	run(`{"mailbox":"inbox","since":"yesterday"}`)
	fmt.Println("at create:", poll.(worker.PayloadValidator).ValidatePayload(json.RawMessage(`{"since":1}`)))
	// Output:
	// polling inbox since 41
	// run failed: worker: payload.since: a JSON string cannot be read as int | permanent: true
	// at create: rules: payload: mailbox is required
}

// A middleware that logs every run with its outcome (scheduler.Config{
// Middleware: []worker.Middleware{logRuns(logger)}}).
func ExampleMiddleware() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // stable output for the example
			}
			return a
		}}))
	logRuns := func(next worker.Handler) worker.Handler {
		return worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
			cp, err := next.Handle(ctx, r)
			if err != nil {
				logger.Warn("run failed", "task_id", r.TaskID, "kind", r.Kind, "run", r.Number, "attempt", r.Attempt, "err", err)
			} else {
				logger.Info("run completed", "task_id", r.TaskID, "kind", r.Kind, "run", r.Number, "attempt", r.Attempt)
			}
			return cp, err
		})
	}
	h := worker.Chain(worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		if r.Number == 2 {
			return nil, errors.New("mailbox busy")
		}
		return nil, nil
	}), logRuns)
	for n := 1; n <= 2; n++ {
		h.Handle(context.Background(), worker.NewRun(worker.Run{Kind: "poll", Number: n, Attempt: 1}, nil))
	}
	// Output:
	// level=INFO msg="run completed" task_id=00000000-0000-0000-0000-000000000000 kind=poll run=1 attempt=1
	// level=WARN msg="run failed" task_id=00000000-0000-0000-0000-000000000000 kind=poll run=2 attempt=1 err="mailbox busy"
}

// A middleware that turns a handler's panic into a failure of its own
// choosing — here a permanent one, where the worker alone would record a
// retryable failure — with the panic's value in the message.
func ExampleMiddleware_recover() {
	recoverPanics := func(next worker.Handler) worker.Handler {
		return worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (cp json.RawMessage, err error) {
			defer func() {
				if p := recover(); p != nil {
					cp, err = nil, worker.Permanent(fmt.Errorf("handler panicked: %v", p))
				}
			}()
			return next.Handle(ctx, r)
		})
	}
	h := worker.Chain(worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		panic("mailbox index corrupt") // a bug, or a library's panic

	}), recoverPanics)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := h.Handle(ctx, worker.NewRun(worker.Run{}, nil))
	fmt.Println(err, "| permanent:", worker.IsPermanent(err))
	// Output:
	// handler panicked: mailbox index corrupt | permanent: true
}
