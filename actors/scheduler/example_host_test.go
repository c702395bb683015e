package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events/embedded"
)

// ops is one of the host's own actors. It speaks to a task's actor in
// messages only: it requests, and the TaskReply comes back to its mailbox.
type ops struct {
	task   *actor.PID
	caller *actor.PID // who asked ops, to hear the outcome
}

// check is what the host's code asks ops to do with the task.
type check struct{ request any }

func (o *ops) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case check:
		o.caller = ctx.Sender()
		ctx.Request(o.task, m.request) // answered with a scheduler.TaskReply
	case scheduler.TaskReply:
		switch {
		case m.Err != nil:
			ctx.Send(o.caller, "refused: "+m.Err.Error())
		default:
			ctx.Send(o.caller, fmt.Sprintf("%s, %d runs, %d waiting, checkpoint %s", m.Task.Status, m.Task.Runs, m.Task.Waiting, m.Task.Checkpoint))
		}
	case *actor.DeadLetterResponse: // the task's actor is gone: ask TaskPID again
		ctx.Send(o.caller, "the task's actor is gone")
	}
}

// An embedder that already runs protoactor-go hosts the scheduler in its
// own actor system; one of its actors pauses, triggers and reads a task by
// messages (TaskPID, then TriggerTask, GetTask, … answered by a TaskReply).
// Stop stops the scheduler's actors and leaves the host's running.
func Example_hostActorSystem() {
	// The host's system (quiet here: an example's output is checked).
	host := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	defer host.Shutdown()

	store, _ := embedded.OpenMemory()
	defer store.Close()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(start)
	s, _ := scheduler.New(scheduler.Config{Store: store, Clock: clk, Tick: 30 * time.Second, ActorSystem: host})
	s.Register("sync", worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		return json.RawMessage(fmt.Sprintf(`{"run":%d}`, r.Number)), nil
	}))
	s.Start(context.Background())

	t, _, _ := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: "crm", Owner: "tenant/7", Kind: "sync", Interval: time.Hour})
	pid, _ := s.TaskPID(context.Background(), t.ID) // a task is an actor of the host's system
	o := host.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return &ops{task: pid} }))

	say := func(request any) {
		answer, err := host.Root.RequestFuture(o, check{request}, 5*time.Second).Result()
		fmt.Println(answer, err)
	}
	say(scheduler.PauseTask{})
	say(scheduler.TriggerTask{})
	say(scheduler.ResumeTask{})
	say(scheduler.TriggerTask{})
	clk.Quiesce() // the triggered run has run (what the task does in answer is counted on the clock)
	say(scheduler.GetTask{})

	s.Stop(context.Background()) // stops the scheduler's actors, not ops nor the host's system
	say(scheduler.GetTask{})
	// Output:
	// paused, 0 runs, 0 waiting, checkpoint  <nil>
	// refused: rules: the task cannot be triggered: the task is paused <nil>
	// active, 0 runs, 0 waiting, checkpoint  <nil>
	// active, 1 runs, 1 waiting, checkpoint  <nil>
	// active, 1 runs, 0 waiting, checkpoint {"run":1} <nil>
	// the task's actor is gone <nil>
}
