package simulation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/google/uuid"
)

// ErrScript marks a scenario that turned out impossible while running,
// e.g. a run scripted to start before it was enqueued.
var ErrScript = errors.New("simulation: scenario cannot be followed")

// Options tune a run. The zero value is ready to use.
type Options struct {
	// Logger receives the scheduler's logs. Default: discard.
	Logger *slog.Logger
	// Workers is the size of the worker pool. Default: enough that no run
	// waits for a worker, so pick-ups happen exactly when scripted.
	Workers int
	// Shards is the number of due-time index actors. Default 2.
	Shards int
	// Crashes are extra instants at which the scheduler process is stopped
	// as if killed and started again at once from the same store (restart
	// tests). Each must fall after the start and outside downtimes.
	Crashes []time.Duration
	// Store, when set, is the store the run records into instead of a new
	// in-memory embedded store: it must be empty and have events.HeadReader
	// (the Postgres store's tests run the simulation on it). The caller
	// closes it.
	Store interface {
		events.Store
		events.HeadReader
	}
}

// Result is what a simulation did.
type Result struct {
	// Tasks names the tasks in scenario order; IDs are their task IDs.
	Tasks []string
	IDs   []uuid.UUID
	// Entries is the timeline up to Until, in canonical order.
	Entries []Entry
	// Log is every event recorded, in global-log order.
	Log []events.Recorded
	// Received[i][n] is the checkpoint run n of task i was handed when it
	// started ("" for none).
	Received []map[int]string
	// Live is each task as its actor held it at Until, before the stop.
	Live []scheduler.Task
	// Ticks are the instants the clock ticked.
	Ticks []time.Time
	// Lives are the lives of the scheduler process, one more than the
	// downtimes and crashes.
	Lives []Life
	// Start is the instant of 00:00 (the scenario's start, or Epoch);
	// Absolute says the scenario gave it, so times are shown as RFC 3339
	// instants.
	Start    time.Time
	Absolute bool
}

// Life is one life of the scheduler process: from its start to its stop
// (Until for the last one), and the global position of the last event
// recorded when it stopped.
type Life struct {
	From, To time.Duration
	Head     events.Position
}

// TaskID is the ID of the simulated task with this name.
func TaskID(name string) uuid.UUID { return scheduler.TaskID(Owner, name) }

// Run plays sc on the scheduler's own actors with a virtual clock and an
// in-memory embedded store, and returns what was recorded. It is
// deterministic: the same scenario yields the same Entries. Should work stay
// in flight without progress for two minutes of real time (a bug), it fails
// with clock.ErrStalled rather than hang.
func Run(ctx context.Context, sc *Scenario, opts Options) (*Result, error) {
	var store headStore = opts.Store
	if store == nil {
		mem, err := embedded.OpenMemory()
		if err != nil {
			return nil, fmt.Errorf("simulation: %w", err)
		}
		defer mem.Close()
		store = mem
	}
	s := &sim{sc: sc, opts: opts, store: store, clk: clock.NewVirtual(sc.Origin()), index: map[uuid.UUID]int{}, taken: map[string]bool{}}
	s.clk.StallAfter(stallAfter)
	return s.run(ctx)
}

// stallAfter is how long (real time) a run may have work in flight with no
// progress before it fails with clock.ErrStalled rather than hang: longer
// than any request timeout, so a slow request is not mistaken for a stall.
const stallAfter = 2 * time.Minute

// headStore is a store that knows its head.
type headStore interface {
	events.Store
	events.HeadReader
}

type sim struct {
	sc    *Scenario
	opts  Options
	store headStore
	clk   *clock.Virtual
	index map[uuid.UUID]int // task ID → place in the scenario

	taken map[string]bool // scripted actions already scheduled

	mu       sync.Mutex
	errs     []error
	received []map[int]string
	ticks    []time.Time
}

// segment is one life of the scheduler process, from start to stop.
type segment struct {
	from, to time.Duration
	killed   bool // ends in a crash rather than at Until
}

func (s *sim) segments() []segment {
	cuts := append([]time.Duration(nil), s.opts.Crashes...)
	sort.Slice(cuts, func(i, j int) bool { return cuts[i] < cuts[j] })
	var segs []segment
	start := time.Duration(0)
	di, ci := 0, 0
	for {
		// The next stop: a downtime's start or a crash, whichever first.
		end, resume := s.sc.Until, time.Duration(-1)
		if di < len(s.sc.Downtimes) && s.sc.Downtimes[di].From < end {
			end, resume = s.sc.Downtimes[di].From, s.sc.Downtimes[di].To
		}
		for ci < len(cuts) && cuts[ci] <= start {
			ci++
		}
		if ci < len(cuts) && cuts[ci] < end {
			end, resume = cuts[ci], cuts[ci]
			ci++
		} else if resume >= 0 {
			di++
		}
		if resume < 0 || end >= s.sc.Until {
			return append(segs, segment{from: start, to: s.sc.Until})
		}
		segs = append(segs, segment{from: start, to: end, killed: true})
		start = resume
	}
}

