package scheduler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

// Start rebuilds every task from the store (R9: waiting runs go back on the
// queue, runs that were running are forced to end once their deadline has
// passed), then starts ticking. Only tasks with open runs get an actor;
// resting ones get a record and their place in the due-time index, and an
// actor when a tick or a call needs them. Tasks that are deleted and have
// nothing open get neither: they stay in the log and the view, and a later
// command about them loads one on demand.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return ErrStarted
	}
	defer s.aroundRecovery()()
	s.follow = newFollower(s) // before recovery: it starts where recovery starts reading
	r, err := s.recover(ctx)
	if err != nil {
		s.releaseSnapshots() // a Start that failed may be tried again, or another
		return err
	}
	if s.follow != nil && s.snap != nil {
		s.snap.head = followHead{s.snap.head, s.follow}
	}
	states := r.states
	c := s.cfg.Clock
	logger := s.cfg.Logger
	if s.cfg.ActorSystem != nil {
		s.sys, s.hosted = s.cfg.ActorSystem, true
	} else {
		s.sys = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
			return slog.New(slog.NewTextHandler(io.Discard, nil))
		}))
	}
	s.deadLetters = counted.WatchPrefix(s.sys, c, s.prefix, hostMessage)
	s.releaseAnswers = task.WatchDeadLetters(s.sys)
	s.host, s.load = s.hostRequest, s.loadTask
	root := s.sys.Root
	s.base, s.abandon = context.WithCancel(context.Background())
	s.stats = &worker.Stats{}
	s.tasks, s.owners = make(map[uuid.UUID]slot, len(states)), map[string]map[uuid.UUID]string{}
	ids := make([]uuid.UUID, 0, len(states))
	index := make([][]dueindex.Entry, s.cfg.Shards)
	for i := range index { // IDs are random: about as many per shard, and a little room
		index[i] = make([]dueindex.Entry, 0, len(states)/s.cfg.Shards+len(states)/s.cfg.Shards/16+16)
	}
	rested := 0
	// The tasks not deleted, indexed by owner after this pass rather than
	// within it, which restarts faster (docs/performance.md, "Figures
	// that were comments").
	type owned struct {
		owner, name string
		id          uuid.UUID
	}
	byOwner := make([]owned, 0, len(states))
	for id, st := range states {
		if rules.Idle(&st.State) {
			continue // deleted, nothing open: no actor until asked
		}
		if st.State.Status != rules.StatusDeleted {
			byOwner = append(byOwner, owned{st.State.Spec.Owner, st.State.Spec.Name, id})
		}
		if !rules.Rests(&st.State) {
			ids = append(ids, id)
			continue
		}
		// Resting: a record and its place in the index, no actor.
		rec, ok := r.records[id]
		if !ok {
			rec = newRecord(st)
		}
		s.tasks[id] = slot{rec: rec}
		if t, ok := recoveredTrack(st.State); ok {
			i := s.shardIndex(id)
			index[i] = append(index[i], dueindex.Entry{TaskID: id, NextRun: t.NextRun, Queue: st.State.Spec.Policy.QueueName()})
		}
		rested++
	}
	s.ownersMu.Lock()
	for _, o := range byOwner {
		s.indexOwner(o.owner, o.name, o.id)
	}
	s.ownersMu.Unlock()
	for i := 0; i < s.cfg.Shards; i++ {
		initial := index[i]
		s.shards = append(s.shards, s.spawn(root, actor.PropsFromProducer(func() actor.Actor {
			return &dueindex.Shard{Archetype: s.arch, Deliver: s.deliver, Room: s.room, Initial: initial}
		})))
	}
	s.pool = worker.NewPool(worker.PoolConfig{
		Archetype: s.arch, Workers: s.cfg.Workers, Queues: s.cfg.Queues, Handlers: s.wrappedHandlers(), PickupDelay: s.cfg.PickupDelay,
		Ask: s.workerAsk, Post: s.workerPost, Tell: s.workerTell, Base: s.base, Stats: s.stats, TracerProvider: s.cfg.TracerProvider,
	})
	s.enqueue = s.pool.Enqueue
	s.queue = s.spawn(root, actor.PropsFromProducer(s.pool.Producer()))
	// Deterministic order: that of the IDs' text, which their bytes sort in
	// without formatting two strings per comparison (docs/performance.md,
	// "Figures that were comments").
	sort.Slice(ids, func(i, j int) bool { return bytes.Compare(ids[i][:], ids[j][:]) < 0 })
	for _, id := range ids {
		// An open run holds its actor as a tick's would: it takes a
		// place in its queue's share of the bound. (s.mu is held: the
		// actor cannot have left yet.)
		e := s.spawnTask(id, states[id])
		e.mu.Lock()
		e.count(s.gateOf(states[id].State.Spec.Policy.QueueName()))
		e.mu.Unlock()
	}
	s.ticker = s.spawn(root, actor.PropsFromProducer(func() actor.Actor {
		return &dueindex.Ticker{Archetype: s.arch, Interval: s.cfg.Tick, Shards: s.shards}
	}))
	if sn := s.snap; sn != nil {
		// The resting tasks whose state is not their snapshot's record
		// are written by the next sweep (all of them after a fold of the
		// whole log); the tasks with an actor are in its list of them.
		if r.changed == nil {
			for id, sl := range s.tasks {
				if sl.rec != "" {
					sn.dirty[id] = sl.rec
				}
			}
		}
		for id := range r.changed {
			switch st := states[id]; {
			case st == nil: // no stream
			case s.tasks[id].rec != "":
				sn.dirty[id] = s.tasks[id].rec
			case rules.Idle(&st.State): // its deletion is the last word
				sn.dirty[id] = newRecord(st)
			}
		}
		go s.runSweeper(sn)
		sn.poke()
	}
	s.started = true
	if s.follow != nil {
		s.follow.start()
	}
	// The message says what the counts are (tasks - actors - resting
	// are deleted with nothing open).
	logger.Info("scheduler started (tasks: every task in the log; actors: those with a run open, given an actor now; "+
		"resting: the others not deleted, kept as a record until due or asked)",
		"tasks", len(states), "actors", len(ids), "resting", rested, "tick", s.cfg.Tick, "workers", s.cfg.Workers,
		"queues", len(s.cfg.Queues))
	if _, ok := s.cfg.Store.(events.Truncater); !ok {
		// Once: the task actors skip retention on such a store in silence.
		level := slog.LevelInfo
		if s.cfg.HistoryRetention > 0 {
			level = slog.LevelWarn
		}
		logger.Log(context.Background(), level, "history retention off: the store cannot remove events (no events.Truncater); every task keeps its whole history",
			"history_retention", s.cfg.HistoryRetention)
	}
	return nil
}

