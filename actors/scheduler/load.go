package scheduler

import (
	"context"
	"errors"
	"fmt"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

// The load path (docs/architecture.md, "Loading a task"). A task with
// neither an actor nor a record in memory — deleted with nothing open, or
// whose last load failed — is loaded from the store: its latest snapshot
// record (the sweep's pending one, else the snapshot table's, read by key)
// and the events of its stream after the record's version, which is exact
// whatever the snapshot's mark says, since a record is the fold of its
// stream up to its version. A live actor's record is kept current every
// Config.RecordEvery events (registry.Record), so a load reads at most
// about that many events however long the stream. Loads run on the
// caller's goroutine (a call) or the task actor's own (task.Config.Load),
// at most Config.Loaders at once; never on a shard's or the dispatcher's.

// DefaultRecordEvery is Config.RecordEvery's default: a load reads at most
// about a thousand events after its record (a few milliseconds).
const DefaultRecordEvery = 1000

// DefaultLoaders is Config.Loaders's default.
const DefaultLoaders = 16

// loadTask loads task id from the store (see above): its state and the
// position of its latest event, or an error matching
// events.ErrStreamNotFound when it has no stream. It waits for one of the
// Config.Loaders places, no longer than ctx lasts.
func (s *Scheduler) loadTask(ctx context.Context, id uuid.UUID) (rules.State, events.Position, error) {
	select {
	case s.loaders <- struct{}{}:
	case <-ctx.Done():
		return rules.State{}, events.Position{}, fmt.Errorf("scheduler: load %s: %w", id, ctx.Err())
	}
	defer func() { <-s.loaders }()
	rec, _ := s.latestRecord(ctx, id)
	st, err := readTail(ctx, s.cfg.Store, id, rec)
	if errors.Is(err, errRecord) {
		s.cfg.Logger.Warn("snapshot record unreadable, reading the whole stream", "task_id", id, "err", err)
		st, err = readTail(ctx, s.cfg.Store, id, "")
	}
	if err != nil {
		return rules.State{}, events.Position{}, fmt.Errorf("scheduler: load: %w", err)
	}
	return st.State, st.Position, nil
}

// latestRecord is task id's latest snapshot record: the one the next sweep
// is to write, else the snapshot table's. None without snapshots, or when
// the table cannot be read (the load then reads the whole stream).
func (s *Scheduler) latestRecord(ctx context.Context, id uuid.UUID) (string, bool) {
	sn := s.snap
	if sn == nil {
		return "", false
	}
	s.mu.Lock()
	rec, ok := sn.dirty[id]
	s.mu.Unlock()
	if ok {
		return rec, true
	}
	sr, ok := sn.store.(events.SnapshotReader)
	if !ok {
		return "", false
	}
	v, found, err := sr.ReadSnapshotKey(ctx, id[:])
	if err != nil {
		s.cfg.Logger.Warn("snapshot record unreadable, reading the whole stream", "task_id", id, "err", err)
		return "", false
	}
	return string(v), found
}

// Record implements task.Recorder: a live actor's state becomes its task's
// snapshot record, written by the next sweep.
func (r *registry) Record(id uuid.UUID, st *rules.State, pos events.Position) {
	s := (*Scheduler)(r)
	if s.snap == nil {
		return
	}
	rec := recordOf(st, pos) // before taking the lock
	s.mu.Lock()
	s.snap.dirty[id] = rec
	s.mu.Unlock()
}

// loadRetry is a task whose load failed when a tick reached it: the tick
// comes again at timer (nil once fired); failures counts them in a row.
type loadRetry struct {
	failures int
	timer    clock.Timer
}

// RetryTick implements task.Retrier: the task gets a tick again after a
// backoff (Config.LoadRetry, doubling up to LoadRetryMax), so it stays
// scheduled; its retries are forgotten once an actor of it rests.
func (r *registry) RetryTick(id uuid.UUID, err error) {
	s := (*Scheduler)(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || s.gateClosed {
		return
	}
	if s.retries == nil {
		s.retries = map[uuid.UUID]*loadRetry{}
	}
	rt := s.retries[id]
	if rt == nil {
		rt = &loadRetry{}
		s.retries[id] = rt
	}
	if rt.timer != nil {
		return // a tick is coming already
	}
	wait := s.cfg.LoadRetry << min(rt.failures, 30)
	if wait <= 0 || wait > s.cfg.LoadRetryMax {
		wait = s.cfg.LoadRetryMax
	}
	rt.failures++
	s.cfg.Logger.Warn("tick not decided: the task's load failed; retrying", "task_id", id, "err", err,
		"retry_in", wait, "failures", rt.failures)
	c := s.cfg.Clock
	rt.timer = c.AfterFunc(wait, func() {
		s.mu.Lock()
		rt.timer = nil
		closed := s.gateClosed // ticking has stopped (StopStarting)
		s.mu.Unlock()
		if !closed {
			s.deliverTick(id, nil, dueindex.Tick{At: c.Now()})
		}
	})
}

// forgetRetry forgets task id's retries (an actor of it rested: it
// loaded); s.mu must be held.
func (s *Scheduler) forgetRetry(id uuid.UUID) {
	if len(s.retries) == 0 {
		return
	}
	if rt := s.retries[id]; rt != nil && rt.timer == nil {
		delete(s.retries, id)
	}
}

// stopRetries stops every retry's timer; s.mu must be held.
func (s *Scheduler) stopRetries() {
	for id, rt := range s.retries {
		if rt.timer != nil {
			rt.timer.Stop()
		}
		delete(s.retries, id)
	}
}

// pendingTick is a tick that reached a task while its actor was leaving:
// it goes to the task once the actor has left or stayed (registry.Left),
// counted on the clock meanwhile. g is the gate its delivery counts in
// (nil: none).
type pendingTick struct {
	t dueindex.Tick
	g *gate
}

// deliverTick hands task id its tick t: to its actor, woken from its
// record if it rests, started to load it if it has neither; the actor
// counts in g unless nil. It never waits: a tick for an actor that is
// leaving is kept on its entry and sent on by registry.Left (a leaving
// actor may wait for the store). Once the scheduler stopped, ticks go
// nowhere.
func (s *Scheduler) deliverTick(id uuid.UUID, g *gate, t dueindex.Tick) {
	for {
		s.mu.Lock()
		if !s.started || s.stopped {
			s.mu.Unlock()
			return
		}
		sl := s.tasks[id]
		e := sl.e
		switch {
		case e != nil:
		case sl.rec != "":
			e = s.wake(id, sl.rec)
		default:
			e = s.spawnTask(id, nil) // it loads the task on a goroutine of its own
		}
		s.mu.Unlock()
		e.mu.Lock()
		if e.gone() {
			e.mu.Unlock()
			continue // stopped meanwhile: look again
		}
		if e.leaving {
			s.cfg.Clock.Begin() // counted while it waits, as if in flight
			e.ticks = append(e.ticks, pendingTick{t: t, g: g})
			e.mu.Unlock()
			return
		}
		if g != nil {
			e.count(g)
		}
		counted.Send(s.cfg.Clock, s.sys.Root, e.pid, t)
		e.mu.Unlock()
		return
	}
}

// sendPending sends on the ticks that waited for an actor to leave (see
// deliverTick), then ends their counts.
func (s *Scheduler) sendPending(id uuid.UUID, ticks []pendingTick) {
	for _, p := range ticks {
		s.deliverTick(id, p.g, p.t)
		s.cfg.Clock.End()
	}
}

// lookup loads task id for a call about it when it has neither an actor
// nor a record in memory, on the caller's goroutine: a task the store
// does not know is ErrTaskNotFound, and costs no actor.
func (s *Scheduler) lookup(ctx context.Context, id uuid.UUID) (*task.Initial, error) {
	lctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	st, pos, err := s.loadTask(lctx, id)
	switch {
	case errors.Is(err, events.ErrStreamNotFound):
		return nil, fmt.Errorf("%w: %s", ErrTaskNotFound, id)
	case err != nil:
		return nil, fmt.Errorf("%w %s: %w", task.ErrLoad, id, err)
	}
	return &task.Initial{State: st, Position: pos}, nil
}