// workers is enough that a scripted pick-up never waits for a worker: a
// worker is held only while a run executes (a drop frees it at once), and
// R3 lets at most timebox / (interval - tolerance) + 1 runs of a task
// execute at once. A handler forced to end by its heartbeat timeout (R16)
// may hold its worker until its deadline, while retries and triggers of
// the task run: each may take one more.
func (s *sim) workers() int {
	if s.opts.Workers > 0 {
		return s.opts.Workers
	}
	n := 8
	for _, t := range s.sc.Tasks {
		n += len(t.TriggerAt)
		if len(t.Backfills) > 0 {
			// A backfill's runs wait at most max_waiting at once.
			n += len(t.Backfills) * max(t.MaxWaiting, 3)
		}
		if t.Retry != nil {
			n += max(t.Retry.MaxAttempts, 0)
		}
		if t.Interval == 0 {
			// A cron or at task's timebox is at most its shortest spacing.
			n += 3
			continue
		}
		n += int(t.Timebox/(t.Interval-t.Tolerance)) + 2
	}
	return min(n, 100000)
}

func (s *sim) run(ctx context.Context) (*Result, error) {
	res := &Result{Start: s.sc.Origin(), Absolute: !s.sc.Start.IsZero()}
	for i, t := range s.sc.Tasks {
		id := TaskID(t.Name)
		s.index[id] = i
		res.Tasks = append(res.Tasks, t.Name)
		res.IDs = append(res.IDs, id)
		s.received = append(s.received, map[int]string{})
	}
	until := s.sc.Origin().Add(s.sc.Until)
	for _, seg := range s.segments() {
		s.clk.RunUntil(s.sc.Origin().Add(seg.from))
		life := newLife(s.clk, s.store)
		sched, err := s.start(ctx, life, seg)
		if err != nil {
			life.kill()
			return nil, err
		}
		s.clk.RunUntil(s.sc.Origin().Add(seg.to))
		if err := s.clk.Err(); err != nil {
			life.kill()
			stopCtx, cancel := context.WithCancel(ctx)
			cancel()
			_ = sched.Stop(stopCtx)
			return nil, fmt.Errorf("simulation: %w", err)
		}
		if !seg.killed {
			for _, id := range res.IDs {
				t, err := sched.Task(ctx, id)
				if errors.Is(err, scheduler.ErrTaskNotFound) {
					t = scheduler.Task{ID: id}
				} else if err != nil {
					life.kill()
					return nil, fmt.Errorf("simulation: live state: %w", err)
				}
				res.Live = append(res.Live, t)
			}
		}
		// The process ends as if killed: nothing it does from now on is
		// recorded or moves the clock. Stop releases its goroutines.
		life.kill()
		res.Lives = append(res.Lives, Life{From: seg.from, To: seg.to, Head: s.store.Head()})
		stopCtx, cancel := context.WithCancel(ctx)
		cancel()
		if err := sched.Stop(stopCtx); err != nil {
			return nil, fmt.Errorf("simulation: stop: %w", err)
		}
	}
	s.mu.Lock()
	errs := s.errs
	s.mu.Unlock()
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	log, err := s.store.ReadAll(ctx, events.Start, 0)
	if err != nil {
		return nil, fmt.Errorf("simulation: read log: %w", err)
	}
	res.Log = log
	streams := make([][]events.Recorded, len(res.IDs))
	for _, r := range log {
		id, err := events.TaskIDFromStream(r.Stream)
		if err != nil {
			continue
		}
		i, ok := s.index[id]
		if !ok || r.At.After(until) {
			continue
		}
		streams[i] = append(streams[i], r)
	}
	for _, st := range streams {
		sort.Slice(st, func(a, b int) bool { return st[a].Version < st[b].Version })
	}
	res.Ticks = s.ticks
	if res.Entries, err = timeline(res.IDs, streams, s.ticks); err != nil {
		return nil, err
	}
	res.Received = s.received
	return res, nil
}

