package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/events/embedded"
)

// BenchmarkTaskCall is the cost of a call about a task (Task, a read) when
// the task rests — its actor is started from the record and leaves again,
// the cycle every due run of a resting task goes through once — against
// the same call to an actor that stays (pinned).
//
//	go test ./actors/scheduler -run '^$' -bench TaskCall -benchmem
func BenchmarkTaskCall(b *testing.B) {
	for _, pinned := range []bool{false, true} {
		name := "resting"
		if pinned {
			name = "pinned"
		}
		b.Run(name, func(b *testing.B) {
			st, err := embedded.OpenMemory()
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			s, err := scheduler.New(scheduler.Config{Store: st, Tick: time.Hour})
			if err != nil {
				b.Fatal(err)
			}
			s.Register("noop", sleeper(nil, 0))
			ctx := context.Background()
			if err := s.Start(ctx); err != nil {
				b.Fatal(err)
			}
			defer s.Stop(ctx)
			t, _, err := s.CreateTask(ctx, scheduler.TaskSpec{Name: "a", Owner: "o", Kind: "noop", Interval: time.Hour,
				FirstRun: time.Now().Add(time.Hour)})
			if err != nil {
				b.Fatal(err)
			}
			if pinned {
				if _, err := s.TaskPID(ctx, t.ID); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for range b.N {
				if _, err := s.Task(ctx, t.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
