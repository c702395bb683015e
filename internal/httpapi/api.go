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
// failed, its EventStoreDB server cannot be reached), /healthz answers 503
// and writes 503 or 507, naming the condition (storefault.go,
// docs/operations.md). Before the API can serve — the daemon still
// starting — Starting answers every request at once with 503 (starting.go).
//
// Concurrency: the handler is safe for concurrent requests.
package httpapi

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/ui"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
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
	// StoreCheck, when set, asks whether the store's server answers (a
	// store on a server of its own has one: Postgres); /healthz reports
	// what it says, within 2 s. Nil: the store is in process, nothing to
	// check.
	StoreCheck func(context.Context) error
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
}

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
	a := &api{cfg: cfg, streams: newLimiter(cfg.Stream.MaxSubscribers, DefaultMaxSubscribers),
		asOfs: newLimiter(cfg.MaxAsOf, DefaultMaxAsOf)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/tasks", a.create)
	mux.HandleFunc("GET /v1/tasks", a.list)
	mux.HandleFunc("GET /v1/tasks/{id}", a.get)
	mux.HandleFunc("PATCH /v1/tasks/{id}", a.update)
	mux.HandleFunc("POST /v1/tasks/{id}/pause", a.pause)
	mux.HandleFunc("POST /v1/tasks/{id}/resume", a.resume)
	mux.HandleFunc("POST /v1/tasks/{id}/trigger", a.trigger)
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

// apiError is the body of every error answer. A 500 says only "internal
// error" and an ID; the detail is logged with that ID (key error_id), so
// that no internal text (file paths, addresses) reaches a client.
type apiError struct {
	Error struct {
		Field   string `json:"field,omitempty"`
		Message string `json:"message"`
		ID      string `json:"id,omitempty"`
	} `json:"error"`
}

func writeErr(w http.ResponseWriter, status int, field, msg string) {
	var e apiError
	e.Error.Field, e.Error.Message = field, msg
	writeJSON(w, status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// fieldErr is a 400 naming a field.
type fieldErr struct{ field, msg string }

func (e *fieldErr) Error() string { return e.field + ": " + e.msg }

// fail answers err with the right status.
func (a *api) fail(w http.ResponseWriter, err error) {
	var fe *fieldErr
	var se *scheduler.FieldError
	var tl *tooLargeErr
	switch {
	case errors.As(err, &tl):
		writeErr(w, http.StatusRequestEntityTooLarge, "body", tl.msg)
	case errors.As(err, &fe):
		writeErr(w, http.StatusBadRequest, fe.field, fe.msg)
	case errors.As(err, &se):
		field, msg := se.Field, se.Message
		if i, ok := strings.CutPrefix(field, "cron["); ok {
			// The second and later expressions of a list: the field is
			// cron, the message says which expression.
			n, _ := strconv.Atoi(strings.TrimSuffix(i, "]"))
			field, msg = "cron", fmt.Sprintf("expression %d: %s", n+1, msg)
		}
		writeErr(w, http.StatusBadRequest, field, msg)
	case errors.Is(err, scheduler.ErrTaskNotFound), errors.Is(err, crontasks.ErrNotFound):
		writeErr(w, http.StatusNotFound, "id", "no such task")
	case errors.Is(err, rules.ErrCannotTrigger):
		writeErr(w, http.StatusConflict, "id", cannotTrigger(err))
	case errors.Is(err, scheduler.ErrTaskDeleted):
		writeErr(w, http.StatusConflict, "id", "the task is deleted")
	case errors.Is(err, scheduler.ErrVersionMismatch):
		msg := "the task changed since the version in If-Match"
		var ve *scheduler.VersionMismatchError
		if errors.As(err, &ve) {
			msg = fmt.Sprintf("the task is at version %d (ETag %s), not %d; nothing was changed", ve.Actual, etag(ve.Actual), ve.Expected)
		}
		writeErr(w, http.StatusPreconditionFailed, "If-Match", msg)
	case errors.Is(err, crontasks.ErrBadQuery):
		field := "query"
		var qe *crontasks.QueryError
		if errors.As(err, &qe) {
			field = qe.Param
		}
		writeErr(w, http.StatusBadRequest, field, err.Error())
	case errors.Is(err, events.ErrUnwritable):
		a.storeRefused(w, err)
	case errors.Is(err, crontasks.ErrUnavailable):
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		writeErr(w, http.StatusServiceUnavailable, "view", err.Error())
	default:
		id := uuid.NewString()
		a.cfg.Logger.Error("request failed", "error_id", id, "err", err)
		var e apiError
		e.Error.Message, e.Error.ID = "internal error; the server's log has the detail under this id", id
		writeJSON(w, http.StatusInternalServerError, e)
	}
}

func parseDuration(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, &fieldErr{field, fmt.Sprintf("must be a duration like \"90s\" or \"1m\", got %q", s)}
	}
	return d, nil
}

func parseTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, &fieldErr{field, fmt.Sprintf("must be an RFC 3339 time like \"2026-01-02T15:04:05Z\", got %q", s)}
	}
	return t.UTC(), nil
}

