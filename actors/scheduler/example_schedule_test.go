package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events/embedded"
)

// A schedule is one value: Every, Cron or At, with its qualifiers. A zero
// tolerance is WithTolerance(0), not a flag beside a zero.
func ExampleSchedule() {
	store, _ := embedded.OpenMemory()
	defer store.Close()
	clk := clock.NewVirtual(time.Date(2026, 3, 26, 0, 0, 0, 0, time.UTC))
	s, _ := scheduler.New(scheduler.Config{Store: store, Clock: clk})
	s.Register("k", worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) { return nil, nil }))
	s.Start(context.Background())
	defer s.Stop(context.Background())

	for name, sc := range map[string]scheduler.Schedule{
		"a-poll":   scheduler.Every(30 * time.Second).WithTolerance(0),
		"b-report": scheduler.Cron("0 9 * * MON-FRI").In("Europe/Berlin"),
		"c-launch": scheduler.At(time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)),
	} {
		s.CreateTask(context.Background(), scheduler.TaskSpec{Owner: "example", Name: name, Kind: "k", Schedule: sc})
	}
	tasks, _ := s.Tasks(context.Background())
	for _, t := range tasks {
		fmt.Println(t.Name, t.Schedule().Kind(), "next", t.NextRun.Format(time.RFC3339), "tolerance", t.Tolerance)
	}
	// Output:
	// a-poll interval next 2026-03-26T00:00:30Z tolerance 0s
	// b-report cron next 2026-03-26T08:00:00Z tolerance 5s
	// c-launch at next 2026-04-01T12:00:00Z tolerance 5s
}
