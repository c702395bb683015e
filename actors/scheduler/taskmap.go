package scheduler

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/task/taskrt"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

// slot is a task in memory: its actor's entry, or the record of the task
// while it rests (see record.go). One of the two is set.
type slot struct {
	e   *entry
	rec string
}

// entry is a task's actor in memory.
type entry struct {
	pid *actor.PID
	// mu orders the messages sent to pid against its leaving: every message
	// is sent while holding it, and Leave queues the actor's last message
	// while holding it (see task.Registry). It guards pid, leaving, left and
	// pinned.
	mu sync.Mutex
	// leaving is set while the actor leaves, until it has stopped or
	// stayed; left, made by the first caller that waits for that, is
	// closed then (most actors leave with nobody waiting: no channel).
	leaving bool
	left    chan struct{}
	// pinned is set once TaskPID has pinned the actor at pid, which the
	// bound then leaves out (see gate).
	pinned bool
	// gate is the queue whose share of Config.MaxActiveTasks the actor
	// takes until it stops: that of the first tick that reached it, or of
	// its task's open runs at Start. Nil: it takes none (no tick reached
	// it yet, or it is pinned).
	gate *gate
	// ticks reached the task while its actor was leaving: registry.Left
	// sends them on (see deliverTick).
	ticks []pendingTick
}

// endLeaving ends the actor's leaving, waking the callers that wait for
// it; e.mu must be held.
func (e *entry) endLeaving() {
	e.leaving = false
	if e.left != nil {
		close(e.left)
		e.left = nil
	}
}

// gone reports whether the actor has stopped: the map no longer holds the
// entry (the task's slot holds its record, or nothing), and a caller
// holding it looks again. e.mu must be held.
func (e *entry) gone() bool { return e.pid == nil }

// spawnTask starts the actor of a task in a new entry, from st (nil: it
// loads the task from the store); s.mu must be held.
func (s *Scheduler) spawnTask(id uuid.UUID, st *task.Initial) *entry {
	return s.spawnActor(id, task.New(s.taskConfig(id), id, st))
}

// taskConfig is the configuration of task id's actor.
func (s *Scheduler) taskConfig(id uuid.UUID) task.Config {
	cfg := task.Config{Store: s.cfg.Store, Archetype: s.arch, Queue: s.queue, Enqueue: s.enqueue, Shard: s.shardOf(id),
		Registry: (*registry)(s), StoreTimeout: s.cfg.StoreTimeout, Host: s.host, Rest: true, Load: s.load,
		HistoryRetention: s.cfg.HistoryRetention, Runtime: s.runtime()}
	if s.snap != nil && s.cfg.RecordEvery > 0 {
		cfg.RecordEvery = s.cfg.RecordEvery
	}
	if s.follow != nil {
		cfg.Store = s.follow.store // notes its appends' IDs (follow.go)
	}
	return cfg
}

// spawnActor starts a task's actor from produce in a new entry; s.mu must
// be held.
func (s *Scheduler) spawnActor(id uuid.UUID, produce actor.Producer) *entry {
	s.actors.Add(1)
	e := &entry{pid: counted.SpawnPrefix(s.cfg.Clock, s.sys.Root, s.runtime().Props(produce), s.prefix)}
	s.tasks[id] = slot{e: e}
	if s.snap != nil {
		s.snap.live[id] = struct{}{}
	}
	return e
}

// runtime is the task actors' runtime, made by the first call; s.mu must
// be held.
func (s *Scheduler) runtime() *taskrt.Runtime {
	if s.rt == nil {
		s.rt = task.NewRuntime(task.NewDispatcher(0), s.cfg.Logger)
	}
	return s.rt
}

// wake starts the actor of a resting task from its record rec; s.mu must
// be held. A record that does not read (it cannot happen: this process
// wrote it) is logged, and the actor loads the task from the store.
func (s *Scheduler) wake(id uuid.UUID, rec string) *entry {
	return s.spawnActor(id, task.NewFrom(s.taskConfig(id), id, func(st *rules.State, pos *events.Position) error {
		err := readRecordInto(rec, st, pos)
		if err != nil {
			s.cfg.Logger.Error("resting task's record unreadable, loading the task", "task_id", id, "err", err)
		}
		return err
	}))
}

