package rules_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
)

// randomLog decides random commands for a task with a random policy and
// returns what it recorded, as a store would hold it (encoded bodies,
// versions from 0, the time each was decided).
func randomLog(t *testing.T, rnd *rand.Rand) []events.Recorded {
	t.Helper()
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	iv := sec(20 + rnd.IntN(100))
	spec := rules.Defaults(rules.Spec{Name: "A", Owner: "o", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(iv)}, MaxWaiting: 1 + rnd.IntN(3)})
	if rnd.IntN(2) == 0 {
		spec.Policy.Retry = &events.Retry{MaxAttempts: 1 + rnd.IntN(4), InitialBackoff: events.Duration(sec(1 + rnd.IntN(10))),
			MaxBackoff: events.Duration(sec(30)), Multiplier: 2}
	}
	if rnd.IntN(2) == 0 {
		spec.Policy.MissedRunPolicy = events.MissedSkip
	}
	var (
		s   rules.State
		now = t0
		log []events.Recorded
	)
	decide := func(cmd rules.Command) {
		evs, err := rules.Decide(s, cmd, now)
		if err != nil {
			return
		}
		for _, e := range evs {
			p, err := events.Propose(e, id, now)
			if err != nil {
				t.Fatal(err)
			}
			r := events.Recorded{Metadata: events.Metadata{ID: p.ID, Stream: events.TaskStream(id), Version: uint64(len(log)), At: now},
				Type: p.Type, Schema: p.Schema, Data: p.Data}
			log = append(log, r)
			s = rules.Evolve(s, r.Metadata, e)
		}
	}
	decide(rules.Create{TaskID: id, Spec: spec, FirstRun: t0.Add(iv)})
	for step := 0; step < 40+rnd.IntN(120); step++ {
		now = now.Add(time.Duration(rnd.Int64N(int64(iv))))
		switch k := rnd.IntN(24); {
		case k < 7:
			decide(rules.Tick{})
		case k < 11:
			if w := s.Waiting(); len(w) > 0 {
				decide(rules.RequestStart{RunID: w[rnd.IntN(len(w))].ID})
			}
		case k < 16:
			if rs := s.Running(); len(rs) > 0 {
				r := rs[rnd.IntN(len(rs))]
				switch rnd.IntN(4) {
				case 0:
					decide(rules.Complete{RunID: r.ID, Checkpoint: []byte(fmt.Sprintf(`{"n":%d}`, step))})
				case 1:
					decide(rules.Fail{RunID: r.ID, Error: "boom"})
				case 2:
					decide(rules.ForceEnd{RunID: r.ID, Reason: events.ForcedTimebox})
				case 3:
					decide(rules.SaveCheckpoint{RunID: r.ID, Checkpoint: []byte(`{"at":1}`)})
				}
			}
		case k < 17:
			decide(rules.Trigger{})
		case k < 18:
			decide(rules.Pause{})
		case k < 19:
			decide(rules.Resume{})
		case k < 20:
			p := 1 + rnd.IntN(5)
			decide(rules.Update{Priority: &p})
		case k < 21 && rnd.IntN(4) == 0:
			decide(rules.Delete{Reason: "test"})
			now = now.Add(iv)
			decide(rules.Create{TaskID: id, Spec: spec, FirstRun: now.Add(iv)})
		default:
			now = now.Add(time.Duration(rnd.Int64N(int64(5 * iv))))
			decide(rules.Tick{})
		}
	}
	return log
}

// compactAt is log with a TaskCompacted decided after its first k events
// put at version k (the events after it one version later), as the actor
// records it: whole is that stream, kept is what remains once the events
// before the TaskCompacted are removed.
func compactAt(t *testing.T, log []events.Recorded, k int, at time.Time) (whole, kept []events.Recorded) {
	t.Helper()
	s, err := rules.Replay(log[:k])
	if err != nil {
		t.Fatal(err)
	}
	evs, err := rules.Decide(s, rules.Compact{Retention: time.Hour}, at)
	if err != nil || len(evs) != 1 {
		t.Fatalf("compact: %v %v", evs, err)
	}
	p, err := events.Propose(evs[0], id, at)
	if err != nil {
		t.Fatal(err)
	}
	tc := events.Recorded{Metadata: events.Metadata{ID: p.ID, Stream: log[0].Stream, Version: uint64(k), At: at},
		Type: p.Type, Schema: p.Schema, Data: p.Data}
	whole = append(append(whole, log[:k]...), tc)
	for _, r := range log[k:] {
		r.Version++
		whole = append(whole, r)
	}
	return whole, whole[k:]
}

