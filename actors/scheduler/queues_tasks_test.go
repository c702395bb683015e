package scheduler_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
)

// Tasks run in the queue they name: while the one slot of "reports" is
// taken by a slow run, a task of the default queue, due at the same tick,
// starts at once — and a task naming a queue no configuration has gets one
// of its own, shown as not configured.
func TestTasksRunInTheQueueTheyName(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: 30 * time.Second, Workers: 1, Queues: map[string]int{"reports": 1}})
	if err != nil {
		t.Fatal(err)
	}
	s.Register("work", sleeper(clk, 20*time.Second))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer stopNow(s)
	ids := map[string]string{}
	for _, tc := range []struct{ name, queue string }{{"R1", "reports"}, {"R2", "reports"}, {"D", ""}, {"T", "typo"}} {
		task, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: tc.name, Owner: "o", Kind: "work",
			Interval: time.Hour, FirstRun: t0.Add(30 * time.Second), Queue: tc.queue})
		if err != nil {
			t.Fatal(err)
		}
		want := tc.queue
		if want == "" {
			want = "default"
		}
		if task.Queue != want {
			t.Errorf("%s: queue %q, want %q", tc.name, task.Queue, want)
		}
		ids[tc.name] = task.ID.String()
	}
	clk.RunUntil(t0.Add(30 * time.Second))
	busy := map[string]int64{}
	configured := map[string]bool{}
	for _, q := range s.Stats().Queues {
		busy[q.Name], configured[q.Name] = q.Busy, q.Configured
	}
	if busy["reports"] != 1 || busy["default"] != 1 || busy["typo"] != 1 || configured["typo"] {
		t.Errorf("at 00:30: busy %v, configured %v", busy, configured)
	}
	clk.RunUntil(t0.Add(2 * time.Minute))
	started := map[string]string{}
	for name, id := range ids {
		for _, l := range strings.Split(trail(t, st, stringer(id)), "\n") {
			if strings.Contains(l, "RunStarted") {
				started[name] = l[:5]
			}
		}
	}
	// One of R1 and R2 waits for the other's slot; D and T never wait
	// for "reports".
	reports := []string{started["R1"], started["R2"]}
	slices.Sort(reports)
	if started["D"] != "00:30" || started["T"] != "00:30" || !slices.Equal(reports, []string{"00:30", "00:50"}) {
		t.Fatalf("starts %v, want D and T at 00:30, R1 and R2 at 00:30 and 00:50", started)
	}
}

type stringer string

func (s stringer) String() string { return string(s) }
