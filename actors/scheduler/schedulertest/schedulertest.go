// Package schedulertest runs a real scheduler in a test: the scheduler's own
// actors, handlers and rules on a virtual clock (package clock) and an
// in-memory embedded store, so a test creates tasks, moves time and reads
// what was decided, in microseconds of real time per virtual tick and
// without sleeping.
//
//	h := schedulertest.New(t, schedulertest.WithHandler("report", report))
//	task := h.Create(scheduler.TaskSpec{Owner: "team/a", Name: "daily", Kind: "report",
//		Schedule: scheduler.Cron("0 9 * * MON-FRI")})
//	h.Advance(7 * 24 * time.Hour)
//	runs := h.Runs(task.ID) // five runs, one per weekday at 09:00
//
// What it owns: the scheduler it starts (stopped, and its store closed, at
// t.Cleanup), the virtual clock and the store. Time moves only in Advance;
// between two calls of Advance the clock stands still, so every call to
// the scheduler happens at Now.
//
// Concurrency: a Harness is for the test's goroutine (Advance, Create and
// the Require helpers call t.Fatal). Handlers run on goroutines of their own
// as in production; a handler that waits on the clock (clock.Sleep with
// h.Clock(), or its context's deadline) lets time move, anything else it
// waits on holds the clock until it returns (see Advance).
package schedulertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/google/uuid"
)

// DefaultStart is where a Harness's clock starts unless WithStart says
// otherwise.
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// DefaultStall is how long (real time) Advance waits for work in flight
// that makes no progress — a handler blocked on something other than the
// clock — before it fails the test instead of hanging.
const DefaultStall = time.Minute

// Option configures New.
type Option func(*options)

type options struct {
	start    time.Time
	store    events.Store
	cfg      scheduler.Config
	handlers []kindHandler
}

type kindHandler struct {
	kind string
	h    worker.Handler
}

// WithStart starts the virtual clock at t0 (default DefaultStart).
func WithStart(t0 time.Time) Option { return func(o *options) { o.start = t0 } }

// WithHandler registers h for kind (as Scheduler.Register).
func WithHandler(kind string, h worker.Handler) Option {
	return func(o *options) { o.handlers = append(o.handlers, kindHandler{kind, h}) }
}

// WithStore runs the scheduler on store instead of a new in-memory one,
// for a test that starts a second scheduler on what a first one recorded
// (a restart, a new version of a handler). The harness does not close it.
func WithStore(store events.Store) Option { return func(o *options) { o.store = store } }

// WithConfig is the scheduler's configuration. Its Store and Clock are
// ignored: the harness's are used. Everything else is taken as given and
// defaults as in scheduler.Config (Tick 1s: a harness that moves days of
// virtual time goes faster with a longer Tick, e.g. time.Minute for
// minute-granular cron tasks).
func WithConfig(cfg scheduler.Config) Option { return func(o *options) { o.cfg = cfg } }

// T is what New needs of a test: *testing.T, *testing.B and testing.TB
// have it.
type T interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Harness is a started scheduler on a virtual clock and an in-memory store.
type Harness struct {
	t     T
	s     *scheduler.Scheduler
	clk   *clock.Virtual
	store events.Store
	// closeStore closes the store the harness opened (nothing for one
	// WithStore gave).
	closeStore func()
}

// New starts a scheduler for t and stops it at t.Cleanup. It fails t if the
// configuration, a registration or the start fails.
func New(t T, opts ...Option) *Harness {
	t.Helper()
	o := options{start: DefaultStart}
	for _, f := range opts {
		f(&o)
	}
	store, closeStore := o.store, func() {}
	if store == nil {
		mem, err := embedded.OpenMemory()
		if err != nil {
			t.Fatalf("schedulertest: open the in-memory store: %v", err)
		}
		store, closeStore = mem, func() { _ = mem.Close() }
	}
	clk := clock.NewVirtual(o.start)
	clk.StallAfter(DefaultStall)
	cfg := o.cfg
	cfg.Store, cfg.Clock = store, clk
	s, err := scheduler.New(cfg)
	if err != nil {
		closeStore()
		t.Fatalf("schedulertest: %v", err)
	}
	for _, kh := range o.handlers {
		if err := s.Register(kh.kind, kh.h); err != nil {
			closeStore()
			t.Fatalf("schedulertest: register %q: %v", kh.kind, err)
		}
	}
	if err := s.Start(context.Background()); err != nil {
		closeStore()
		t.Fatalf("schedulertest: start: %v", err)
	}
	h := &Harness{t: t, s: s, clk: clk, store: store, closeStore: closeStore}
	t.Cleanup(h.stop)
	return h
}

