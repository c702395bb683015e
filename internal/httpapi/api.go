// Package httpapi is the daemon's HTTP API under /v1 (tasks, owners, queues, the
// audit trail of a task, health and metrics): JSON in and out, every input validated with an error naming the field, nothing
// half-applied. Writes go to the scheduler; reads come from the cron_tasks
// view, once it has folded the log up to the position of the write they
// follow (read-your-writes, without polling).
//
// While the view is rebuilding (crontasks.Keeper), queries of it answer 503
// with the reason and Retry-After; writes still answer their task's row,
// folded from the task's own events; /healthz answers 200 with status
// "degraded" (see docs/projections.md). While the event store refuses
// appends (events.ErrUnwritable: its disk is full or read-only, a write
// failed, its Postgres or EventStoreDB server cannot be reached), /healthz
// answers 503 and writes 503 or 507, naming the condition (storefault.go,
// health.go: one rule for every store, docs/operations.md). Before the API can serve — the daemon still
// starting — Starting answers every request at once with 503 (starting.go).
//
// Concurrency: the handler is safe for concurrent requests.
package httpapi

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/ui"
	"github.com/cronactor/cronactor/projections/audit"
	"github.com/cronactor/cronactor/projections/crontasks"
	"go.opentelemetry.io/otel/trace"
)

// Config wires the API to the parts it serves.
type Config struct {
	Scheduler *scheduler.Scheduler
	View      *crontasks.View
	// Keeper, when set, is where the view comes from (View is then
	// ignored): it may be rebuilding, and the API says so.
	Keeper *crontasks.Keeper
	// ViewConfig opens as-of views (time travel) on the same store when
	// View is nil; otherwise View.AsOf serves them from its snapshots.
	ViewConfig crontasks.Config
	Store      events.Store
	// Token, if set, is required as "Authorization: Bearer <token>" on /v1.
	Token   string
	Logger  *slog.Logger
	Metrics http.Handler
	// ReadTimeout bounds waiting for the view to catch up. Default 10s.
	ReadTimeout time.Duration
	// Stream tunes GET /v1/events/stream (stream.go).
	Stream StreamConfig
	// BodyTimeout bounds reading a request's body, so a client that
	// announces a body and sends it slowly (or never) cannot hold a
	// connection and a goroutine. Default 30s.
	BodyTimeout time.Duration
	// TracerProvider, if set, makes every request a span (trace.go). Nil: no
	// tracing.
	TracerProvider trace.TracerProvider
	// MaxAsOf bounds the requests with ?as_of= served at once: each opens
	// a view of the past and folds the log into it. Past it, a request gets
	// 429 with an error naming the bound (caps.go). Default
	// DefaultMaxAsOf; negative: no bound.
	MaxAsOf int
	// AuditMarks keeps the marks of the task streams the history and
	// explain endpoints read, so that any page of a long stream folds from
	// a mark near it and is exact (projections/audit). Default: a new
	// audit.NewMarks(0, 0) of this API's own.
	AuditMarks *audit.Marks
	// AuditMaxFold bounds the events a history or explain request folds
	// before what it shows when no mark is nearer: past it the request
	// folds the history.Lookback events before what it shows instead and
	// answers "exact": false. The bound keeps a first request deep in a
	// stream of millions of events from folding it all (tens of seconds).
	// Default DefaultAuditMaxFold; negative: no bound (every answer exact).
	AuditMaxFold int
}

// DefaultAuditMaxFold is Config.AuditMaxFold's default.
const DefaultAuditMaxFold = audit.DefaultMaxFold

// maxBody bounds a request body (a 64 KiB payload plus the rest).
const maxBody = 256 << 10