// createBody is POST /v1/tasks.
type createBody struct {
	Name      string          `json:"name"`
	Owner     string          `json:"owner"`
	Kind      string          `json:"kind"`
	Payload   json.RawMessage `json:"payload"`
	Interval  string          `json:"interval"`
	Tolerance *string         `json:"tolerance"`
	Timebox   *string         `json:"timebox"`
	Priority  int             `json:"priority"`
	FirstRun  string          `json:"first_run"`
	scheduleBody
	// MaxWaiting bounds the task's waiting runs (R18); absent: the default.
	MaxWaiting *int `json:"max_waiting"`
	policyBody
	// HistoryRetention is how long the task's events are kept (DESIGN
	// §8.3), a Go duration; absent or "0s": the server's default.
	HistoryRetention *string `json:"history_retention"`
}

// historyRetention checks a history_retention the API is given.
func historyRetention(s *string) (*time.Duration, error) {
	if s == nil {
		return nil, nil
	}
	d, err := parseDuration("history_retention", *s)
	if err != nil {
		return nil, err
	}
	if d < 0 {
		return nil, &fieldErr{"history_retention", fmt.Sprintf("must not be negative, got %s", d)}
	}
	return &d, nil
}

// maxWaiting checks a max_waiting the API is given: the bound itself, never
// 0 (leave it out for the default); the task's rules check the upper limit.
func maxWaiting(n *int) (int, error) {
	if n == nil {
		return 0, nil
	}
	if *n < 1 {
		return 0, &fieldErr{"max_waiting", fmt.Sprintf("must be at least 1 (leave it out for the default, %d), got %d",
			events.DefaultMaxWaiting, *n)}
	}
	return *n, nil
}