// stop stops the scheduler without draining — nobody moves the virtual
// clock for running handlers any more, so those still running are
// abandoned as at a crash — and closes the store.
func (h *Harness) stop() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = h.s.Stop(ctx)
	h.closeStore()
}

// Scheduler is the real scheduler the harness runs.
func (h *Harness) Scheduler() *scheduler.Scheduler { return h.s }

// Clock is the harness's virtual clock, for handlers that wait on time
// (clock.Sleep(ctx, h.Clock(), d)).
func (h *Harness) Clock() *clock.Virtual { return h.clk }

// Store is the harness's event store.
func (h *Harness) Store() events.Store { return h.store }

// Now is the virtual time.
func (h *Harness) Now() time.Time { return h.clk.Now() }

// Advance moves virtual time on by d and returns once everything due by
// then has been decided (every tick up to Now()+d, every run those ticks
// enqueued asked to start, every deadline and retry timer fired) and every
// handler that could finish has: time moves from one timer to the next only
// when nothing is in flight, so a handler that does not wait on the clock
// has returned and its outcome is recorded. A handler still waiting on the
// clock past the new time (its context's deadline, clock.Sleep) is left
// waiting. Work that stays in flight without progress for DefaultStall of
// real time fails the test.
func (h *Harness) Advance(d time.Duration) {
	h.t.Helper()
	h.clk.RunUntil(h.clk.Now().Add(d))
	if err := h.clk.Err(); err != nil {
		h.t.Fatalf("schedulertest: Advance(%s): %v", d, err)
	}
}

// AdvanceTo moves virtual time on to t (see Advance); a t not after Now
// only waits for what is in flight.
func (h *Harness) AdvanceTo(t time.Time) {
	h.t.Helper()
	h.Advance(max(t.Sub(h.clk.Now()), 0))
}

// Create creates a task (Scheduler.CreateTask) and fails the test if the
// scheduler refuses it.
func (h *Harness) Create(spec scheduler.TaskSpec) scheduler.Task {
	h.t.Helper()
	task, _, err := h.s.CreateTask(context.Background(), spec)
	if err != nil {
		h.t.Fatalf("schedulertest: create %s/%s: %v", spec.Owner, spec.Name, err)
	}
	return task
}

// Backfill asks task id for a run of each of its slots in [from, to)
// (Scheduler.Backfill, DESIGN §8.4), returns the slots, and fails the test
// if the scheduler refuses. The runs are enqueued as the task has room;
// Advance lets them run.
func (h *Harness) Backfill(id uuid.UUID, from, to time.Time) []time.Time {
	h.t.Helper()
	slots, err := h.s.Backfill(context.Background(), id, from, to)
	if err != nil {
		h.t.Fatalf("schedulertest: backfill %s [%s, %s): %v", id, from.Format(time.RFC3339), to.Format(time.RFC3339), err)
	}
	return slots
}

// Task reads a task (Scheduler.Task) and fails the test if that fails.
func (h *Harness) Task(id uuid.UUID) scheduler.Task {
	h.t.Helper()
	task, err := h.s.Task(context.Background(), id)
	if err != nil {
		h.t.Fatalf("schedulertest: task %s: %v", id, err)
	}
	return task
}

// Run is one run of a task as its events tell it.
type Run struct {
	// Number counts the task's runs from 1; RunID is the run's ID.
	Number int
	RunID  uuid.UUID
	// Attempt is 1 for a slot's first try, n for its (n-1)th retry (R13).
	Attempt int
	// Slot is the slot the run is for (for a retry: its first attempt's
	// slot; for a manual trigger: when it was triggered).
	Slot time.Time
	// Trigger is "manual" for a manually triggered run (R15).
	Trigger string
	// EnqueuedAt is when the run was enqueued; StartedAt when it was
	// granted permission to start, zero if it never was.
	EnqueuedAt time.Time
	StartedAt  time.Time
	// Outcome is "completed", "failed", "forced_end" or "dropped"
	// (worker.OutcomeCompleted, …), or "" while the run is open.
	Outcome string
	// Reason says why a run was dropped or forced to end (events.DropTooSoon,
	// events.ForcedTimebox, …), and for a failure the handler's error.
	Reason string
	// Fatal: the failure was marked not retryable (worker.Permanent).
	Fatal bool
	// EndedAt is when the outcome was recorded; zero while open.
	EndedAt time.Time
}

