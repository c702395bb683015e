package chaos

import (
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// logOf builds a global log from task events, numbering positions and
// versions as the embedded store does.
type logOf struct {
	t    *testing.T
	recs []events.Recorded
	vers map[uuid.UUID]uint64
}

func newLog(t *testing.T) *logOf { return &logOf{t: t, vers: map[uuid.UUID]uint64{}} }

var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

func (l *logOf) add(task uuid.UUID, at time.Duration, e events.Event) *logOf {
	p, err := events.Propose(e, uuid.Nil, t0.Add(at))
	if err != nil {
		l.t.Fatal(err)
	}
	pos := uint64(len(l.recs) + 1)
	l.recs = append(l.recs, events.Recorded{
		Metadata: events.Metadata{ID: p.ID, Stream: events.TaskStream(task), Version: l.vers[task],
			Position: events.Position{Commit: pos, Prepare: pos}, At: p.At},
		Type: p.Type, Schema: p.Schema, Data: p.Data,
	})
	l.vers[task]++
	return l
}

func created(task uuid.UUID) events.TaskCreated {
	return events.TaskCreated{TaskID: task, Name: "n", Owner: "o", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Second)}, Tolerance: events.Duration(200 * time.Millisecond),
		Timebox: events.Duration(500 * time.Millisecond), NextRun: t0.Add(time.Second)}
}

// run adds an enqueue, a start and a completion of run n at the given start.
func (l *logOf) run(task uuid.UUID, n int, start time.Duration) *logOf {
	id := events.RunID(task, n)
	return l.add(task, start-10*time.Millisecond, events.RunEnqueued{RunID: id, Run: n, Due: t0, NextRun: t0}).
		add(task, start, events.RunStarted{RunID: id, Run: n, Deadline: t0.Add(start + time.Second)}).
		add(task, start+5*time.Millisecond, events.RunCompleted{RunID: id, Run: n})
}

var taskA = uuid.MustParse("00000000-0000-0000-0000-00000000000a")

func healthy(t *testing.T) *logOf {
	return newLog(t).add(taskA, 0, created(taskA)).run(taskA, 1, time.Second).run(taskA, 2, 2*time.Second)
}

func TestCheckHealthyLogHasNoViolation(t *testing.T) {
	l := healthy(t)
	res := Check(Input{Log: l.recs, Ops: map[uuid.UUID][]Op{taskA: {{StatusActive, true}}},
		Sink: map[uuid.UUID]int{events.RunID(taskA, 1): 1}, Settled: true})
	if len(res.Violations) != 0 {
		t.Fatalf("violations: %v", res.Violations)
	}
	if res.Tasks != 1 || res.Runs != 2 || res.Started != 2 || res.Outcomes[OutcomeCompleted] != 2 {
		t.Fatalf("counts: %+v", res)
	}
}