func (b createBody) spec() (scheduler.TaskSpec, error) {
	var s scheduler.TaskSpec
	for _, f := range []struct{ name, v string }{{"name", b.Name}, {"owner", b.Owner}, {"kind", b.Kind}} {
		if strings.TrimSpace(f.v) == "" {
			return s, &fieldErr{f.name, "is required"}
		}
	}
	// Exactly one schedule kind.
	kinds := []string{}
	if b.Interval != "" {
		kinds = append(kinds, "interval")
	}
	if b.hasCron() {
		kinds = append(kinds, "cron")
	}
	if b.At != nil {
		kinds = append(kinds, "at")
	}
	switch len(kinds) {
	case 0:
		return s, &fieldErr{"interval", "a schedule is required: give one of interval, cron and at"}
	case 1:
	default:
		return s, &fieldErr{kinds[1], fmt.Sprintf("give exactly one of interval, cron and at, not %s", strings.Join(kinds, " and "))}
	}
	iv, err := parseDuration("interval", b.Interval)
	if err != nil {
		return s, err
	}
	s = scheduler.TaskSpec{Name: b.Name, Owner: b.Owner, Kind: b.Kind, Payload: b.Payload, Interval: iv, Priority: b.Priority}
	if string(b.Payload) == "null" {
		s.Payload = nil
	}
	if b.Tolerance != nil {
		if s.Tolerance, err = parseDuration("tolerance", *b.Tolerance); err != nil {
			return s, err
		}
		s.ToleranceSet = true
	}
	if b.Timebox != nil {
		if s.Timebox, err = parseDuration("timebox", *b.Timebox); err != nil {
			return s, err
		}
		if s.Timebox <= 0 {
			return s, &fieldErr{"timebox", "must be positive"}
		}
	}
	if s.FirstRun, err = parseSpecTime("first_run", b.FirstRun); err != nil {
		return s, err
	}
	if b.FirstRun != "" && iv == 0 {
		return s, &fieldErr{"first_run", "applies to interval tasks; a cron or at task starts at its first slot (use start_at)"}
	}
	sc, err := b.scheduleBody.parse()
	if err != nil {
		return s, err
	}
	s.Cron, s.At = sc.cron, sc.at
	s.Timezone, s.DSTGap, s.DSTOverlap = deref(sc.timezone), deref(sc.dstGap), deref(sc.dstOverlap)
	if sc.exclude != nil && len(*sc.exclude) > 0 {
		s.Exclude = *sc.exclude
	}
	s.StartAt, s.EndAt = derefTime(sc.startAt), derefTime(sc.endAt)
	if sc.maxRuns != nil {
		s.MaxRuns = *sc.maxRuns
	}
	if sc.jitter != nil {
		s.Jitter = *sc.jitter
	}
	if s.MaxWaiting, err = maxWaiting(b.MaxWaiting); err != nil {
		return s, err
	}
	pol, err := b.policyBody.parse(false, false)
	if err != nil {
		return s, err
	}
	pol.spec(&s)
	hr, err := historyRetention(b.HistoryRetention)
	if err != nil {
		return s, err
	}
	if hr != nil {
		s.HistoryRetention = *hr
	}
	return s, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func derefTime(p *time.Time) time.Time {
	if p == nil {
		return time.Time{}
	}
	return *p
}

func (a *api) create(w http.ResponseWriter, r *http.Request) {
	var b createBody
	if err := decode(r, &b); err != nil {
		a.fail(w, err)
		return
	}
	spec, err := b.spec()
	if err != nil {
		a.fail(w, err)
		return
	}
	t, created, err := a.cfg.Scheduler.CreateTask(r.Context(), spec)
	if err != nil {
		a.fail(w, err)
		return
	}
	if !created && !sameSpec(t, spec) {
		writeErr(w, http.StatusConflict, "name", fmt.Sprintf("owner %q already has a task named %q with a different spec (id %s)", t.Owner, t.Name, t.ID))
		return
	}
	row, err := a.row(r.Context(), t.ID, t.Position)
	if err != nil {
		a.fail(w, err)
		return
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK
	}
	setETag(w, row)
	writeJSON(w, status, row)
}

// sameSpec compares an existing task with a create request (R6: same
// owner+name and same spec is the same task).
func sameSpec(t scheduler.Task, s scheduler.TaskSpec) bool {
	if t.Kind != s.Kind || t.Interval != s.Interval || t.Priority != s.Priority {
		return false
	}
	if !slices.Equal(t.Cron, s.Cron) || !slices.EqualFunc(t.At, s.At, time.Time.Equal) || t.MaxRuns != s.MaxRuns ||
		t.Jitter != s.Jitter || !t.StartAt.Equal(s.StartAt) || !t.EndAt.Equal(s.EndAt) ||
		t.Timezone != s.Timezone || t.DSTGap != s.DSTGap || t.DSTOverlap != s.DSTOverlap || !slices.Equal(t.Exclude, s.Exclude) {
		return false
	}
	if (s.ToleranceSet || s.Tolerance != 0) && t.Tolerance != s.Tolerance {
		return false
	}
	if s.Timebox != 0 && t.Timebox != s.Timebox {
		return false
	}
	if s.MaxWaiting != 0 && t.MaxWaiting != s.MaxWaiting {
		return false
	}
	if s.HistoryRetention != 0 && t.HistoryRetention != s.HistoryRetention {
		return false
	}
	if !samePolicy(t, s) {
		return false
	}
	return jsonEqual(t.Payload, s.Payload)
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// row reads a task's row once the view has folded the log up to pos, the
// position of the write it follows (read-your-writes). While the view is
// rebuilding (or turns out damaged meanwhile) the row is folded from the
// task's own events instead: the write is done, and never waits for a
// rebuild.
func (a *api) row(ctx context.Context, id uuid.UUID, pos events.Position) (crontasks.Task, error) {
	err := a.waitFor(ctx, pos)
	if err == nil {
		var v *crontasks.View
		if v, err = a.view(); err == nil {
			var t crontasks.Task
			if t, err = v.Get(ctx, id); err == nil {
				return t, nil
			}
		}
	}
	if !a.viewDown(err) {
		return crontasks.Task{}, err
	}
	recs, err := a.cfg.Store.ReadStream(ctx, events.TaskStream(id), 0, 0)
	if err != nil {
		return crontasks.Task{}, fmt.Errorf("httpapi: read task %s while the view is unavailable: %w", id, err)
	}
	return crontasks.RowOf(recs)
}

// retryAfter is the Retry-After (seconds) of a 503 while the view rebuilds.
const retryAfter = 5

// view is the view to query: the Keeper's (an error wrapping
// crontasks.ErrUnavailable while it rebuilds) or Config.View.
func (a *api) view() (*crontasks.View, error) {
	if a.cfg.Keeper == nil {
		return a.cfg.View, nil
	}
	v, err := a.cfg.Keeper.View()
	if errors.Is(err, crontasks.ErrClosed) {
		return nil, &crontasks.UnavailableError{Status: a.cfg.Keeper.Status()}
	}
	return v, err
}

// viewBroken reports whether err means the view cannot answer: it is
// rebuilding, or the query found it damaged (the Keeper replaces it).
func (a *api) viewBroken(err error) bool {
	return err != nil && a.cfg.Keeper != nil && (errors.Is(err, crontasks.ErrUnavailable) ||
		crontasks.Damaged(err) || errors.Is(err, crontasks.ErrClosed))
}

// viewDown reports whether a write's read-your-writes wait failed because
// of the view, not the write: the view is broken, or not ready (a stalled
// view's WaitFor gives up at once).
func (a *api) viewDown(err error) bool {
	return a.viewBroken(err) || (err != nil && a.cfg.Keeper != nil && a.cfg.Keeper.Status().State != crontasks.StateReady)
}

// viewErr turns an error of a view query into the answer to give: the
// view's unavailability (503) when it is broken, else err.
func (a *api) viewErr(err error) error {
	if a.viewBroken(err) && !errors.Is(err, crontasks.ErrUnavailable) {
		st := a.cfg.Keeper.Status()
		if st.State == crontasks.StateReady || st.State == crontasks.StateStalled {
			st.State, st.Reason = crontasks.StateRebuilding, "the view was found damaged"
		}
		return &crontasks.UnavailableError{Status: st}
	}
	return err
}

// waitFor waits, at most ReadTimeout, for the view to fold the log up to
// pos.
func (a *api) waitFor(ctx context.Context, pos events.Position) error {
	v, err := a.view()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, a.cfg.ReadTimeout)
	defer cancel()
	if err := v.WaitFor(ctx, pos); err != nil {
		return fmt.Errorf("httpapi: the view did not reach position %s: %w", pos, err)
	}
	return nil
}

// health is GET /healthz: 200 while the process serves. status is "ok", or
// "degraded" while the view is not ready or the store's server does not
// answer (the scheduler runs on; a supervisor must not restart the daemon
// for it); view says how far a rebuild is, store whether the server
// answers. While the event store refuses appends (its disk is full or
// read-only, or a write failed) it answers 503 with status "failing" and a
// store object saying why (storeHealth): the daemon records nothing, and a
// load balancer or an operator's alert must see it.
func (a *api) health(w http.ResponseWriter, r *http.Request) {
	code, body := http.StatusOK, map[string]any{"status": "ok"}
	store := a.storeHealth()
	if store != nil && store["writable"] == false {
		code, body["status"] = http.StatusServiceUnavailable, "failing"
	}
	if a.cfg.StoreCheck != nil {
		if store == nil {
			store = map[string]any{}
		}
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		err := a.cfg.StoreCheck(ctx)
		cancel()
		if err != nil {
			// The details (host, user) go to the log: /healthz is public.
			a.cfg.Logger.Warn("health: the store does not answer", "error", err)
			if code == http.StatusOK {
				body["status"] = "degraded"
			}
			store["state"] = "unavailable"
			store["message"] = "the event store's server does not answer: appends fail until it is back (the daemon's log has the error)"
		} else {
			store["state"] = "ok"
		}
	}
	if store != nil {
		body["store"] = store
	}
	if a.cfg.Keeper == nil {
		writeJSON(w, code, body)
		return
	}
	st := a.cfg.Keeper.Status()
	if st.State != crontasks.StateReady && code == http.StatusOK {
		body["status"] = "degraded"
	}
	view := map[string]any{"state": st.State, "position": st.Position.String(), "progress": st.Progress,
		"since": st.Since.UTC().Format(time.RFC3339), "rebuilds": st.Rebuilds}
	if !st.Head.IsZero() {
		view["head"] = st.Head.String()
	}
	if st.State != crontasks.StateReady {
		view["message"] = st.Message()
	}
	if st.MovedAside != "" {
		// Its name next to the view, not the path: /healthz is public.
		view["moved_aside"] = filepath.Base(st.MovedAside)
	}
	body["view"] = view
	writeJSON(w, code, body)
}

func pathID(r *http.Request) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		return id, &fieldErr{"id", fmt.Sprintf("must be a task UUID, got %q", r.PathValue("id"))}
	}
	return id, nil
}