// start builds and starts one life of the scheduler and schedules the
// scenario's actions within it. Actions are set on the clock before the
// scheduler starts, so at an instant they come before its tick.
func (s *sim) start(ctx context.Context, life *life, seg segment) (*scheduler.Scheduler, error) {
	sched, err := scheduler.New(scheduler.Config{
		Store: life.store, Clock: life, Tick: s.sc.Tick, Workers: s.workers(), Shards: max(s.opts.Shards, 2),
		Logger: s.opts.Logger, PickupDelay: s.pickup,
	})
	if err != nil {
		return nil, fmt.Errorf("simulation: %w", err)
	}
	if err := sched.Register(Kind, worker.HandlerFunc(func(ctx context.Context, run *worker.Run) (json.RawMessage, error) {
		return s.handle(ctx, life, run)
	})); err != nil {
		return nil, fmt.Errorf("simulation: %w", err)
	}
	for _, a := range s.actions(seg) {
		a := a
		life.AfterFunc(a.at-(s.clk.Now().Sub(s.sc.Origin())), func() {
			if err := a.do(ctx, sched); err != nil {
				s.fail(fmt.Errorf("%w: %s at %s: %v", ErrScript, a.what, FormatTime(a.at), err))
			}
		})
	}
	if err := sched.Start(ctx); err != nil {
		return nil, fmt.Errorf("simulation: start: %w", err)
	}
	for k := seg.from + s.sc.Tick; k <= seg.to; k += s.sc.Tick {
		s.ticks = append(s.ticks, s.sc.Origin().Add(k))
	}
	return sched, nil
}

func (s *sim) fail(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

type action struct {
	at   time.Duration
	task int
	kind int // order at one instant: create, pause, resume, trigger, backfill, delete
	seq  int // the action's place among the task's actions of its kind
	what string
	do   func(context.Context, *scheduler.Scheduler) error
}

// spec is the scheduler's spec of a scripted task.
func (s *sim) spec(t TaskScript) scheduler.TaskSpec {
	o := s.sc.Origin()
	spec := scheduler.TaskSpec{Name: t.Name, Owner: Owner, Kind: Kind, Interval: t.Interval,
		Tolerance: t.Tolerance, ToleranceSet: true, Timebox: t.Timebox, Cron: t.Cron,
		Timezone: t.Timezone, DSTGap: t.DSTGap, DSTOverlap: t.DSTOverlap, Exclude: t.Exclude, MaxRuns: t.MaxRuns, Jitter: t.Jitter,
		MaxWaiting: t.MaxWaiting, Queue: t.Queue, Retry: t.Retry, MissedRunPolicy: t.MissedRunPolicy,
		MissedAfter: t.MissedAfter, StartDeadline: t.StartDeadline, HeartbeatTimeout: t.HeartbeatTimeout,
		Overlap: t.Overlap, PauseAfterFailures: t.PauseAfterFailures}
	if t.Interval > 0 {
		spec.FirstRun = o.Add(t.FirstRun)
	}
	for _, at := range t.At {
		spec.At = append(spec.At, o.Add(at))
	}
	if t.HasStartAt {
		spec.StartAt = o.Add(t.StartAt)
	}
	if t.HasEndAt {
		spec.EndAt = o.Add(t.EndAt)
	}
	return spec
}

// actions lists the scripted actions that fall in seg, in order.
func (s *sim) actions(seg segment) []action {
	var out []action
	// An action belongs to the first life that holds its instant: one at
	// the instant of a crash or of a downtime's start happens before it.
	in := func(at time.Duration) bool { return at >= seg.from && at <= seg.to }
	for i, t := range s.sc.Tasks {
		t := t
		id := TaskID(t.Name)
		field := fmt.Sprintf("tasks[%d]", i)
		if in(t.CreateAt) {
			out = append(out, action{at: t.CreateAt, task: i, kind: 0, what: field + ".create_at", do: func(ctx context.Context, sc *scheduler.Scheduler) error {
				_, _, err := sc.CreateTask(ctx, s.spec(t))
				return err
			}})
		}
		for _, at := range t.PauseAt {
			if in(at) {
				out = append(out, action{at: at, task: i, kind: 1, what: field + ".pause_at", do: func(ctx context.Context, sc *scheduler.Scheduler) error {
					_, err := sc.PauseTask(ctx, id)
					return err
				}})
			}
		}
		for _, at := range t.ResumeAt {
			if in(at) {
				out = append(out, action{at: at, task: i, kind: 2, what: field + ".resume_at", do: func(ctx context.Context, sc *scheduler.Scheduler) error {
					_, err := sc.ResumeTask(ctx, id)
					return err
				}})
			}
		}
		for k, at := range t.TriggerAt {
			if in(at) {
				out = append(out, action{at: at, task: i, kind: 3, seq: k, what: fmt.Sprintf("%s.trigger_at[%d]", field, k), do: func(ctx context.Context, sc *scheduler.Scheduler) error {
					_, err := sc.Trigger(ctx, id)
					return err
				}})
			}
		}
		for k, b := range t.Backfills {
			if in(b.At) {
				o := s.sc.Origin()
				out = append(out, action{at: b.At, task: i, kind: 4, seq: k, what: fmt.Sprintf("%s.backfill_at[%d]", field, k), do: func(ctx context.Context, sc *scheduler.Scheduler) error {
					_, err := sc.Backfill(ctx, id, o.Add(b.From), o.Add(b.To))
					return err
				}})
			}
		}
		if t.HasDelete && in(t.DeleteAt) {
			out = append(out, action{at: t.DeleteAt, task: i, kind: 5, what: field + ".delete_at", do: func(ctx context.Context, sc *scheduler.Scheduler) error {
				_, err := sc.DeleteTask(ctx, id)
				return err
			}})
		}
	}
	kept := out[:0]
	for _, a := range out {
		key := fmt.Sprintf("%d/%d/%d/%d", a.task, a.kind, a.seq, a.at)
		if !s.taken[key] {
			s.taken[key] = true
			kept = append(kept, a)
		}
	}
	out = kept
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if x.at != y.at {
			return x.at < y.at
		}
		if x.task != y.task {
			return x.task < y.task
		}
		if x.kind != y.kind {
			return x.kind < y.kind
		}
		return x.seq < y.seq
	})
	return out
}

