// Package kinds holds the handler kinds the daemon ships: noop, http and
// exec, and Disabled for a kind the daemon knows but was not allowed to run.
// Embedders may register them too. The http and exec handlers implement
// worker.PayloadValidator, so a task whose payload they could never run is
// refused when it is created.
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
}

// excerptBytes bounds how much of an error response is recorded.
const excerptBytes = 512

// HTTP POSTs each run to the URL in the task's payload, with the W3C
// traceparent header of the run's span when tracing is on. A 2xx answer
// completes the run; a JSON body {"checkpoint": …} saves that checkpoint.
// Any other status fails the run with the status and an excerpt of the body.
// No answer by the deadline: the request is cancelled and the run is forced
// to end. A task's payload is checked when it is created or replaced (see
// CheckHTTPPayload).
func HTTP(client *http.Client) worker.Handler {
	if client == nil {
		client = &http.Client{}
	}
	return worker.WithPayloadCheck(worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		var p HTTPPayload
		if err := json.Unmarshal(r.Payload, &p); err != nil || p.URL == "" {
			return nil, fmt.Errorf("%w: an http task needs {\"url\": …} in its payload", ErrBadPayload)
		}
		body, _ := json.Marshal(HTTPRequest{TaskID: r.TaskID.String(), RunID: r.RunID.String(), Run: r.Number,
			Payload: p.Body, Checkpoint: r.Checkpoint, Deadline: r.Deadline.UTC()})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadPayload, err)
		}
		req.Header.Set("Content-Type", "application/json")
		// The run's span (from the worker) continues at the endpoint.
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
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
			return nil, fmt.Errorf("%w: %s: %s", ErrHTTPStatus, resp.Status, strings.TrimSpace(ex))
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

// Exec runs the command in the task's payload with the run in its
// environment: CRONACTOR_TASK_ID, CRONACTOR_RUN_ID, CRONACTOR_RUN,
// CRONACTOR_PAYLOAD, CRONACTOR_CHECKPOINT, CRONACTOR_DEADLINE (RFC 3339).
// Exit 0 completes the run; if its standard output is a JSON object with
// "checkpoint", that is saved. A non-zero exit fails it. At the deadline, on
// Unix systems (Linux, macOS, the BSDs) the command's process group gets
// SIGTERM, then SIGKILL after ExecGrace; elsewhere (Windows) the command is
// killed at once. A task's payload is checked when it is created or
// replaced (see CheckExecPayload).
func Exec() worker.Handler {
	return worker.WithPayloadCheck(worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		var p ExecPayload
		if err := json.Unmarshal(r.Payload, &p); err != nil || len(p.Command) == 0 {
			return nil, fmt.Errorf("%w: an exec task needs {\"command\": [\"prog\", …]} in its payload", ErrBadPayload)
		}
		cmd := exec.Command(p.Command[0], p.Command[1:]...)
		cmd.Env = append(os.Environ(),
			"CRONACTOR_TASK_ID="+r.TaskID.String(), "CRONACTOR_RUN_ID="+r.RunID.String(),
			fmt.Sprintf("CRONACTOR_RUN=%d", r.Number), "CRONACTOR_PAYLOAD="+string(r.Payload),
			"CRONACTOR_CHECKPOINT="+string(r.Checkpoint), "CRONACTOR_DEADLINE="+r.Deadline.UTC().Format(time.RFC3339Nano))
		startsOwnGroup(cmd)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &limitedWriter{w: &stderr, n: excerptBytes}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("kinds: start %s: %w", p.Command[0], err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %v: %s", ErrExit, p.Command[0], err, strings.TrimSpace(stderr.String()))
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
			return nil, fmt.Errorf("kinds: %s stopped at its deadline: %w", p.Command[0], ctx.Err())
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