func (a *api) get(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	live, err := a.view()
	if err != nil {
		a.fail(w, err)
		return
	}
	if asOf := r.URL.Query().Get("as_of"); asOf != "" {
		if !a.asOfs.acquire() {
			a.tooMany(w, a.asOfs, "as_of")
			return
		}
		defer a.asOfs.release()
		v, err := a.asOf(r.Context(), live, asOf)
		if err != nil {
			a.fail(w, err)
			return
		}
		defer v.Close()
		t, err := v.Get(r.Context(), id)
		if err != nil {
			a.fail(w, err)
			return
		}
		setETag(w, t)
		writeJSON(w, http.StatusOK, t)
		return
	}
	t, err := live.Get(r.Context(), id)
	if err != nil {
		a.fail(w, a.viewErr(err))
		return
	}
	setETag(w, t)
	writeJSON(w, http.StatusOK, t)
}

// asOf opens the view as of the point s names: from the live view's
// nearest snapshot before it, or folded from the log when there is no live
// view.
func (a *api) asOf(ctx context.Context, live *crontasks.View, s string) (*crontasks.View, error) {
	p, err := crontasks.ParsePoint(s)
	if err != nil {
		return nil, &fieldErr{"as_of", err.Error()}
	}
	if live != nil {
		v, err := live.AsOf(ctx, p)
		return v, a.viewErr(err)
	}
	return crontasks.AsOf(ctx, a.cfg.ViewConfig, p)
}