// TestRetentionKeepsReplayExact: over random logs cut at random points,
// the fold of a stream that begins with the TaskCompacted (the events
// before it removed) equals the fold of the whole stream after every event
// that remains; and, but for the versions and the compaction's own marks,
// the fold of the log with no TaskCompacted at all.
func TestRetentionKeepsReplayExact(t *testing.T) {
	cuts := 0
	for seed := uint64(1); seed <= 150; seed++ {
		rnd := rand.New(rand.NewPCG(seed, 32))
		log := randomLog(t, rnd)
		for range 4 {
			k := 1 + rnd.IntN(len(log))
			// The TaskCompacted is decided at the time of the event before it
			// or later (the actor decides it after applying that event).
			at := log[k-1].At
			if k < len(log) {
				at = at.Add(time.Duration(rnd.Int64N(int64(log[k].At.Sub(at)) + 1)))
			}
			whole, kept := compactAt(t, log, k, at)
			// Fold the three streams side by side: the whole one with the
			// TaskCompacted, the one that begins with it, and the log without it.
			want, err := rules.Replay(whole[:k])
			if err != nil {
				t.Fatal(err)
			}
			plain := want
			var got rules.State
			for i, r := range kept {
				e, err := events.Decode(r)
				if err != nil {
					t.Fatal(err)
				}
				want, got = rules.Evolve(want, r.Metadata, e), rules.Evolve(got, r.Metadata, e)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d cut %d, after %d kept events:\n got %+v\nwant %+v", seed, k, i+1, got, want)
				}
				if i == 0 {
					continue // the TaskCompacted: not in the log
				}
				// The same state as without compaction, event for event.
				o := log[k+i-1]
				plain = rules.Evolve(plain, o.Metadata, e)
				cmp := plain
				cmp.Version, cmp.Compacted, cmp.CompactedAt, cmp.CompactedThrough = got.Version, got.Compacted, got.CompactedAt, got.CompactedThrough
				if !reflect.DeepEqual(got, cmp) {
					t.Fatalf("seed %d cut %d, after %d kept events, differs from the log without compaction:\n got %+v\nwant %+v", seed, k, i+1, got, cmp)
				}
			}
			first, _ := events.Decode(kept[0])
			tc := first.(events.TaskCompacted)
			if tc.Events != k || tc.ToVersion != uint64(k-1) || !tc.ToAt.Equal(log[k-1].At) || !tc.FromAt.Equal(log[0].At) {
				t.Fatalf("seed %d cut %d: TaskCompacted says %d events, versions %d–%d, %s–%s", seed, k, tc.Events, tc.FromVersion, tc.ToVersion, tc.FromAt, tc.ToAt)
			}
			cuts++
		}
	}
	if cuts < 500 {
		t.Fatalf("only %d cuts", cuts)
	}
}

// TestRetain: when retention asks for a TaskCompacted and when for the
// removal of the events before the latest one.
func TestRetain(t *testing.T) {
	h := time.Hour
	s := rules.State{Status: rules.StatusActive, Version: 10, FirstAt: t0, CreatedAt: t0}
	cases := []struct {
		name     string
		s        rules.State
		r        time.Duration
		now      time.Time
		truncate uint64
		compact  bool
	}{
		{"no retention", s, 0, t0.Add(100 * h), 0, false},
		{"no task", rules.State{}, h, t0.Add(100 * h), 0, false},
		{"first event within the retention", s, 4 * h, t0.Add(4 * h), 0, false},
		{"first event older than the retention", s, 4 * h, t0.Add(4*h + time.Second), 0, true},
		{"a state recorded before retention", func() rules.State { x := s; x.FirstAt = time.Time{}; return x }(), 4 * h, t0.Add(5 * h), 0, true},
		{"covered events within the retention", compacted(s, 8, t0.Add(2*h), t0.Add(2*h)), 4 * h, t0.Add(6 * h), 0, false},
		{"covered events older, events since", compacted(s, 8, t0.Add(2*h), t0.Add(2*h)), 4 * h, t0.Add(6*h + time.Second), 8, true},
		{"covered events older, nothing since", compacted(s, 10, t0.Add(2*h), t0.Add(2*h)), 4 * h, t0.Add(7 * h), 10, false},
	}
	for _, c := range cases {
		tr, cp := rules.Retain(&c.s, c.r, c.now)
		if tr != c.truncate || cp != c.compact {
			t.Errorf("%s: Retain = %d, %v; want %d, %v", c.name, tr, cp, c.truncate, c.compact)
		}
	}
}

func compacted(s rules.State, v uint64, at, through time.Time) rules.State {
	s.Compacted, s.CompactedAt, s.CompactedThrough = v, at, through
	return s
}