// Each case breaks one invariant; the checker must name it.
func TestCheckFindsEachViolation(t *testing.T) {
	taskB := uuid.MustParse("00000000-0000-0000-0000-00000000000b")
	r3 := events.RunID(taskA, 3)
	cases := []struct {
		name string
		in   func() Input
		want string
	}{
		{"acknowledged create missing", func() Input {
			return Input{Log: healthy(t).recs, Ops: map[uuid.UUID][]Op{taskB: {{StatusActive, true}}}}
		}, InvAckedTask},
		{"acknowledged pause not in the log", func() Input {
			l := healthy(t)
			return Input{Log: l.recs, Ops: map[uuid.UUID][]Op{taskA: {{StatusActive, true}, {StatusPaused, true}}},
				StatusAt: l.recs[len(l.recs)-1].Position}
		}, InvAckedState},
		{"two outcomes", func() Input {
			l := healthy(t).add(taskA, 3*time.Second, events.RunFailed{RunID: events.RunID(taskA, 2), Run: 2, Error: "x"})
			return Input{Log: l.recs}
		}, InvOneOutcome},
		{"outcome of a run never enqueued", func() Input {
			l := healthy(t).add(taskA, 3*time.Second, events.RunDropped{RunID: r3, Run: 3, Reason: "paused"})
			return Input{Log: l.recs}
		}, InvOneOutcome},
		{"open after settling", func() Input {
			l := healthy(t).add(taskA, 3*time.Second, events.RunEnqueued{RunID: r3, Run: 3, Due: t0, NextRun: t0})
			return Input{Log: l.recs, Settled: true}
		}, InvOpenRun},
		{"started twice", func() Input {
			l := healthy(t).add(taskA, 3*time.Second, events.RunStarted{RunID: events.RunID(taskA, 2), Run: 2, Deadline: t0})
			return Input{Log: l.recs}
		}, InvDoubleStart},
		{"started without enqueue", func() Input {
			l := healthy(t).add(taskA, 3*time.Second, events.RunStarted{RunID: r3, Run: 3, Deadline: t0})
			return Input{Log: l.recs}
		}, InvStartOrder},
		{"completed without start", func() Input {
			l := healthy(t).add(taskA, 3*time.Second, events.RunEnqueued{RunID: r3, Run: 3, Due: t0, NextRun: t0}).
				add(taskA, 3*time.Second, events.RunCompleted{RunID: r3, Run: 3})
			return Input{Log: l.recs}
		}, InvStartOrder},
		{"starts closer than interval - tolerance", func() Input {
			return Input{Log: healthy(t).run(taskA, 3, 2*time.Second+799*time.Millisecond).recs}
		}, InvSpacing},
		{"stream version skipped", func() Input {
			l := healthy(t)
			l.vers[taskA]++
			return Input{Log: l.run(taskA, 3, 4*time.Second).recs}
		}, InvVersions},
		{"global position skipped", func() Input {
			l := healthy(t)
			l.recs[2].Position = events.Position{Commit: 9, Prepare: 9}
			return Input{Log: l.recs}
		}, InvPositions},
		{"sink saw a run twice", func() Input {
			return Input{Log: healthy(t).recs, Sink: map[uuid.UUID]int{events.RunID(taskA, 1): 2}}
		}, InvSinkTwice},
		{"sink saw a run never started", func() Input {
			return Input{Log: healthy(t).recs, Sink: map[uuid.UUID]int{r3: 1}}
		}, InvSinkUnstarted},
		{"undecodable body", func() Input {
			l := healthy(t)
			l.recs[1].Data = []byte("{")
			return Input{Log: l.recs}
		}, InvDecode},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := Check(c.in())
			if res.Count(c.want) == 0 {
				t.Fatalf("no %s violation; got %v", c.want, res.Violations)
			}
		})
	}
}

// The spacing bound is inclusive (R3 drops only when now < lastRun +
// interval - tolerance), and the first start after a re-create has no
// previous start.
func TestCheckSpacingBoundary(t *testing.T) {
	l := healthy(t).run(taskA, 3, 2*time.Second+800*time.Millisecond)
	if res := Check(Input{Log: l.recs}); res.Count(InvSpacing) != 0 {
		t.Fatalf("exactly interval - tolerance apart is allowed: %v", res.Violations)
	}
	l = healthy(t).add(taskA, 2100*time.Millisecond, events.TaskDeleted{}).add(taskA, 2200*time.Millisecond, created(taskA)).
		run(taskA, 3, 2300*time.Millisecond)
	if res := Check(Input{Log: l.recs}); res.Count(InvSpacing) != 0 {
		t.Fatalf("a new incarnation starts afresh: %v", res.Violations)
	}
}

// A process_lost forced end of a run the sink saw is allowed (R9): the
// check is "never twice", not "exactly once".
func TestCheckProcessLostSeenBySink(t *testing.T) {
	id := events.RunID(taskA, 3)
	l := healthy(t).add(taskA, 3*time.Second, events.RunEnqueued{RunID: id, Run: 3, Due: t0, NextRun: t0}).
		add(taskA, 3100*time.Millisecond, events.RunStarted{RunID: id, Run: 3, Deadline: t0}).
		add(taskA, 5*time.Second, events.RunForcedEnd{RunID: id, Run: 3, Deadline: t0, Reason: events.ForcedProcessLost})
	res := Check(Input{Log: l.recs, Sink: map[uuid.UUID]int{id: 1}, Settled: true})
	if len(res.Violations) != 0 {
		t.Fatalf("violations: %v", res.Violations)
	}
	if res.Outcomes["forced_end/process_lost"] != 1 {
		t.Fatalf("outcomes: %v", res.Outcomes)
	}
}

func TestAllowedStatuses(t *testing.T) {
	got := allowed([]Op{{StatusActive, true}, {StatusPaused, true}, {StatusActive, false}, {StatusDeleted, false}})
	if len(got) != 3 || !got[StatusPaused] || !got[StatusActive] || !got[StatusDeleted] {
		t.Fatalf("allowed = %v", got)
	}
}