func (a *api) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k := range q {
		switch k {
		case "owner", "status", "due_before", "limit", "cursor", "as_of":
		default:
			a.fail(w, &fieldErr{k, "unknown query parameter"})
			return
		}
	}
	query := crontasks.Query{Owner: q.Get("owner"), Status: q.Get("status"), Cursor: q.Get("cursor")}
	var err error
	if query.DueBefore, err = parseTime("due_before", q.Get("due_before")); err != nil {
		a.fail(w, err)
		return
	}
	if l := q.Get("limit"); l != "" {
		if query.Limit, err = strconv.Atoi(l); err != nil || query.Limit < 1 || query.Limit > crontasks.MaxLimit {
			a.fail(w, &fieldErr{"limit", fmt.Sprintf("must be a number from 1 to %d", crontasks.MaxLimit)})
			return
		}
	}
	if err := query.Validate(); err != nil {
		a.fail(w, err)
		return
	}
	v, err := a.view()
	if err != nil {
		a.fail(w, err)
		return
	}
	if asOf := q.Get("as_of"); asOf != "" {
		if !a.asOfs.acquire() {
			a.tooMany(w, a.asOfs, "as_of")
			return
		}
		defer a.asOfs.release()
		if v, err = a.asOf(r.Context(), v, asOf); err != nil {
			a.fail(w, err)
			return
		}
		defer v.Close()
	}
	page, err := v.Query(r.Context(), query)
	if err != nil {
		a.fail(w, a.viewErr(err))
		return
	}
	if page.Tasks == nil {
		page.Tasks = []crontasks.Task{}
	}
	writeJSON(w, http.StatusOK, page)
}

