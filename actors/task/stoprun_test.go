package task_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
)

// stops returns the StopRun messages the rig's sink got, as "run reason".
func stops(r *rig) []string {
	r.clk.Quiesce()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, m := range r.got {
		if s, ok := m.(worker.StopRun); ok {
			out = append(out, fmt.Sprintf("%s %s", s.RunID, s.Reason))
		}
	}
	return out
}

// The worker that asked to start a run (Command.Runner) is told with a
// StopRun when the actor records the run's forced end — its heartbeat
// watch (R16), its deadline timer (R4) — and is told nothing when the run
// ends otherwise, nor for a run started without a runner.
func TestRunnerIsToldOfAForcedEnd(t *testing.T) {
	start := func(r *rig, a *actor.PID, n int, runner *actor.PID) {
		t.Helper()
		rep := r.ask(a, task.Command{Cmd: rules.RequestStart{RunID: events.RunID(r.id, n)}, Runner: runner})
		if rep.Err != nil || len(rep.Events) != 1 {
			t.Fatalf("start run %d: %+v", n, rep)
		}
	}
	create := func(r *rig, a *actor.PID, hb time.Duration) {
		t.Helper()
		spec := rules.Spec{Name: "A", Owner: "o", Kind: "k", Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
			Timebox: 30 * time.Second, Policy: events.Policy{HeartbeatTimeout: events.Duration(hb)}}
		if rep := r.ask(a, task.Command{Cmd: rules.Create{TaskID: r.id, Spec: spec, FirstRun: t0}}); rep.Err != nil {
			t.Fatal(rep.Err)
		}
		r.ask(a, task.Command{Cmd: rules.Tick{}})
	}

	// Heartbeat timeout: the runner is told at 8 s.
	r := newRig(t, nil)
	a := r.spawn()
	create(r, a, 8*time.Second)
	start(r, a, 1, r.cfg.Queue)
	r.clk.RunUntil(t0.Add(8 * time.Second))
	want := []string{fmt.Sprintf("%s %s", events.RunID(r.id, 1), events.ForcedHeartbeat)}
	if got := stops(r); !slices.Equal(got, want) {
		t.Fatalf("after the heartbeat timeout: %q, want %q", got, want)
	}

	// The deadline timer: the runner is told at 30 s. A run completed by
	// its worker, and one started without a runner, tell nobody.
	q := newRig(t, nil)
	b := q.spawn()
	create(q, b, 0)
	start(q, b, 1, q.cfg.Queue)
	q.clk.RunUntil(t0.Add(30 * time.Second))
	want = []string{fmt.Sprintf("%s %s", events.RunID(q.id, 1), events.ForcedTimebox)}
	if got := stops(q); !slices.Equal(got, want) {
		t.Fatalf("after the deadline: %q, want %q", got, want)
	}
	q.clk.RunUntil(t0.Add(time.Minute))
	q.ask(b, task.Command{Cmd: rules.Tick{}})
	start(q, b, 2, q.cfg.Queue)
	if rep := q.ask(b, task.Command{Cmd: rules.Complete{RunID: events.RunID(q.id, 2)}}); rep.Err != nil {
		t.Fatal(rep.Err)
	}
	q.clk.RunUntil(t0.Add(2 * time.Minute))
	q.ask(b, task.Command{Cmd: rules.Tick{}})
	start(q, b, 3, nil)
	q.clk.RunUntil(t0.Add(3 * time.Minute))
	if got := stops(q); !slices.Equal(got, want) {
		t.Fatalf("a completed run, or a run without a runner, told someone: %q", got)
	}
}
