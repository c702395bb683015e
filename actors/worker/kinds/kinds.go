// Package kinds holds the handler kinds the daemon ships: noop, http and
// exec, and Disabled for a kind the daemon knows but was not allowed to run.
// Embedders may register them too. The http and exec handlers implement
// worker.PayloadValidator, so a task whose payload they could never run is
// refused when it is created.
//
// Failures are classified for retries (R13): an error that retrying cannot
// mend is marked worker.Permanent — a bad payload, an http answer 4xx
// (but 408 and 429), an exec exit status that sysexits.h calls a usage,
// data or configuration error (see PermanentExit). Anything else (5xx,
// timeouts, connection errors, other exit statuses, signals) is retryable.
//
// Concurrency: every handler here is safe for concurrent runs.
package kinds

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cronactor/cronactor/actors/worker"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/propagation"
)

// Errors of the shipped kinds.
var (
	ErrBadPayload = errors.New("kinds: bad payload")
	ErrHTTPStatus = errors.New("kinds: endpoint answered with an error status")
	ErrExit       = errors.New("kinds: command exited with an error")
)

// Noop does nothing: for trying the scheduler out.
func Noop() worker.Handler {
	return worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) { return nil, nil })
}

// HTTPPayload is the payload of an http task.
type HTTPPayload struct {
	// URL receives a POST of the run as JSON.
	URL string `json:"url"`
	// Body is passed through to the endpoint as "payload".
	Body json.RawMessage `json:"body,omitempty"`
}

// HTTPRequest is what an http task POSTs to its URL.
type HTTPRequest struct {
	TaskID     string          `json:"task_id"`
	RunID      string          `json:"run_id"`
	Run        int             `json:"run"`
	Payload    json.RawMessage `json:"payload"`
	Checkpoint json.RawMessage `json:"checkpoint"`
	Deadline   time.Time       `json:"deadline"`
	// Attempt is 1 for a slot's first try, n for its (n-1)th retry;
	// RetryOf is the failed run it retries (absent on a first try);
	// Trigger is "manual" for a manually triggered run (R13, R15).
	Attempt int    `json:"attempt"`
	RetryOf string `json:"retry_of,omitempty"`
	Trigger string `json:"trigger,omitempty"`
}

// retryOf is a run's RetryOf as text, "" on a first attempt.
func retryOf(r *worker.Run) string {
	if r.RetryOf == uuid.Nil {
		return ""
	}
	return r.RetryOf.String()
}

// PermanentStatus reports whether an http task's answer with this status
// fails its run for good (R13): a 4xx says the request itself is wrong, so
// sending it again cannot help — but 408 (Request Timeout: a timeout, like
// one on our side) and 429 (Too Many Requests: the endpoint asks to come
// back later), which are retryable like 5xx and every other status.
func PermanentStatus(code int) bool {
	return code >= 400 && code <= 499 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests
}

// excerptBytes bounds how much of an error response is recorded.
const excerptBytes = 512

// HTTP POSTs each run to the URL in the task's payload, with the W3C
// traceparent header of the span in its context when tracing is on (the
// handler span, worker.Tracing, under the run's span). A 2xx answer
// completes the run; a JSON body {"checkpoint": …} saves that checkpoint.
// Any other status fails the run with the status and an excerpt of the body,
// for good (worker.Permanent) when PermanentStatus says so; a connection
// error or a timeout of the client fails it retryably. No answer by the
// deadline: the request is cancelled and the run is forced to end; the
// request is cancelled too when the task actor forced the run to end
// first (worker.StopRun), and the error then names the context's cause
// ("worker: forced to end: timebox"). A task's
// payload is checked when it is created or replaced (see CheckHTTPPayload).
// While the request is in flight the run heartbeats (worker.Run.KeepAlive):
// an endpoint cannot heartbeat, so a task's heartbeat_timeout never ends an
// http run that is still waiting for its answer — its timebox does.
func HTTP(client *http.Client) worker.Handler {
	if client == nil {
		client = &http.Client{}
	}
	return worker.WithPayloadCheck(worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		var p HTTPPayload
		if err := json.Unmarshal(r.Payload, &p); err != nil || p.URL == "" {
			return nil, worker.Permanent(fmt.Errorf("%w: an http task needs {\"url\": …} in its payload", ErrBadPayload))
		}
		body, _ := json.Marshal(HTTPRequest{TaskID: r.TaskID.String(), RunID: r.RunID.String(), Run: r.Number,
			Payload: p.Body, Checkpoint: r.Checkpoint, Deadline: r.Deadline.UTC(),
			Attempt: max(r.Attempt, 1), RetryOf: retryOf(r), Trigger: r.Trigger})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(body))
		if err != nil {
			return nil, worker.Permanent(fmt.Errorf("%w: %v", ErrBadPayload, err))
		}
		req.Header.Set("Content-Type", "application/json")
		// The run's span (from the worker) continues at the endpoint.
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
		// The endpoint cannot heartbeat: the run is alive while the
		// request is in flight (R16), the timebox bounds it.
		stop := r.KeepAlive()
		defer stop()
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("kinds: POST %s: %w", p.URL, err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return nil, fmt.Errorf("kinds: read answer of %s: %w", p.URL, err)
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			ex := string(b)
			if len(ex) > excerptBytes {
				ex = ex[:excerptBytes] + "…"
			}
			err := fmt.Errorf("%w: %s: %s", ErrHTTPStatus, resp.Status, strings.TrimSpace(ex))
			if PermanentStatus(resp.StatusCode) {
				return nil, worker.Permanent(err)
			}
			return nil, err
		}
		return checkpointIn(b), nil
	}), CheckHTTPPayload)
}