// script is what the scenario says of run n of the task with this ID.
func (s *sim) script(id uuid.UUID, n int) (int, RunScript) {
	i, ok := s.index[id]
	if !ok {
		return -1, RunScript{}
	}
	runs := s.sc.Tasks[i].Runs
	if n < 1 || n > len(runs) {
		return i, RunScript{}
	}
	return i, runs[n-1]
}

// pickup is the queue's scripted delay: a worker takes run n at its
// scripted start, or start_delay after its enqueue, or at once.
func (s *sim) pickup(q worker.QueuedRun) time.Duration {
	i, rs := s.script(q.TaskID, q.Run)
	now := s.clk.Now()
	switch {
	case i < 0:
		return 0
	case rs.HasStart:
		at := s.sc.Origin().Add(rs.Start)
		if at.Before(q.EnqueuedAt) {
			s.fail(fmt.Errorf("%w: line %d: tasks[%d].runs[%d].start: %s is before run %d of %s was enqueued at %s",
				ErrScript, rs.Line, i, q.Run-1, FormatTime(rs.Start), q.Run, s.sc.Tasks[i].Name, FormatTime(q.EnqueuedAt.Sub(s.sc.Origin()))))
		}
		return at.Sub(now)
	default:
		return q.EnqueuedAt.Add(rs.StartDelay).Sub(now)
	}
}

// handle is the scripted handler: it saves its checkpoint, works Duration
// on the virtual clock (or until its context ends at the deadline),
// heartbeating every HeartbeatEvery if the script says so, then fails
// (with a permanent error when Fatal), panics or completes as scripted.
func (s *sim) handle(ctx context.Context, c clock.Clock, run *worker.Run) (json.RawMessage, error) {
	i, rs := s.script(run.TaskID, run.Number)
	if i >= 0 {
		s.mu.Lock()
		s.received[i][run.Number] = string(run.Checkpoint)
		s.mu.Unlock()
	}
	var cp json.RawMessage
	if rs.Checkpoint != "" {
		cp = json.RawMessage(rs.Checkpoint)
		if err := run.SaveCheckpoint(ctx, cp); err != nil {
			return nil, err
		}
	}
	for left := rs.Duration; ; {
		step := left
		if rs.HeartbeatEvery > 0 {
			step = min(step, rs.HeartbeatEvery)
		}
		if err := clock.Sleep(ctx, c, step); err != nil {
			return cp, err
		}
		if left -= step; left <= 0 {
			break
		}
		run.Heartbeat()
	}
	if rs.Panic != "" {
		panic(rs.Panic)
	}
	if rs.Fail != "" {
		if rs.Fatal {
			return cp, worker.Permanent(errors.New(rs.Fail))
		}
		return cp, errors.New(rs.Fail)
	}
	return cp, nil
}