// updateBody is PATCH /v1/tasks/{id}: every field optional.
type updateBody struct {
	Payload   json.RawMessage `json:"payload"`
	Interval  *string         `json:"interval"`
	Tolerance *string         `json:"tolerance"`
	Timebox   *string         `json:"timebox"`
	Priority  *int            `json:"priority"`
	NextRun   *string         `json:"next_run"`
	scheduleBody
	// MaxWaiting replaces the bound on waiting runs (R18).
	MaxWaiting *int `json:"max_waiting"`
	policyBody
	// HistoryRetention replaces the task's history retention; "0s"
	// restores the server's default.
	HistoryRetention *string `json:"history_retention"`
}

func (a *api) update(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	opts, err := ifMatch(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	var b updateBody
	raw, err := decodeBody(r, &b)
	if err != nil {
		a.fail(w, err)
		return
	}
	// Only the fields the body names go to the task's actor, which applies
	// them to its current state: two PATCHes of different fields both
	// survive.
	u := scheduler.TaskUpdate{Payload: b.Payload, Priority: b.Priority}
	if b.Interval != nil {
		if u.Interval, err = parseDuration("interval", *b.Interval); err != nil {
			a.fail(w, err)
			return
		}
		if u.Interval <= 0 {
			a.fail(w, &fieldErr{"interval", "must be positive"})
			return
		}
	}
	if b.Tolerance != nil {
		if u.Tolerance, err = parseDuration("tolerance", *b.Tolerance); err != nil {
			a.fail(w, err)
			return
		}
		u.ToleranceSet = true
	}
	if b.Timebox != nil {
		if u.Timebox, err = parseDuration("timebox", *b.Timebox); err != nil {
			a.fail(w, err)
			return
		}
		if u.Timebox <= 0 {
			a.fail(w, &fieldErr{"timebox", "must be positive"})
			return
		}
	}
	if b.NextRun != nil {
		if u.NextRun, err = parseSpecTime("next_run", *b.NextRun); err != nil {
			a.fail(w, err)
			return
		}
	}
	sc, err := b.scheduleBody.parse()
	if err != nil {
		a.fail(w, err)
		return
	}
	if n := btoi(b.Interval != nil) + btoi(b.hasCron()) + btoi(b.At != nil); n > 1 {
		a.fail(w, &fieldErr{"schedule", "give at most one of interval, cron and at"})
		return
	}
	u.Cron, u.At, u.Timezone, u.DSTGap, u.DSTOverlap, u.Exclude = sc.cron, sc.at, sc.timezone, sc.dstGap, sc.dstOverlap, sc.exclude
	u.StartAt, u.EndAt, u.MaxRuns, u.Jitter = sc.startAt, sc.endAt, sc.maxRuns, sc.jitter
	if b.MaxWaiting != nil {
		n, err := maxWaiting(b.MaxWaiting)
		if err != nil {
			a.fail(w, err)
			return
		}
		u.MaxWaiting = &n
	}
	pol, err := b.policyBody.parse(nullField(raw, "retry"), nullField(raw, "pause_after_failures"))
	if err != nil {
		a.fail(w, err)
		return
	}
	pol.update(&u)
	if u.HistoryRetention, err = historyRetention(b.HistoryRetention); err != nil {
		a.fail(w, err)
		return
	}
	t, err := a.cfg.Scheduler.UpdateTask(r.Context(), id, u, opts...)
	a.answer(w, r, t, err)
}

// etag is the entity tag of a task at a version: the task stream's version,
// quoted.
func etag(version uint64) string { return `"` + strconv.FormatUint(version, 10) + `"` }

func setETag(w http.ResponseWriter, t crontasks.Task) { w.Header().Set("ETag", etag(t.Version)) }

// ifMatch reads an If-Match header: one entity tag as ETag gives it (a weak
// one, W/"7", is taken as "7"), or "*" for any version. Absent or "*": no
// condition.
func ifMatch(r *http.Request) ([]scheduler.WriteOption, error) {
	h := strings.TrimSpace(r.Header.Get("If-Match"))
	if h == "" || h == "*" {
		return nil, nil
	}
	tag := strings.TrimPrefix(h, "W/")
	if len(tag) >= 2 && tag[0] == '"' && tag[len(tag)-1] == '"' {
		if v, err := strconv.ParseUint(tag[1:len(tag)-1], 10, 64); err == nil {
			return []scheduler.WriteOption{scheduler.IfVersion(v)}, nil
		}
	}
	return nil, &fieldErr{"If-Match", fmt.Sprintf("must be one entity tag as ETag gives it (e.g. %s) or *, got %q", etag(7), h)}
}

func (a *api) answer(w http.ResponseWriter, r *http.Request, t scheduler.Task, err error) {
	if err != nil {
		a.fail(w, err)
		return
	}
	row, err := a.row(r.Context(), t.ID, t.Position)
	if err != nil {
		a.fail(w, err)
		return
	}
	setETag(w, row)
	writeJSON(w, http.StatusOK, row)
}

func (a *api) pause(w http.ResponseWriter, r *http.Request) {
	a.do(w, r, a.cfg.Scheduler.PauseTask)
}

func (a *api) resume(w http.ResponseWriter, r *http.Request) {
	a.do(w, r, a.cfg.Scheduler.ResumeTask)
}

func (a *api) delete(w http.ResponseWriter, r *http.Request) {
	a.do(w, r, a.cfg.Scheduler.DeleteTask)
}

func (a *api) do(w http.ResponseWriter, r *http.Request, f func(context.Context, uuid.UUID, ...scheduler.WriteOption) (scheduler.Task, error)) {
	id, err := pathID(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	opts, err := ifMatch(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	t, err := f(r.Context(), id, opts...)
	a.answer(w, r, t, err)
}

// deleteOwner is DELETE /v1/owners/{owner}/tasks; the owner may contain
// slashes (escaped or not).
func (a *api) deleteOwner(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimPrefix(r.URL.EscapedPath(), "/v1/owners/")
	p, ok := strings.CutSuffix(p, "/tasks")
	if !ok || p == "" {
		writeErr(w, http.StatusNotFound, "path", "use DELETE /v1/owners/{owner}/tasks")
		return
	}
	owner, err := url.PathUnescape(p)
	if err != nil {
		a.fail(w, &fieldErr{"owner", err.Error()})
		return
	}
	d, err := a.cfg.Scheduler.DeleteOwner(r.Context(), owner)
	if err != nil {
		a.fail(w, err)
		return
	}
	// The answer does not come from the view: a rebuilding one is not
	// waited for.
	if err := a.waitFor(r.Context(), d.Position); err != nil && !a.viewDown(err) {
		a.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"owner": owner, "deleted": d.Deleted})
}

// Pages of GET /v1/tasks/{id}/events.
const (
	// EventsDefaultLimit is the page size when the request names none.
	EventsDefaultLimit = 1000
	// EventsMaxLimit is the largest page a request may ask for.
	EventsMaxLimit = 10000
)

// events is GET /v1/tasks/{id}/events?limit=N&after=V|before=V: the
// task's events with stream version above V (from the first when neither
// is given), or the latest of those below V with before (before=end: the
// latest events of the stream), at most N of them (EventsDefaultLimit, at
// most EventsMaxLimit). When more follow, the answer's "next" is the after
// of the next page; when events come before it, "prev" is the before of
// the page before. A page costs its own events, whatever the stream's
// length.
func (a *api) events(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r)
	if err != nil {
		a.fail(w, err)
		return
	}
	q := r.URL.Query()
	for k := range q {
		if k != "limit" && k != "after" && k != "before" {
			a.fail(w, &fieldErr{k, "unknown query parameter"})
			return
		}
	}
	limit := EventsDefaultLimit
	if l := q.Get("limit"); l != "" {
		if limit, err = strconv.Atoi(l); err != nil || limit < 1 || limit > EventsMaxLimit {
			a.fail(w, &fieldErr{"limit", fmt.Sprintf("must be a number from 1 to %d", EventsMaxLimit)})
			return
		}
	}
	if q.Has("after") && q.Has("before") {
		a.fail(w, &fieldErr{"before", "give after or before, not both"})
		return
	}
	stream := events.TaskStream(id)
	var from uint64
	var recs []events.Recorded
	if s := q.Get("after"); s != "" {
		after, err := strconv.ParseUint(s, 10, 64)
		if err != nil || after == ^uint64(0) {
			a.fail(w, &fieldErr{"after", fmt.Sprintf("must be a stream version (the \"next\" of the previous page), got %q", s)})
			return
		}
		from = after + 1
	}
	more := false
	if q.Has("before") {
		before, err := parseBefore(q.Get("before"))
		if err != nil {
			a.fail(w, err)
			return
		}
		head, err := events.StreamVersion(r.Context(), a.cfg.Store, stream)
		if errors.Is(err, events.ErrStreamNotFound) {
			a.fail(w, scheduler.ErrTaskNotFound)
			return
		}
		if err != nil {
			a.fail(w, err)
			return
		}
		end := min(before, head+1)
		from = end - min(end, uint64(limit))
		if end > from {
			if recs, err = a.cfg.Store.ReadStream(r.Context(), stream, from, int(end-from)); err != nil {
				a.fail(w, err)
				return
			}
		}
		more = len(recs) > 0 && recs[len(recs)-1].Version < head
	} else {
		// One more than the page tells whether another page follows.
		recs, err = a.cfg.Store.ReadStream(r.Context(), stream, from, limit+1)
		if errors.Is(err, events.ErrStreamNotFound) {
			a.fail(w, scheduler.ErrTaskNotFound)
			return
		}
		if err != nil {
			a.fail(w, err)
			return
		}
		if more = len(recs) > limit; more {
			recs = recs[:limit]
		}
	}
	list, err := history.ListJSON(id, recs)
	if err != nil {
		a.fail(w, err)
		return
	}
	if more {
		list.Next = strconv.FormatUint(recs[len(recs)-1].Version, 10)
	}
	if len(recs) > 0 && recs[0].Version > 0 {
		list.Prev = strconv.FormatUint(recs[0].Version, 10)
	}
	writeJSON(w, http.StatusOK, list)
}

// parseBefore reads a before parameter: a stream version, or "end" for
// the latest page.
func parseBefore(s string) (uint64, error) {
	if s == "end" {
		return ^uint64(0), nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, &fieldErr{"before", fmt.Sprintf("must be a stream version (the \"prev\" of the next page) or end, got %q", s)}
	}
	return v, nil
}