func (s *Scheduler) spawn(root *actor.RootContext, props *actor.Props) *actor.PID {
	pid := counted.SpawnPrefix(s.cfg.Clock, root, props, s.prefix)
	s.infra = append(s.infra, pid)
	return pid
}

// StopStarting is the first step of a graceful stop, for a caller that
// has more to stop (an HTTP server, say) before Stop: ticking stops, no run
// is admitted any more, and it returns once the start of every run
// admitted before has been decided (or ctx ends) — from then on no run
// starts. Tasks still answer calls; running runs go on. Stop calls it.
func (s *Scheduler) StopStarting(ctx context.Context) error {
	s.mu.Lock()
	if !s.started {
		s.mu.Unlock()
		return ErrNotStarted
	}
	first := !s.gateClosed
	s.gateClosed = true
	s.mu.Unlock()
	var tickErr error
	if first {
		if _, err := counted.Request(context.Background(), s.cfg.Clock, s.sys.Root, s.ticker, dueindex.StopTicking{}, s.cfg.RequestTimeout); err != nil {
			tickErr = fmt.Errorf("scheduler: stop ticking: %w", err)
		}
		s.stats.Close() // no run is admitted from now on
	}
	return errors.Join(tickErr, s.stats.WaitStarts(ctx))
}

// Stop shuts the scheduler down gracefully: ticking stops and no further
// run starts, then running runs may finish or reach their deadline until
// ctx ends; runs still going then are abandoned (their outcome is left for
// the next start to record as a forced end). Then the task actors stop,
// each handing over its state, and the last snapshot is cut with none of
// them left: the next start reads the tasks from it and nothing of the
// log (see stopTasks). A stopped Scheduler cannot start again; build a new
// one on the same store. It returns errors.Join of what failed (stopping
// the ticker, task actors that did not stop; hosted in an actor system of
// the caller's, its actors that did not stop within ctx); ctx ending the
// drain is not a failure.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	if !s.started || s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	s.mu.Unlock()
	// What failed is returned, joined; ctx ending the drain is not a
	// failure (the runs left are abandoned, as documented).
	var errs []error
	if err := s.StopStarting(ctx); err != nil && ctx.Err() == nil {
		errs = append(errs, err)
	}
	s.logDrain(ctx)
	if s.stopHook != nil {
		s.stopHook()
	}
	if err := s.stats.Wait(ctx); err != nil {
		s.logCutOff()
		s.abandon()
		_ = s.stats.Wait(context.Background()) // handlers end with their context
	}
	s.abandon()
	errs = append(errs, s.stopTasks(ctx))
	if s.follow != nil {
		s.follow.finish(ctx) // before the last snapshot, whose mark it bounds
	}
	if s.snap != nil {
		s.stopSweeper(ctx)
	}
	s.releaseSnapshots() // (even if snapshots were turned off since)
	s.mu.Lock()
	pids := append([]*actor.PID(nil), s.infra...)
	s.mu.Unlock()
	if !s.hosted {
		for _, pid := range pids {
			s.sys.Root.Stop(pid)
		}
		s.sys.Shutdown() // stops no actor (they are stopped above), only the system's own machinery
		s.cfg.Logger.Info("scheduler stopped")
		return errors.Join(errs...)
	}
	// The host's system lives on: stop exactly our actors (workers stop with
	// the queue, their parent) and return once they are gone, then stop
	// watching its dead letters.
	errs = append(errs, s.awaitStopped(ctx, pids))
	s.sys.EventStream.Unsubscribe(s.deadLetters)
	s.releaseAnswers()
	s.cfg.Logger.Info("scheduler stopped")
	return errors.Join(errs...)
}