// lockActor returns task id's entry with its actor, e.mu held: the actor
// in memory, or one started from the task's record if it rests. A task
// with neither is loaded first, on this goroutine (lookup), and its actor
// started from what was read: one the store does not know is
// ErrTaskNotFound and gets no actor, unless create (the call creates it:
// its actor starts empty). It waits while the actor leaves, no longer than
// ctx lasts.
func (s *Scheduler) lockActor(ctx context.Context, id uuid.UUID, create bool) (*entry, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.mu.Lock()
		if !s.started || s.stopped {
			s.mu.Unlock()
			return nil, ErrNotStarted
		}
		sl := s.tasks[id]
		e := sl.e
		switch {
		case e != nil:
		case sl.rec != "":
			e = s.wake(id, sl.rec)
		default:
			vacated := s.vacated
			s.mu.Unlock()
			st, err := s.lookup(ctx, id)
			if create && errors.Is(err, ErrTaskNotFound) {
				st, err = &task.Initial{}, nil
			}
			if err != nil {
				return nil, err
			}
			s.mu.Lock()
			if !s.started || s.stopped {
				s.mu.Unlock()
				return nil, ErrNotStarted
			}
			if sl := s.tasks[id]; sl.e != nil || sl.rec != "" || s.vacated != vacated {
				s.mu.Unlock()
				continue // the task came into memory, or left it, meanwhile: look again
			}
			e = s.spawnTask(id, st)
		}
		s.mu.Unlock()
		e.mu.Lock()
		if e.gone() {
			e.mu.Unlock()
			continue // stopped meanwhile: look again
		}
		if e.leaving {
			if e.left == nil {
				e.left = make(chan struct{})
			}
			left := e.left
			e.mu.Unlock()
			select {
			case <-left:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return e, nil
	}
}

// deliver hands a due task its tick (dueindex.Shard.Deliver): to its
// actor, woken from its record if it rests, after its leaving if it is
// leaving — without waiting for it, on the shard's goroutine (see
// deliverTick). Once the scheduler stopped, ticks go nowhere.
func (s *Scheduler) deliver(id uuid.UUID, queue string, t dueindex.Tick) {
	g := s.gateOf(queue)
	defer s.delivered(g)
	s.deliverTick(id, g, t)
}

// registry is the Scheduler as the task actors' task.Registry.
type registry Scheduler

var _ task.Pinner = (*registry)(nil)

// Leave implements task.Registry.
func (r *registry) Leave(id uuid.UUID, self *actor.PID, send func()) {
	s := (*Scheduler)(r)
	s.mu.Lock()
	e := s.tasks[id].e
	s.mu.Unlock()
	if e == nil {
		send()
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !samePID(e.pid, self) {
		send()
		return
	}
	if !e.gone() {
		e.leaving = true
	}
	send()
}

// Left implements task.Registry: an actor that stopped leaves the record
// of its resting task in its slot, or takes the slot with it. One stopped
// with an open run (by Stop) leaves no record in the slot — a resting
// task's record is all its next actor starts from — but hands it to the
// last snapshot all the same.
func (r *registry) Left(id uuid.UUID, self *actor.PID, stopped bool, rest *rules.State, pos events.Position) {
	s := (*Scheduler)(r)
	var rec string
	keep := false // the record can stand for the task in its slot
	if stopped && rest != nil {
		rec = recordOf(rest, pos) // before taking the locks
		keep = !rules.Idle(rest) && rules.Rests(rest)
	}
	s.mu.Lock()
	e := s.tasks[id].e
	if e == nil {
		s.mu.Unlock()
		return
	}
	e.mu.Lock()
	if !samePID(e.pid, self) {
		e.mu.Unlock()
		s.mu.Unlock()
		return
	}
	if stopped {
		s.uncount(e)
		s.actors.Add(-1)
		if keep && !s.stopped {
			s.tasks[id] = slot{rec: rec}
		} else {
			delete(s.tasks, id)
			s.vacated++
		}
		if rec != "" {
			s.forgetRetry(id)
		}
		if s.snap != nil {
			delete(s.snap.live, id)
			if rec != "" { // while stopping too: the last sweep is still to come
				s.snap.rested(id, rec)
			}
		}
		e.pid = nil // gone
	}
	s.mu.Unlock()
	e.endLeaving()
	ticks := e.ticks
	e.ticks = nil
	e.mu.Unlock()
	if len(ticks) > 0 {
		s.sendPending(id, ticks) // to the actor that stayed, or the task's next one
	}
}

// samePID reports whether a and b are the same actor; nil is none.
func samePID(a, b *actor.PID) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(b)
}

// indexOwner adds a task to its owner's; s.ownersMu must be held.
// Listed implements task.Lister: the owners' index follows the tasks'
// recorded creations and deletions (rules.Listed), whichever call or
// message decided them, and even when the caller stopped waiting.
func (r *registry) Listed(id uuid.UUID, owner, name string, listed bool) {
	s := (*Scheduler)(r)
	s.ownersMu.Lock()
	defer s.ownersMu.Unlock()
	if listed {
		s.indexOwner(owner, name, id)
		return
	}
	if m := s.owners[owner]; m != nil {
		delete(m, id)
		if len(m) == 0 {
			delete(s.owners, owner)
		}
	}
}

// indexOwner lists task id, named name, under owner; s.ownersMu must be
// held.
func (s *Scheduler) indexOwner(owner, name string, id uuid.UUID) {
	m := s.owners[owner]
	if m == nil {
		m = map[uuid.UUID]string{}
		s.owners[owner] = m
	}
	m[id] = name
}

func (s *Scheduler) shardOf(id uuid.UUID) *actor.PID { return s.shards[s.shardIndex(id)] }

// shardIndex is the shard that keeps task id in its due-time index.
func (s *Scheduler) shardIndex(id uuid.UUID) int {
	return int(binary.BigEndian.Uint32(id[:4]) % uint32(s.cfg.Shards))
}
