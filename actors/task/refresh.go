package task

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
)

// Refresh tells the actor that its task's stream has an event at Version
// that another writer appended (an embedder's transaction, another node):
// an actor whose state is older reads the stream after its own version,
// applies what it reads, and tells the due-time index when the task is
// next due, as a load would. It answers with a Reply carrying the state
// (no Events) once that is done; an actor that knows the version already
// answers at once. Without Refresh the actor would learn of the events
// only at its next append (a version conflict, then a reload), and the
// index would keep the task's old due time meanwhile.
//
// The read is asynchronous like a load (load.go): messages that arrive
// meanwhile are held. A read that fails leaves the state as it was (still
// the exact fold of the stream up to its version) and is the answer's
// error; the next append conflicts and reloads.
type Refresh struct{ Version uint64 }

// refresh handles a Refresh (see there).
func (a *Actor) refresh(ctx actor.Context, m Refresh, sender *actor.PID) {
	if !a.ensureLoaded(ctx) {
		a.respondLoadErr(ctx, sender, nil)
		return
	}
	if a.state.Exists() && a.state.Version >= m.Version {
		a.relist(nil) // a state loaded, not decided, by this actor may hold another's create
		a.respond(ctx, sender, nil, nil, nil)
		return
	}
	var from uint64
	if a.state.Exists() {
		from = a.state.Version + 1
	}
	a.loading = true
	c := a.cfg.Archetype.Clock
	c.Begin() // ended when the loaded message is handled (or dead-lettered)
	store, stream, timeout, self, sys := a.cfg.Store, a.stream, a.cfg.StoreTimeout, a.self, a.sys
	go func() {
		rctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		m := &loaded{refresh: &refreshing{sender: sender}}
		m.recs, m.err = store.ReadStream(rctx, stream, from, 0)
		if m.err == nil {
			m.evs = make([]events.Event, len(m.recs))
			for i, r := range m.recs {
				if m.evs[i], m.err = events.Decode(r); m.err != nil {
					break
				}
			}
		}
		if m.err != nil {
			m.err = fmt.Errorf("task: refresh %s after version %d: %w", stream, from, m.err)
		}
		sys.Root.Send(self, m)
	}()
}

// refreshing is a Refresh's read in flight: who asked.
type refreshing struct{ sender *actor.PID }

// refreshed takes in a Refresh's read: the events after the actor's
// version, applied in order, then the task's place in the due-time index.
func (a *Actor) refreshed(ctx actor.Context, m *loaded) {
	a.loading = false
	if m.err != nil {
		a.cfg.Archetype.Failed(slog.LevelWarn, "task refresh failed", m.err, "task_id", a.id)
		a.respond(ctx, m.refresh.sender, nil, nil, m.err)
		return
	}
	before := a.listing()
	a.learn(ctx, m.recs, m.evs) // mend.go
	a.unsure = false            // the state is the stream's fold again
	a.relist(before)
	if len(m.evs) > 0 && a.state.Exists() {
		for _, e := range rules.Recover(a.state) {
			if t, ok := e.(rules.Track); ok {
				a.do(ctx, []rules.Effect{t})
			}
		}
	}
	a.respond(ctx, m.refresh.sender, nil, nil, nil)
}

// listing is where the task stands in the owners' index (R6): its owner
// and name, nil when it has none (no task, or deleted).
func (a *Actor) listing() *[2]string {
	if !a.state.Exists() || a.state.Status == rules.StatusDeleted {
		return nil
	}
	return &[2]string{a.state.Spec.Owner, a.state.Spec.Name}
}

// relist tells the Registry (Lister) where the task stands in the owners'
// index after a Refresh, before being where it stood then (listing): the
// actor tells it, as it tells the creations and deletions it decides, so
// that the index follows the task in the order of the actor's decisions
// (a delete the actor decides after the Refresh is told after it, never
// undone by the Refresh's answer).
func (a *Actor) relist(before *[2]string) {
	l, ok := a.cfg.Registry.(Lister)
	if !ok {
		return
	}
	now := a.listing()
	if before != nil && (now == nil || *now != *before) {
		l.Listed(a.id, before[0], before[1], false)
	}
	if now != nil {
		l.Listed(a.id, now[0], now[1], true)
	}
}