// New returns the API's http.Handler.
func New(cfg Config) http.Handler {
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.BodyTimeout == 0 {
		cfg.BodyTimeout = 30 * time.Second
	}
	if cfg.AuditMarks == nil {
		cfg.AuditMarks = audit.NewMarks(0, 0)
	}
	switch {
	case cfg.AuditMaxFold == 0:
		cfg.AuditMaxFold = DefaultAuditMaxFold
	case cfg.AuditMaxFold < 0:
		cfg.AuditMaxFold = 0 // audit.Reader: no bound
	}
	a := &api{cfg: cfg, streams: newLimiter(cfg.Stream.MaxSubscribers, DefaultMaxSubscribers),
		asOfs: newLimiter(cfg.MaxAsOf, DefaultMaxAsOf), audit: &audit.Reader{Store: cfg.Store, Marks: cfg.AuditMarks, MaxFold: cfg.AuditMaxFold}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/tasks", a.create)
	mux.HandleFunc("GET /v1/tasks", a.list)
	mux.HandleFunc("GET /v1/tasks/{id}", a.get)
	mux.HandleFunc("PATCH /v1/tasks/{id}", a.update)
	mux.HandleFunc("POST /v1/tasks/{id}/pause", a.pause)
	mux.HandleFunc("POST /v1/tasks/{id}/resume", a.resume)
	mux.HandleFunc("POST /v1/tasks/{id}/trigger", a.trigger)
	mux.HandleFunc("POST /v1/tasks/{id}/backfill", a.backfill)
	mux.HandleFunc("DELETE /v1/tasks/{id}", a.delete)
	mux.HandleFunc("GET /v1/tasks/{id}/events", a.events)
	mux.HandleFunc("DELETE /v1/owners/", a.deleteOwner)
	mux.HandleFunc("GET /v1/events/stream", a.stream)
	mux.HandleFunc("GET /v1/tasks/{id}/history", a.history)
	mux.HandleFunc("GET /v1/tasks/{id}/explain", a.explain)
	mux.Handle("GET /ui/", ui.Handler())
	mux.Handle("GET /{$}", http.RedirectHandler("/ui/", http.StatusFound))
	mux.HandleFunc("GET /v1/schedule/preview", a.preview)
	mux.HandleFunc("GET /v1/tasks/{id}/upcoming", a.upcoming)
	mux.HandleFunc("GET /v1/queues", a.queues)
	mux.HandleFunc("GET /healthz", a.health)
	if cfg.Metrics != nil {
		mux.Handle("GET /metrics", cfg.Metrics)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeErr(w, http.StatusNotFound, "path", fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path))
	})
	h := a.auth(a.readBody(mux))
	if cfg.TracerProvider != nil {
		return traced(cfg.TracerProvider, mux, h)
	}
	return h
}

type api struct {
	cfg Config
	// streams and asOfs count the requests of each capped kind in flight
	// (caps.go).
	streams, asOfs *limiter
	// audit reads the history and explain pages (audit.go).
	audit *audit.Reader
}

func (a *api) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.cfg.Token != "" && strings.HasPrefix(r.URL.Path, "/v1") {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(a.cfg.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="cronactor"`)
				writeErr(w, http.StatusUnauthorized, "authorization", "a valid bearer token is required")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// readBody reads a request's body (at most maxBody+1 bytes: decode refuses
// more) before the handler runs, under a read deadline of BodyTimeout, and
// clears the deadline once it has it: a deadline left on the connection
// would end the request's context while the handler works. A body that does
// not arrive in time is answered 408.
func (a *api) readBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		deadlined := rc.SetReadDeadline(time.Now().Add(a.cfg.BodyTimeout)) == nil
		b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if deadlined {
			_ = rc.SetReadDeadline(time.Time{})
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				w.Header().Set("Connection", "close")
				writeErr(w, http.StatusRequestTimeout, "body", fmt.Sprintf("the request body did not arrive within %s", a.cfg.BodyTimeout))
				return
			}
			writeErr(w, http.StatusBadRequest, "body", "the request body could not be read")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		next.ServeHTTP(w, r)
	})
}
