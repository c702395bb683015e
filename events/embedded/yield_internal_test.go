package embedded

import "testing"

// TestLetAnsweredQueueStopsAtTheLastGroupsSize: the committer waits for
// the writers its last group answered, not for every writer that may yet
// arrive. Writers arriving one per yield (a tick's task actors deciding in
// turn) used to keep it yielding maxAnsweredYields times while the appends
// already queued waited.
func TestLetAnsweredQueueStopsAtTheLastGroupsSize(t *testing.T) {
	for _, c := range []struct {
		name               string
		queued, answered   int
		arriveEachYield    bool
		wantYields, wantAt int
	}{
		{name: "first group after idle: no wait", queued: 1, answered: 0, arriveEachYield: true, wantYields: 0, wantAt: 1},
		{name: "as many queued as answered: no wait", queued: 5, answered: 5, arriveEachYield: true, wantYields: 0, wantAt: 5},
		{name: "writers trickle in: until as many as answered", queued: 2, answered: 5, arriveEachYield: true, wantYields: 3, wantAt: 5},
		{name: "nobody comes back: one yield", queued: 0, answered: 5, wantYields: 1, wantAt: 0},
		{name: "a lone writer pays one yield", queued: 0, answered: 1, wantYields: 1, wantAt: 0},
		{name: "bounded by maxAnsweredYields", queued: 0, answered: 1000, arriveEachYield: true, wantYields: maxAnsweredYields, wantAt: maxAnsweredYields},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &Store{intake: newIntake()}
			for range c.queued {
				s.intake.put(&appendReq{})
			}
			yields := 0
			saved := yield
			yield = func() {
				yields++
				if c.arriveEachYield {
					s.intake.put(&appendReq{})
				}
			}
			defer func() { yield = saved }()
			s.letAnsweredQueue(c.answered)
			if yields != c.wantYields || int(s.intake.waiting.Load()) != c.wantAt {
				t.Errorf("yielded %d times, %d queued at the cut; want %d, %d", yields, s.intake.waiting.Load(), c.wantYields, c.wantAt)
			}
		})
	}
}