// awaitStopped stops the actors at pids and waits for them within ctx.
// Every actor is told to stop before any is waited for, so their futures'
// timeouts (10 s) run at once: an actor busy in a message (a hung store
// call, say) costs one timeout in all, not one per actor after it. It
// returns errors.Join of what did not stop: each future's timeout and,
// when ctx ends first, how many actors were still stopping (they stop on
// their own once they get to it).
func (s *Scheduler) awaitStopped(ctx context.Context, pids []*actor.PID) error {
	futures := make([]*actor.Future, len(pids))
	for i, pid := range pids {
		futures[i] = s.sys.Root.StopFuture(pid)
	}
	var waited atomic.Int64
	done := make(chan error, 1)
	go func() {
		var errs []error
		for i, f := range futures {
			if err := f.Wait(); err != nil {
				errs = append(errs, fmt.Errorf("scheduler: stop actor %s: %w", pids[i].Id, err))
			}
			waited.Add(1)
		}
		done <- errors.Join(errs...)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		select {
		case err := <-done:
			return err
		default:
		}
		return fmt.Errorf("scheduler: stop: %d of %d actors still stopping: %w", int64(len(pids))-waited.Load(), len(pids), ctx.Err())
	}
}

// logDrain says what Stop waits for, when runs are running: how many, and
// until when (ctx's deadline; none: until they end).
func (s *Scheduler) logDrain(ctx context.Context) {
	running := s.stats.Executing()
	if len(running) == 0 {
		return
	}
	attrs := []any{"runs", len(running), "last_deadline", running[len(running)-1].Deadline.UTC()}
	if until, ok := ctx.Deadline(); ok {
		attrs = append(attrs, "until", until.UTC())
	}
	s.cfg.Logger.Info("draining: waiting for running runs to end", attrs...)
}

// logCutOff logs each run still running when Stop gave up waiting: it is
// abandoned, recorded lost (process_lost) at its deadline — by the next
// start, or on it if that comes later — and until then its task starts no
// other run (overlap).
func (s *Scheduler) logCutOff() {
	for _, r := range s.stats.Executing() {
		s.cfg.Logger.Warn("drain timeout: run cut off, recorded lost at its deadline; its task starts no run before",
			"task_id", r.TaskID, "run_id", r.RunID, "run", r.Run, "deadline", r.Deadline.UTC())
	}
}

// stopTasks stops every task actor and returns once they are gone. Each
// hands its state to Left as it stops (task.Actor.handOver) — a task with
// runs waiting or cut off by the stop included — so the last sweep, which
// comes after, finds in the set of tasks with an actor only those whose
// actor could not vouch for its state; every other task's record holds its
// stream up to the head, as a resting task's does (snapshot.go), and the
// next start reads none of it. Ticks and calls reach no actor any more
// (lockActor refuses once stopped), so none starts meanwhile. It waits for
// them whatever ctx says (the sweep needs their hand-over), each for at
// most its future's timeout, all at once (awaitStopped).
func (s *Scheduler) stopTasks(ctx context.Context) error {
	s.mu.Lock()
	s.stopRetries()
	entries := make([]*entry, 0, len(s.tasks))
	for _, sl := range s.tasks {
		if sl.e != nil {
			entries = append(entries, sl.e)
		}
	}
	s.mu.Unlock()
	pids := make([]*actor.PID, 0, len(entries))
	for _, e := range entries {
		e.mu.Lock()
		if e.pid != nil {
			pids = append(pids, e.pid)
		}
		e.endLeaving() // its callers learn that the scheduler stopped
		for range e.ticks {
			s.cfg.Clock.End() // kept ticks go nowhere now
		}
		e.ticks = nil
		e.mu.Unlock()
	}
	return s.awaitStopped(context.WithoutCancel(ctx), pids)
}
