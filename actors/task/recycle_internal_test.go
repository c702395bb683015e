package task

import (
	"errors"
	"math"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/task/taskrt"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// TestRecycleLeavesNothingOfTheTask: an Actor put back for reuse keeps
// only its emptied maps and slices and its leave function; every other
// field — one added later included — is zero, so the next task's actor
// starts from nothing of the last one's.
func TestRecycleLeavesNothingOfTheTask(t *testing.T) {
	rt := NewRuntime(nil, nil)
	a := reuseActor(rt)
	gen := a.Generation()
	id, run := uuid.New(), uuid.New()
	a.cfg, a.id, a.stream, a.idScope = Config{StoreTimeout: time.Second, Rest: true, Runtime: rt}, id, "task-x", "task-x\x00y"
	a.state = rules.State{ID: id, Runs: 3, Open: []rules.Run{{ID: run}}}
	a.pos, a.loaded, a.recovered, a.tracked, a.pinned = events.Position{Commit: 9, Prepare: 9}, true, true, true, true
	a.timers[run] = clock.Real{}.AfterFunc(time.Hour, func() {})
	a.timers[run].Stop()
	a.runners[run] = &actor.PID{Id: "w"}
	a.beats = map[uuid.UUID]time.Time{run: time.Now()}
	a.effs = append(a.effs, rules.Track{})
	a.held = append(a.held, held{msg: Get{}})
	a.heldNext, a.leave, a.leaveNow = 1, leaving, true
	a.self = &actor.PID{Id: "a"}
	a.recycle()

	if a.Generation() != gen+1 {
		t.Fatalf("generation %d after recycle, want %d", a.Generation(), gen+1)
	}
	if len(a.timers) != 0 || len(a.runners) != 0 || len(a.effs) != 0 || len(a.held) != 0 || a.leaveFn == nil {
		t.Fatalf("kept: %d timers, %d runners, %d effects, %d held, leave function %v",
			len(a.timers), len(a.runners), len(a.effs), len(a.held), a.leaveFn != nil)
	}
	if e := a.effs[:cap(a.effs)]; len(e) > 0 && e[0] != nil {
		t.Fatal("the effects' array still holds the last effect")
	}
	if h := a.held[:cap(a.held)]; len(h) > 0 && h[0].msg != nil {
		t.Fatal("the held messages' array still holds the last message")
	}
	kept := map[string]bool{"timers": true, "runners": true, "effs": true, "held": true, "leaveFn": true}
	v := reflect.ValueOf(&a.incarnation).Elem()
	for i := 0; i < v.NumField(); i++ {
		name := v.Type().Field(i).Name
		if !kept[name] && !v.Field(i).IsZero() {
			t.Errorf("field %s not reset by recycle", name)
		}
	}
}

// TestNewFromAllocations: starting the actor of a resting task from its
// record (once per run in a wave) makes three objects besides the reused
// Actor — the producer, the stream's name and the actor's scope — and
// fills the Actor with the configuration, defaults included, and the
// record. (A producer wrapping New's made two more: its closure and a
// copy of the configuration.)
func TestNewFromAllocations(t *testing.T) {
	if !poolActors {
		t.Skip("built with the tag nopool: every actor is a new object")
	}
	id := uuid.New()
	read := func(st *rules.State, pos *events.Position) error {
		st.ID, *pos = id, events.Position{Commit: 4, Prepare: 4}
		return nil
	}
	cfg := Config{Runtime: NewRuntime(nil, nil)}
	a := NewFrom(cfg, id, read)().(*Actor)
	if a.id != id || a.state.ID != id || a.pos.Commit != 4 || !a.loaded || !a.tracked ||
		a.cfg.StoreTimeout != DefaultStoreTimeout || a.cfg.Runtime != cfg.Runtime || a.cfg.Archetype.Clock == nil || a.stream != events.TaskStream(id) {
		t.Fatalf("actor: id %v, state %v, position %v, loaded %v, tracked %v, store timeout %v, clock %v, stream %q",
			a.id, a.state.ID, a.pos, a.loaded, a.tracked, a.cfg.StoreTimeout, a.cfg.Archetype.Clock, a.stream)
	}
	a.recycle()
	// The fewest of many single starts, not their mean: under the race
	// detector sync.Pool drops a share of what is put back on purpose, and
	// the Actor is then made anew.
	fewest := uint64(math.MaxUint64)
	for range 50 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		NewFrom(cfg, id, read)().(*Actor).recycle()
		runtime.ReadMemStats(&after)
		fewest = min(fewest, after.Mallocs-before.Mallocs)
	}
	if fewest > 3 {
		t.Fatalf("%d allocations per actor started from a record, want at most 3", fewest)
	}
}

// TestStaleLeaveCallbackIsDropped: the leave function is made once per
// object, so a Registry calling it after the object was reused reaches the
// next task's actor; that actor is not leaving, and the call is a stale
// delivery — a panic in a test binary (taskrt), dropped and counted
// otherwise — not a passivate queued to another task's actor.
func TestStaleLeaveCallbackIsDropped(t *testing.T) {
	rt := NewRuntime(nil, nil)
	a := reuseActor(rt)
	a.cfg.Runtime = rt
	a.recycle() // the actor stopped; the Registry kept its leave function
	b := reuseActor(rt)
	b.cfg.Runtime = rt // the next task's actor (b is a, unless the pool dropped it)
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err, _ = r.(error)
			}
		}()
		a.leaveFn()
	}()
	if a != b {
		t.Log("the pool made a new object")
	}
	if !errors.Is(err, taskrt.ErrStale) {
		t.Fatalf("a leave function called outside Leave: %v, want %v", err, taskrt.ErrStale)
	}
}