// checkpointIn returns the "checkpoint" of a JSON object, or nil.
func checkpointIn(b []byte) json.RawMessage {
	var out struct {
		Checkpoint json.RawMessage `json:"checkpoint"`
	}
	if json.Unmarshal(bytes.TrimSpace(b), &out) != nil || string(out.Checkpoint) == "null" {
		return nil
	}
	return out.Checkpoint
}

// ExecPayload is the payload of an exec task.
type ExecPayload struct {
	// Command is the program and its arguments (no shell).
	Command []string `json:"command"`
}

// ExecGrace is how long a command has between SIGTERM at its deadline and
// SIGKILL (on Unix systems; see Exec).
const ExecGrace = 5 * time.Second

// PermanentExit reports whether an exec task's exit status fails its run for
// good (R13): 64–78, the statuses sysexits.h gives to usage, data, input,
// software and configuration errors (EX_USAGE … EX_CONFIG) — but 75,
// EX_TEMPFAIL, which says "try again later". Every other non-zero status is
// retryable, as is a command killed by a signal or stopped at its deadline.
func PermanentExit(code int) bool {
	return code >= 64 && code <= 78 && code != 75
}

// Exec runs the command in the task's payload with the run in its
// environment: CRONACTOR_TASK_ID, CRONACTOR_RUN_ID, CRONACTOR_RUN,
// CRONACTOR_ATTEMPT, CRONACTOR_RETRY_OF and CRONACTOR_TRIGGER (empty on a
// first attempt, on a scheduled run), CRONACTOR_PAYLOAD,
// CRONACTOR_CHECKPOINT, CRONACTOR_DEADLINE (RFC 3339).
// Exit 0 completes the run; if its standard output is a JSON object with
// "checkpoint", that is saved. A non-zero exit fails it, for good
// (worker.Permanent) when PermanentExit says so. A command that cannot be
// started fails the run retryably (it may be being deployed). While the
// command runs the run heartbeats (worker.Run.KeepAlive): a task's
// heartbeat_timeout never ends a command that is still running — its
// timebox does. At the deadline, or when the run is forced to end
// (worker.StopRun), on Unix systems (Linux, macOS, the BSDs) the command's
// process group gets SIGTERM, then SIGKILL after ExecGrace; elsewhere
// (Windows) the command is killed at once. The error names the context's
// cause ("worker: forced to end: timebox"). A task's payload is
// checked when it is created or replaced (see CheckExecPayload).
func Exec() worker.Handler {
	return worker.WithPayloadCheck(worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		var p ExecPayload
		if err := json.Unmarshal(r.Payload, &p); err != nil || len(p.Command) == 0 {
			return nil, worker.Permanent(fmt.Errorf("%w: an exec task needs {\"command\": [\"prog\", …]} in its payload", ErrBadPayload))
		}
		cmd := exec.Command(p.Command[0], p.Command[1:]...)
		cmd.Env = append(os.Environ(),
			"CRONACTOR_TASK_ID="+r.TaskID.String(), "CRONACTOR_RUN_ID="+r.RunID.String(),
			fmt.Sprintf("CRONACTOR_RUN=%d", r.Number), fmt.Sprintf("CRONACTOR_ATTEMPT=%d", max(r.Attempt, 1)),
			"CRONACTOR_RETRY_OF="+retryOf(r), "CRONACTOR_TRIGGER="+r.Trigger, "CRONACTOR_PAYLOAD="+string(r.Payload),
			"CRONACTOR_CHECKPOINT="+string(r.Checkpoint), "CRONACTOR_DEADLINE="+r.Deadline.UTC().Format(time.RFC3339Nano))
		startsOwnGroup(cmd)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &limitedWriter{w: &stderr, n: excerptBytes}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("kinds: start %s: %w", p.Command[0], err)
		}
		// The command cannot heartbeat: the run is alive while it runs
		// (R16), the timebox bounds it.
		stop := r.KeepAlive()
		defer stop()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				err = fmt.Errorf("%w: %s: %v: %s", ErrExit, p.Command[0], err, strings.TrimSpace(stderr.String()))
				if cmd.ProcessState != nil && PermanentExit(cmd.ProcessState.ExitCode()) {
					return nil, worker.Permanent(err)
				}
				return nil, err
			}
			return checkpointIn(stdout.Bytes()), nil
		case <-ctx.Done():
			_ = terminate(cmd.Process)
			select {
			case <-done:
			case <-time.After(ExecGrace):
				_ = kill(cmd.Process)
				<-done
			}
			// At its deadline, or forced to end (worker.StopRun): the
			// context's cause says which.
			return nil, fmt.Errorf("kinds: %s stopped: %w", p.Command[0], context.Cause(ctx))
		}
	}), CheckExecPayload)
}

type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}
