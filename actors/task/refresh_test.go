package task_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// listings is a Registry (task.Lister) that notes the owners' index
// changes it is told, in order.
type listings struct {
	leaveCounter
	mu   sync.Mutex
	told []string
}

func (l *listings) Listed(_ uuid.UUID, owner, name string, listed bool) {
	l.mu.Lock()
	l.told = append(l.told, fmt.Sprintf("%s/%s %v", owner, name, listed))
	l.mu.Unlock()
}

func (l *listings) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.told
	l.told = nil
	return out
}

// A Refresh has the actor tell the owners' index (task.Lister) where the
// task stands after the other writer's events it took in, before it
// answers, and in the order of its own decisions: the follower writes
// nothing there, so a delete the actor decides after a Refresh stays.
func TestRefreshTellsTheOwnersIndex(t *testing.T) {
	reg := &listings{}
	_, clk, sys, cfg := mendRig(t, func(s events.Store) events.Store { return s }, reg)
	t0 := clk.Now()
	id := uuid.New()
	spawn := func(cfg task.Config) *actor.PID {
		return sys.Root.Spawn(actor.PropsFromProducer(task.New(cfg, id, nil)))
	}
	spec := rules.Spec{Name: "A", Owner: "o", Kind: "k", Schedule: events.Schedule{Interval: events.Duration(time.Hour)}}
	clk.Begin() // the Started of a, as counted.Spawn counts it
	a := spawn(cfg)
	if r := ask(t, clk, sys, a, task.Command{Cmd: rules.Create{TaskID: id, Spec: spec, FirstRun: t0.Add(time.Hour)}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if got := reg.take(); !slices.Equal(got, []string{"o/A true"}) {
		t.Fatalf("told after the create: %q", got)
	}
	// Another writer (an actor whose registry is no Lister) deletes the
	// task and creates it again, named B.
	other := cfg
	other.Registry = nil
	clk.Begin()
	b := spawn(other)
	if r := ask(t, clk, sys, b, task.Command{Cmd: rules.Delete{}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	clk.Begin()
	b = spawn(other) // b stopped: its task, deleted, needs no actor
	spec.Name = "B"
	r := ask(t, clk, sys, b, task.Command{Cmd: rules.Create{TaskID: id, Spec: spec, FirstRun: t0.Add(time.Hour)}})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	sys.Root.Stop(b)
	if r := ask(t, clk, sys, a, task.Refresh{Version: r.State.Version}); r.Err != nil || r.State.Spec.Name != "B" {
		t.Fatalf("refresh: %+v", r)
	}
	if got := reg.take(); !slices.Equal(got, []string{"o/A false", "o/B true"}) {
		t.Fatalf("told after the refresh that took in the delete and the create: %q", got)
	}
	// A new actor's refresh of a version it knows (its load read it) tells
	// where the task stands, which no decision of its told.
	clk.Begin()
	if r := ask(t, clk, sys, spawn(cfg), task.Refresh{Version: r.State.Version}); r.Err != nil {
		t.Fatalf("refresh: %+v", r)
	}
	if got := reg.take(); !slices.Equal(got, []string{"o/B true"}) {
		t.Fatalf("told after a new actor's refresh: %q", got)
	}
	// The actor deletes the task: the index loses it, after the refresh.
	if r := ask(t, clk, sys, a, task.Command{Cmd: rules.Delete{}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	if got := reg.take(); !slices.Equal(got, []string{"o/B false"}) {
		t.Fatalf("told after the delete: %q", got)
	}
	// And of the deleted task, nothing.
	clk.Begin()
	c := spawn(cfg)
	if r := ask(t, clk, sys, c, task.Refresh{Version: 2}); r.Err != nil {
		t.Fatalf("refresh: %+v", r)
	}
	if got := reg.take(); len(got) != 0 {
		t.Fatalf("told after a refresh of the deleted task: %q", got)
	}
}

// A run that another writer ends, learnt by a Refresh, loses its deadline
// timer: the actor of a resting task leaves at once, not at the run's
// deadline.
func TestRefreshStopsTheTimersOfRunsEndedElsewhere(t *testing.T) {
	reg := &leaveCounter{}
	_, clk, sys, cfg := mendRig(t, func(s events.Store) events.Store { return s }, reg)
	cfg.Rest = true
	t0 := clk.Now()
	id := uuid.New()
	spec := rules.Spec{Name: "A", Owner: "o", Kind: "k", Schedule: events.Schedule{Interval: events.Duration(time.Hour)}, Timebox: 10 * time.Minute}
	// Another writer (no Registry: it stays) creates the task.
	other := cfg
	other.Registry, other.Rest = nil, false
	clk.Begin()
	b := sys.Root.Spawn(actor.PropsFromProducer(task.New(other, id, nil)))
	if r := ask(t, clk, sys, b, task.Command{Cmd: rules.Create{TaskID: id, Spec: spec, FirstRun: t0}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	clk.Begin() // the Started of a, as counted.Spawn counts it
	a := sys.Root.Spawn(actor.PropsFromProducer(task.New(cfg, id, nil)))
	for _, m := range []any{
		task.Get{Pin: true},
		task.Command{Cmd: rules.Tick{}},
		task.Command{Cmd: rules.RequestStart{RunID: events.RunID(id, 1)}},
		task.Get{Unpin: true},
	} {
		if r := ask(t, clk, sys, a, m); r.Err != nil {
			t.Fatalf("%+v: %v", m, r.Err)
		}
	}
	clk.Quiesce()
	base := reg.count()
	// The other writer, loading the task anew, records the run's outcome.
	sys.Root.Stop(b)
	clk.Begin()
	b = sys.Root.Spawn(actor.PropsFromProducer(task.New(other, id, nil)))
	r := ask(t, clk, sys, b, task.Command{Cmd: rules.Complete{RunID: events.RunID(id, 1)}})
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	sys.Root.Stop(b)
	if r := ask(t, clk, sys, a, task.Refresh{Version: r.State.Version}); r.Err != nil || len(r.State.Open) != 0 {
		t.Fatalf("refresh: %+v", r)
	}
	clk.Quiesce()
	if reg.count() == base {
		t.Fatalf("the actor of the resting task stayed after learning its run ended (at %s; the run's deadline was %s)", clk.Now().Sub(t0), spec.Timebox)
	}
}
