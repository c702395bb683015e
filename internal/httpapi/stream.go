package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// StreamConfig tunes GET /v1/events/stream. The zero value is ready to use.
type StreamConfig struct {
	// Heartbeat is how often an idle stream sends a comment line, so that
	// proxies and clients see the connection alive. Default 15s.
	Heartbeat time.Duration
	// Buffer is how many events may wait for one client. Default 1024.
	Buffer int
	// MaxStall is how long a client's subscription waits for room in a full
	// buffer before the client counts as too slow and is disconnected (it
	// resumes with Last-Event-ID). Each client reads the log through its own
	// subscription, so a slow one holds back neither the store, the
	// scheduler nor other clients. Default 10s.
	MaxStall time.Duration
	// WriteTimeout bounds one write to a client. Default 30s.
	WriteTimeout time.Duration
	// Shutdown, when closed, ends every open stream with a final comment.
	// The daemon closes it from http.Server.RegisterOnShutdown, since
	// Shutdown waits for handlers and a stream would otherwise never end.
	Shutdown <-chan struct{}
	// Disconnected, if set, is called with the reason each stream ended:
	// one of the Stream* reasons. Tests wait on it; the daemon may count.
	Disconnected func(reason string)
	// MaxSubscribers bounds the streams open at once: each holds a store
	// subscription, a goroutine and a buffer of up to Buffer events. Past
	// it, a request gets 429 with an error naming the bound (caps.go).
	// Default DefaultMaxSubscribers; negative: no bound.
	MaxSubscribers int
}

// Reasons a stream ends (StreamConfig.Disconnected).
const (
	StreamClientGone = "client_gone"
	StreamSlowClient = "slow_client"
	StreamShutdown   = "shutdown"
	StreamStoreError = "store_error"
	StreamWriteError = "write_error"
)

func (c StreamConfig) withDefaults() StreamConfig {
	if c.Heartbeat <= 0 {
		c.Heartbeat = 15 * time.Second
	}
	if c.Buffer <= 0 {
		c.Buffer = 1024
	}
	if c.MaxStall <= 0 {
		c.MaxStall = 10 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = 30 * time.Second
	}
	return c
}

// StreamEvent is the data of one server-sent event: the same object as an
// item of GET /v1/tasks/{id}/events, plus the task's ID.
type StreamEvent struct {
	TaskID *uuid.UUID `json:"task_id,omitempty"`
	history.EventJSON
}

// errSlowClient ends a subscription whose client's buffer is full.
var errSlowClient = errors.New("httpapi: stream client is too slow")

