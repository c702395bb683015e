package scheduler_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
)

func TestQueuesConfig(t *testing.T) {
	st := memStore(t)
	for _, tc := range []struct {
		queues map[string]int
		want   string // "" when valid
	}{
		{map[string]int{"reports": 2, "mail": 8, "default": 1}, ""},
		{map[string]int{"a.b-c_D9": 100000}, ""},
		{map[string]int{"reports": 0}, `queue "reports": the limit must be between 1 and 100000, got 0`},
		{map[string]int{"reports": -1}, "got -1"},
		{map[string]int{"reports": 100001}, "got 100001"},
		{map[string]int{"": 1}, "a queue name must not be empty"},
		{map[string]int{strings.Repeat("q", 65): 1}, "must be at most 64 characters, got 65"},
		{map[string]int{"two words": 1}, `may hold only letters A-Z and a-z, digits, '_', '.' and '-' (' ' at byte 3)`},
		{map[string]int{"a=b": 1}, "may hold only letters"},
	} {
		err := scheduler.Config{Store: st, Queues: tc.queues}.Validate()
		var ce *scheduler.ConfigError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.queues, err)
		case tc.want != "" && (!errors.As(err, &ce) || ce.Field != "Queues" || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: err = %v, want a ConfigError for Queues saying %q", tc.queues, err, tc.want)
		}
	}
}

// Stats show every configured queue from the start; "default" in Queues
// replaces Workers.
func TestQueueStatsFromTheStart(t *testing.T) {
	for _, tc := range []struct {
		workers int
		queues  map[string]int
		want    []scheduler.QueueStats
	}{
		{0, nil, []scheduler.QueueStats{{Name: "default", Limit: 8, Configured: true}}},
		{3, map[string]int{"reports": 2, "mail": 8}, []scheduler.QueueStats{
			{Name: "default", Limit: 3, Configured: true}, {Name: "mail", Limit: 8, Configured: true}, {Name: "reports", Limit: 2, Configured: true}}},
		{3, map[string]int{"default": 5}, []scheduler.QueueStats{{Name: "default", Limit: 5, Configured: true}}},
	} {
		s, err := scheduler.New(scheduler.Config{Store: memStore(t), Clock: clock.NewVirtual(t0), Workers: tc.workers, Queues: tc.queues})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := s.Stats()
		stopNow(s)
		if len(got.Queues) != len(tc.want) {
			t.Fatalf("%v: queues %+v, want %+v", tc.queues, got.Queues, tc.want)
		}
		sum := 0
		for i := range tc.want {
			if got.Queues[i] != tc.want[i] {
				t.Errorf("%v: queue %d = %+v, want %+v", tc.queues, i, got.Queues[i], tc.want[i])
			}
			sum += tc.want[i].Limit
		}
		if got.Workers != sum {
			t.Errorf("%v: workers %d, want %d", tc.queues, got.Workers, sum)
		}
	}
}