// Runs lists the runs of a task in run-number order, as recorded in its
// stream (every incarnation of it). It fails the test if the stream cannot
// be read.
func (h *Harness) Runs(taskID uuid.UUID) []Run {
	h.t.Helper()
	recs := h.records(taskID)
	runs, err := fold(recs)
	if err != nil {
		h.t.Fatalf("schedulertest: runs of %s: %v", taskID, err)
	}
	return runs
}

// fold reads a task stream's runs.
func fold(recs []events.Recorded) ([]Run, error) {
	var runs []Run
	at := map[uuid.UUID]int{} // run ID → index in runs
	for _, r := range recs {
		ev, err := events.Decode(r)
		if err != nil {
			return nil, fmt.Errorf("%s@%d: %w", r.Stream, r.Version, err)
		}
		when := r.At.UTC()
		var id uuid.UUID
		end := func(outcome, reason string) {
			if i, ok := at[id]; ok {
				runs[i].Outcome, runs[i].Reason, runs[i].EndedAt = outcome, reason, when
			}
		}
		switch e := ev.(type) {
		case events.RunEnqueued:
			slot := e.Slot
			if slot.IsZero() {
				slot = e.Due
			}
			at[e.RunID] = len(runs)
			runs = append(runs, Run{Number: e.Run, RunID: e.RunID, Attempt: max(e.Attempt, 1), Slot: slot.UTC(),
				Trigger: e.Trigger, EnqueuedAt: when})
		case events.RunStarted:
			if i, ok := at[e.RunID]; ok {
				runs[i].StartedAt = when
			}
		case events.RunCompleted:
			id = e.RunID
			end(worker.OutcomeCompleted, "")
		case events.RunFailed:
			id = e.RunID
			end(worker.OutcomeFailed, e.Error)
			if i, ok := at[id]; ok {
				runs[i].Fatal = e.Fatal
			}
		case events.RunForcedEnd:
			id = e.RunID
			end(worker.OutcomeForcedEnd, e.Reason)
		case events.RunDropped:
			id = e.RunID
			end(worker.OutcomeDropped, e.Reason)
		}
	}
	// Run numbers are given in enqueue order; sorting keeps the promise
	// should a stream ever hold them otherwise.
	for i := 1; i < len(runs); i++ {
		for j := i; j > 0 && runs[j].Number < runs[j-1].Number; j-- {
			runs[j], runs[j-1] = runs[j-1], runs[j]
		}
	}
	return runs, nil
}

// RequireRun is run number n of the task; it fails the test when the task
// has no such run.
func (h *Harness) RequireRun(taskID uuid.UUID, n int) Run {
	h.t.Helper()
	runs := h.Runs(taskID)
	for _, r := range runs {
		if r.Number == n {
			return r
		}
	}
	h.t.Fatalf("schedulertest: task %s has no run %d (it has %d runs)", taskID, n, len(runs))
	return Run{}
}

// Events are the task's events in stream order, decoded (events.RunStarted,
// …). It fails the test if the stream cannot be read.
func (h *Harness) Events(taskID uuid.UUID) []events.Event {
	h.t.Helper()
	recs := h.records(taskID)
	out := make([]events.Event, 0, len(recs))
	for _, r := range recs {
		ev, err := events.Decode(r)
		if err != nil {
			h.t.Fatalf("schedulertest: events of %s: %s@%d: %v", taskID, r.Stream, r.Version, err)
		}
		out = append(out, ev)
	}
	return out
}

// records reads the task's stream; none for a task never created.
func (h *Harness) records(taskID uuid.UUID) []events.Recorded {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs, err := h.store.ReadStream(ctx, events.TaskStream(taskID), 0, 0)
	if errors.Is(err, events.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		h.t.Fatalf("schedulertest: read the stream of %s: %v", taskID, err)
	}
	return recs
}

// Result is what a Script's handler returns for one run.
type Result struct {
	Checkpoint json.RawMessage
	Err        error
}
