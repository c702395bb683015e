package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
)

// Loads, like appends (flight.go), never run on the dispatcher's
// goroutines: an actor that needs its task's state — one started without
// it, or one whose append met a version conflict — hands the read to a
// goroutine of its own and goes back to the dispatcher, holding every
// message that arrives until the answer comes back as a loaded message.
// A store that hangs keeps one task waiting, for at most StoreTimeout,
// and never a goroutine other actors need.
//
// The clock counts a load from its start until its loaded message is
// handled, as it counts an append: a virtual clock does not move while a
// task's state is being read.

// loaded is the answer to a load, sent by the load's goroutine to the
// actor. It is counted: the clock's Begin is the actor's, at the start.
type loaded struct {
	// f is the flight whose version conflict the read is for (recs and
	// evs are the stream's events after the actor's version); nil for the
	// actor's first load (st and pos are the task's state).
	f    *flight
	st   rules.State
	pos  events.Position
	recs []events.Recorded
	evs  []events.Event
	err  error
	// refresh, when set, makes this the answer to a Refresh's read (recs
	// and evs are the stream's events after the actor's version).
	refresh *refreshing
	// mend makes this the answer to a mending read (mend.go): recs and evs
	// are the stream's events after the actor's version, or st and pos
	// its state when the actor had lost it.
	mend bool
}

// startLoad starts the actor's first load: with Config.Load, or a read of
// the whole stream. Messages are held until it answers (loadedMsg).
func (a *Actor) startLoad() {
	a.loading = true
	c := a.cfg.Archetype.Clock
	c.Begin() // ended when the loaded message is handled (or dead-lettered)
	load, id, store, stream, timeout := a.cfg.Load, a.id, a.cfg.Store, a.stream, a.cfg.StoreTimeout
	self, sys := a.self, a.sys
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		m := &loaded{}
		if load != nil {
			m.st, m.pos, m.err = load(ctx, id)
		} else {
			m.st, m.pos, m.err = readWhole(ctx, store, stream)
		}
		if errors.Is(m.err, events.ErrStreamNotFound) {
			m.st, m.pos, m.err = rules.State{}, events.Position{}, nil // no task (yet)
		}
		sys.Root.Send(self, m)
	}()
}

// readWhole is the state of the task whose stream is stream, folded from
// the whole stream, and the position of its latest event.
func readWhole(ctx context.Context, store events.Store, stream string) (rules.State, events.Position, error) {
	recs, err := store.ReadStream(ctx, stream, 0, 0)
	if err != nil {
		return rules.State{}, events.Position{}, fmt.Errorf("task: load %s: %w", stream, err)
	}
	st, err := rules.Replay(recs)
	if err != nil {
		return rules.State{}, events.Position{}, fmt.Errorf("task: replay %s: %w", stream, err)
	}
	var pos events.Position
	if len(recs) > 0 {
		pos = recs[len(recs)-1].Position
	}
	return st, pos, nil
}

// startReload reads, for flight f whose append met a version conflict,
// the stream's events after the actor's version: the actor's state is the
// exact fold of the stream up to that version, so they are all it lacks.
// f stays in flight (messages are held) until the answer (loadedMsg).
func (a *Actor) startReload(f *flight) {
	a.fl, f.reloading = f, true
	var from uint64
	if a.state.Exists() {
		from = a.state.Version + 1
	}
	c := a.cfg.Archetype.Clock
	c.Begin()
	rctx, cancel := a.storeCtx(f.cctx)
	store, stream, self, sys := a.cfg.Store, a.stream, a.self, a.sys
	go func() {
		defer cancel()
		m := &loaded{f: f}
		m.recs, m.err = store.ReadStream(rctx, stream, from, 0)
		if errors.Is(m.err, events.ErrStreamNotFound) && from == 0 {
			m.recs, m.err = nil, nil // nothing yet: the conflict was another's create, gone since
		}
		if m.err == nil {
			m.evs = make([]events.Event, len(m.recs))
			for i, r := range m.recs {
				if m.evs[i], m.err = events.Decode(r); m.err != nil {
					break
				}
			}
		}
		if m.err != nil {
			m.err = fmt.Errorf("task: reload %s after version %d: %w", stream, from, m.err)
		}
		sys.Root.Send(self, m)
	}()
}

// loadedMsg handles a load's answer; it reports false for one that is not
// this actor's load in flight (it cannot happen: an actor that stops with
// a load in flight never handles its answer).
func (a *Actor) loadedMsg(ctx actor.Context, m *loaded) bool {
	if m.refresh != nil || m.mend {
		if !a.loading {
			return false
		}
		if m.mend {
			a.mended(ctx, m)
		} else {
			a.refreshed(ctx, m)
		}
		return true
	}
	if m.f != nil {
		f := m.f
		if f != a.fl || !f.reloading {
			return false
		}
		a.fl, f.reloading = nil, false
		if m.err != nil {
			// A state of an older version: the next actor loads again, and
			// so does mending (a whole read, mend.go), which this actor
			// stays for when it keeps f's start or outcome (keepRun): the
			// store answered the append but not the read, or the command's
			// own context (a worker's ask timing out) ended the read.
			a.loaded = false
			a.finish(ctx, f, nil, a.keepRun(f, m.err))
			return true
		}
		a.learn(ctx, m.recs, m.evs) // what an append of ours that failed left there, too (mend.go)
		a.unsure = false            // the state is the stream's fold again
		f.attempt++
		a.execute(ctx, f)
		return true
	}
	if !a.loading {
		return false
	}
	a.loading = false
	if m.err != nil {
		a.loadErr = fmt.Errorf("%w %s: %w", ErrLoad, a.id, m.err)
		a.cfg.Archetype.Failed(slog.LevelError, "task load failed", m.err, "task_id", a.id)
		return true
	}
	a.state, a.pos, a.loaded, a.recorded, a.unsure = m.st, m.pos, true, m.st.Version, false
	a.ensureLoaded(ctx)
	return true
}

// record hands the actor's state to the Registry to keep (Recorder).
//
//go:noinline
func (a *Actor) record() {
	a.recorded = a.state.Version
	if r, ok := a.cfg.Registry.(Recorder); ok {
		r.Record(a.id, &a.state, a.pos)
	}
}
