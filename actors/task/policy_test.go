package task_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/dueindex"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/counted"
)

// watched is a task with a heartbeat_timeout of 8 s, a 30 s timebox and
// two attempts 5 s apart, its first run started at t0.
func watched(t *testing.T) (*rig, *actor.PID, func(cmd rules.Command) task.Reply) {
	r := newRig(t, nil)
	a := r.spawn()
	spec := rules.Spec{Name: "A", Owner: "o", Kind: "k", Schedule: events.Schedule{Interval: events.Duration(time.Minute)},
		Timebox: 30 * time.Second, Policy: events.Policy{Queue: "mail", HeartbeatTimeout: events.Duration(8 * time.Second),
			Retry: &events.Retry{MaxAttempts: 2, InitialBackoff: events.Duration(5 * time.Second), MaxBackoff: events.Duration(5 * time.Second), Multiplier: 1}}}
	if rep := r.ask(a, task.Command{Cmd: rules.Create{TaskID: r.id, Spec: spec, FirstRun: t0}}); rep.Err != nil {
		t.Fatal(rep.Err)
	}
	do := func(cmd rules.Command) task.Reply { return r.ask(a, task.Command{Cmd: cmd}) }
	do(rules.Tick{})
	if rep := do(rules.RequestStart{RunID: events.RunID(r.id, 1)}); rep.Err != nil || len(rep.Events) != 1 {
		t.Fatalf("start: %+v", rep)
	}
	return r, a, do
}

// forced returns the forced ends recorded for the rig's task.
func forced(t *testing.T, r *rig) []events.RunForcedEnd {
	t.Helper()
	recs, err := r.store.ReadStream(context.Background(), events.TaskStream(r.id), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.RunForcedEnd
	for _, rec := range recs {
		e, err := events.Decode(rec)
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := e.(events.RunForcedEnd); ok {
			out = append(out, f)
			if !rec.At.Equal(f.RetryAt.Add(-5 * time.Second)) {
				t.Errorf("forced end recorded at %s, its retry at %s: not 5 s apart", rec.At.Sub(t0), f.RetryAt.Sub(t0))
			}
		}
	}
	return out
}

// TestHeartbeatTimeoutForcesARunToEnd (R16): a run that heartbeats within
// its timeout runs on; once it stops heartbeating it is forced to end with
// reason heartbeat_timeout a timeout after its last heartbeat — long before
// its deadline — and R13 gives it a retry, which the next tick enqueues.
func TestHeartbeatTimeoutForcesARunToEnd(t *testing.T) {
	r, a, do := watched(t)
	run := events.RunID(r.id, 1)
	r.clk.RunUntil(t0.Add(5 * time.Second))
	if rep := do(rules.Heartbeat{RunID: run}); rep.Err != nil || len(rep.Events) != 0 {
		t.Fatalf("a heartbeat is not recorded: %+v", rep)
	}
	r.clk.RunUntil(t0.Add(9 * time.Second))
	// A saved checkpoint counts as a heartbeat too.
	if rep := do(rules.SaveCheckpoint{RunID: run, Checkpoint: json.RawMessage(`1`)}); rep.Err != nil {
		t.Fatal(rep.Err)
	}
	r.clk.RunUntil(t0.Add(17*time.Second - time.Millisecond))
	if f := forced(t, r); len(f) != 0 {
		t.Fatalf("forced to end %s after its last heartbeat: %+v", 8*time.Second-time.Millisecond, f)
	}
	r.clk.RunUntil(t0.Add(17 * time.Second))
	f := forced(t, r)
	if len(f) != 1 || f[0].Reason != events.ForcedHeartbeat || f[0].RetryAt == nil || !f[0].RetryAt.Equal(t0.Add(22*time.Second)) {
		t.Fatalf("forced ends %+v, want one for heartbeat_timeout at 00:17 with a retry at 00:22", f)
	}
	if n := r.clk.Pending(); n != 0 {
		t.Fatalf("%d timers outlive the run", n)
	}
	// The retry: enqueued by the first tick at or after 00:22, on the
	// task's queue, attempt 2 of run 1's slot.
	counted.Send(r.clk, r.sys.Root, a, dueindex.Tick{At: t0.Add(22 * time.Second)})
	r.clk.Quiesce()
	var retry *worker.Enqueued
	r.mu.Lock()
	for _, m := range r.got {
		if e, ok := m.(worker.Enqueued); ok && e.Attempt == 2 {
			retry = &e
		}
	}
	r.mu.Unlock()
	if retry == nil || retry.RetryOf != run || retry.Queue != "mail" || retry.Run != 2 {
		t.Fatalf("retry put on the queue: %+v", retry)
	}
}

// TestHeartbeatTimerStopsWithTheRun: a run that ends in time leaves no
// heartbeat timer behind, and a task without a heartbeat_timeout arms
// none.
func TestHeartbeatTimerStopsWithTheRun(t *testing.T) {
	r, _, do := watched(t)
	if n := r.clk.Pending(); n != 2 {
		t.Fatalf("%d timers pending, want the deadline and the heartbeat check", n)
	}
	if rep := do(rules.Complete{RunID: events.RunID(r.id, 1)}); rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if n := r.clk.Pending(); n != 0 {
		t.Fatalf("%d timers outlive the run", n)
	}

	q := newRig(t, nil)
	a := q.spawn()
	q.create(a, time.Minute, t0)
	q.ask(a, task.Command{Cmd: rules.Tick{}})
	q.ask(a, task.Command{Cmd: rules.RequestStart{RunID: events.RunID(q.id, 1)}})
	if n := q.clk.Pending(); n != 1 {
		t.Fatalf("%d timers pending without a heartbeat_timeout, want the deadline alone", n)
	}
}