// stream is GET /v1/events/stream?from=POSITION: the global log as
// server-sent events. Each event's id is its log position; a client
// resumes after the last id it saw with the Last-Event-ID header (which
// wins over from). from=0 starts at the beginning of the log; without
// either, the stream starts at the log's head (new events only).
//
// One subscription per client reads the store at that client's pace into
// a bounded buffer; the handler goroutine is the only writer.
func (a *api) stream(w http.ResponseWriter, r *http.Request) {
	cfg := a.cfg.Stream.withDefaults()
	for k := range r.URL.Query() {
		if k != "from" {
			a.fail(w, &fieldErr{k, "unknown query parameter"})
			return
		}
	}
	from, err := a.streamStart(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	select {
	case <-cfg.Shutdown:
		writeErr(w, http.StatusServiceUnavailable, "", "the server is shutting down")
		return
	default:
	}
	if !a.streams.acquire() {
		a.tooMany(w, a.streams, "")
		return
	}
	// The slot is free before Disconnected hears of the end: one who learns
	// a stream ended may open another at once.
	var released sync.Once
	release := func() { released.Do(a.streams.release) }
	defer release()
	ended := func(reason string) {
		release()
		if cfg.Disconnected != nil {
			cfg.Disconnected(reason)
		}
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	// cut guards the write deadline: once the subscription gives up on a
	// slow client, no write may push the deadline out again.
	var cut struct {
		sync.Mutex
		done bool
	}
	// failed names why a write failed: the subscription gave up on a slow
	// client (and cut the write short), or the connection failed. It asks
	// cut, not the subscription's result: the write fails as soon as the
	// deadline is cut, before the subscription has returned.
	failed := func() string {
		cut.Lock()
		defer cut.Unlock()
		if cut.done {
			return StreamSlowClient
		}
		return StreamWriteError
	}
	write := func(s string) error {
		cut.Lock()
		if cut.done {
			cut.Unlock()
			return errSlowClient
		}
		_ = rc.SetWriteDeadline(time.Now().Add(cfg.WriteTimeout))
		cut.Unlock()
		if _, err := w.Write([]byte(s)); err != nil {
			return err
		}
		return rc.Flush()
	}
	if err := write(fmt.Sprintf("retry: 2000\n: stream after %s\n\n", from)); err != nil {
		ended(StreamWriteError)
		return
	}

	ctx, cancel := context.WithCancel(r.Context())
	buf := make(chan events.Recorded, cfg.Buffer)
	subDone := make(chan error, 1)
	exited := make(chan struct{})
	// The subscription touches the response (its write deadline), so the
	// handler returns only after it has ended.
	defer func() { cancel(); <-exited }()
	go func() {
		defer close(exited)
		subDone <- a.cfg.Store.Subscribe(ctx, from, func(rec events.Recorded) error {
			select {
			case buf <- rec:
				return nil
			default:
			}
			stall := time.NewTimer(cfg.MaxStall)
			defer stall.Stop()
			select {
			case buf <- rec:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			case <-stall.C:
				// Unblock a write stuck on this client, so the handler
				// sees the verdict at once.
				cut.Lock()
				cut.done = true
				_ = rc.SetWriteDeadline(time.Now())
				cut.Unlock()
				return errSlowClient
			}
		})
	}()
	beat := time.NewTicker(cfg.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case rec := <-buf:
			msg, err := sseMessage(rec)
			if err != nil {
				a.log().Error("event stream: cannot encode event", "stream", rec.Stream, "version", rec.Version, "err", err)
				continue
			}
			if err := write(msg); err != nil {
				ended(failed())
				return
			}
		case <-beat.C:
			if err := write(": heartbeat\n\n"); err != nil {
				ended(failed())
				return
			}
		case err := <-subDone:
			if errors.Is(err, errSlowClient) {
				ended(StreamSlowClient)
				return
			}
			if r.Context().Err() != nil {
				ended(StreamClientGone)
				return
			}
			a.log().Error("event stream: subscription ended", "err", err)
			// Hand over what was read before the end, then close.
			for len(buf) > 0 {
				if msg, err := sseMessage(<-buf); err == nil && write(msg) != nil {
					break
				}
			}
			ended(StreamStoreError)
			return
		case <-cfg.Shutdown:
			_ = write(": server shutting down\n\n")
			ended(StreamShutdown)
			return
		case <-r.Context().Done():
			ended(StreamClientGone)
			return
		}
	}
}

// streamStart is the position the stream continues after.
func (a *api) streamStart(r *http.Request) (events.Position, error) {
	if id := strings.TrimSpace(r.Header.Get("Last-Event-ID")); id != "" {
		p, err := events.ParsePosition(id)
		if err != nil {
			return p, &fieldErr{"Last-Event-ID", fmt.Sprintf("must be a log position like \"42\", got %q", id)}
		}
		return p, nil
	}
	if s := r.URL.Query().Get("from"); s != "" {
		p, err := events.ParsePosition(s)
		if err != nil {
			return p, &fieldErr{"from", fmt.Sprintf("must be a log position like \"42\" (0: the beginning), got %q", s)}
		}
		return p, nil
	}
	if h, ok := a.cfg.Store.(events.HeadReader); ok {
		return h.Head(), nil
	}
	return events.Start, nil
}

// sseMessage renders one event: its position as id, its JSON as data.
func sseMessage(rec events.Recorded) (string, error) {
	ej, err := history.ToJSON(rec)
	if err != nil {
		return "", err
	}
	ev := StreamEvent{EventJSON: ej}
	if id, err := events.TaskIDFromStream(rec.Stream); err == nil {
		ev.TaskID = &id
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return "", err
	}
	return "id: " + rec.Position.String() + "\ndata: " + string(b) + "\n\n", nil
}

func (a *api) log() *slog.Logger {
	if a.cfg.Logger != nil {
		return a.cfg.Logger
	}
	return slog.Default()
}
