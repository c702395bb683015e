package simulation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/simulation"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// shared is what every reader of a task stream shows of the task: the
// fields the task's state holds and the view and the audit trail repeat.
type shared struct {
	Status                       string
	NextRun, LastRun             string
	Name                         string
	Interval, Tolerance, Timebox time.Duration
	// Only the state and the view carry these: the runs enqueued in the
	// current incarnation and those of them without an outcome (the
	// view counts per incarnation).
	Runs, Open         int
	Checkpoint         string
	Payload            string
	Priority           int
	Owner, Kind        string
	CreatedAt, Updated string
}

func ts(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func tsp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return ts(*t)
}

func raw(b json.RawMessage) string {
	if len(b) == 0 || string(b) == "null" {
		return ""
	}
	var c bytes.Buffer
	if json.Compact(&c, b) != nil {
		return string(b)
	}
	return c.String()
}

// fromState is what the state shows; before is the number of the last run
// enqueued before the current incarnation was created.
func fromState(s rules.State, before int) shared {
	open := 0
	for _, r := range s.Open {
		if s.Current(r) {
			open++
		}
	}
	return shared{Status: s.Status.String(), NextRun: ts(s.NextRun), LastRun: ts(s.LastRun), Name: s.Spec.Name,
		Interval: s.Interval(), Tolerance: s.Spec.Tolerance, Timebox: s.Spec.Timebox, Runs: s.Runs - before, Open: open,
		Checkpoint: raw(s.Checkpoint), Payload: raw(s.Spec.Payload), Priority: s.Spec.Priority, Owner: s.Spec.Owner,
		Kind: s.Spec.Kind, CreatedAt: ts(s.CreatedAt), Updated: ts(s.UpdatedAt)}
}

func fromRow(r crontasks.Task) shared {
	return shared{Status: r.Status, NextRun: tsp(r.NextRun), LastRun: tsp(r.LastRun), Name: r.Name,
		Interval: r.Interval.D(), Tolerance: r.Tolerance.D(), Timebox: r.Timebox.D(), Runs: int(r.RunCount), Open: int(r.PendingCount),
		Checkpoint: raw(r.Checkpoint), Payload: raw(r.Payload), Priority: r.Priority, Owner: r.Owner, Kind: r.Kind,
		CreatedAt: ts(r.CreatedAt), Updated: ts(r.UpdatedAt)}
}

// fromHistory fills what an audit row shows; the rest is taken from want.
func fromHistory(r history.Row, want shared) shared {
	got := want
	got.Status, got.NextRun, got.LastRun, got.Name = r.Status, tsp(r.NextRun), tsp(r.LastRun), r.Task
	got.Interval, got.Tolerance, got.Timebox = r.Interval, r.Tolerance, r.Timebox
	return got
}

// checkFolds folds log through the task's state (the canonical fold), the
// view's row fold and the audit trail's Tracker, event by event, and through
// a real view in random batches, and reports every shared field on which
// they disagree.
func checkFolds(t *testing.T, rng *rand.Rand, log []events.Recorded) {
	t.Helper()
	states := map[uuid.UUID]rules.State{}
	before := map[uuid.UUID]int{} // the run number at the latest TaskCreated
	rows := map[uuid.UUID]*crontasks.Task{}
	var tracker history.Tracker
	for _, r := range log {
		id, err := events.TaskIDFromStream(r.Stream)
		if err != nil {
			t.Fatal(err)
		}
		e, err := events.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := e.(events.TaskCreated); ok {
			before[id] = states[id].Runs
		}
		states[id] = rules.Evolve(states[id], r.Metadata, e)
		want := fromState(states[id], before[id])
		row, err := crontasks.Evolve(rows[id], r.Metadata, e)
		if err != nil {
			t.Fatalf("view fold of %s@%d: %v", r.Stream, r.Version, err)
		}
		rows[id] = row
		if got := fromRow(*row); got != want {
			t.Fatalf("after %s %s@%d the view row differs from the task's state:\nstate %+v\nview  %+v", r.Type, r.Stream, r.Version, want, got)
		}
		hrow, err := tracker.Apply(r)
		if err != nil {
			t.Fatalf("history fold of %s@%d: %v", r.Stream, r.Version, err)
		}
		if got := fromHistory(hrow, want); got != want {
			t.Fatalf("after %s %s@%d the audit row differs from the task's state:\nstate %+v\naudit %+v", r.Type, r.Stream, r.Version, want, got)
		}
	}
	// The view proper: rows and their fold state stored and read back
	// between batches (no row cache), then read by a query.
	store, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	v, err := crontasks.Open(crontasks.Config{Store: store, CacheRows: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	for rest := log; len(rest) > 0; {
		n := min(len(rest), 1+rng.Intn(8))
		if err := v.Apply(rest[:n]); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	for id, st := range states {
		row, err := v.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fromRow(row), fromState(st, before[id]); got != want {
			t.Errorf("task %s: the view's stored row differs from the task's state:\nstate %+v\nview  %+v", id, want, got)
		}
	}
}

// The one fold of a task stream: every random simulation's log, folded by
// the task's state, the cron_tasks view and the audit trail, agrees on
// every field they share, after every event.
func TestPropertyFoldsAgreeOnSimulations(t *testing.T) {
	n := 30
	if testing.Short() {
		n = 8
	}
	for seed := range n {
		rng := rand.New(rand.NewSource(int64(seed)))
		sc, _ := randomScenario(rng)
		res, err := simulation.Run(context.Background(), sc, simulation.Options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkFolds(t, rng, res.Log) })
	}
}

// randomLog drives one task through random commands decided by the rules,
// as the actor would, and records the events. It adds what scenarios do not
// script: updates (some, as older logs may hold, without a nextRun),
// deletes followed by creating the task again while runs of the old
// incarnation are waiting or running, and checkpoints saved mid-run.
func randomLog(t *testing.T, rng *rand.Rand) []events.Recorded {
	id := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "%d", rng.Int63()))
	stream := events.TaskStream(id)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var st rules.State
	var log []events.Recorded
	record := func(evs []events.Event) {
		for _, e := range evs {
			p, err := events.Propose(e, uuid.Nil, now)
			if err != nil {
				t.Fatal(err)
			}
			r := events.Recorded{Metadata: events.Metadata{Stream: stream, Version: uint64(len(log)), At: now,
				Position: events.Position{Commit: uint64(len(log) + 1), Prepare: uint64(len(log) + 1)}},
				Type: p.Type, Schema: p.Schema, Data: p.Data}
			log = append(log, r)
			st = rules.Evolve(st, r.Metadata, e)
		}
	}
	do := func(cmd rules.Command) {
		evs, err := rules.Decide(st, cmd, now)
		if err == nil {
			record(evs)
		}
	}
	spec := func() rules.Spec {
		iv := time.Duration(10+rng.Intn(50)) * time.Second
		s := rules.Spec{Name: "R", Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(iv)},
			Priority: rng.Intn(3)}
		if rng.Intn(2) == 0 {
			s.Payload = json.RawMessage(fmt.Sprintf(`{"p":%d}`, rng.Intn(9)))
		}
		return s
	}
	do(rules.Create{TaskID: id, Spec: spec(), FirstRun: now.Add(time.Duration(rng.Intn(30)) * time.Second)})
	for range 40 + rng.Intn(80) {
		now = now.Add(time.Duration(rng.Intn(20)) * time.Second)
		pick := func(rs []rules.Run) (rules.Run, bool) {
			if len(rs) == 0 {
				return rules.Run{}, false
			}
			return rs[rng.Intn(len(rs))], true
		}
		switch k := rng.Intn(20); {
		case k < 5:
			do(rules.Tick{})
		case k < 9:
			if r, ok := pick(st.Waiting()); ok {
				do(rules.RequestStart{RunID: r.ID})
			}
		case k < 11:
			if r, ok := pick(st.Running()); ok {
				do(rules.SaveCheckpoint{RunID: r.ID, Checkpoint: json.RawMessage(fmt.Sprintf(`{"n":%d}`, rng.Intn(100)))})
			}
		case k < 14:
			if r, ok := pick(st.Running()); ok {
				var cp json.RawMessage
				if rng.Intn(2) == 0 {
					cp = json.RawMessage(fmt.Sprintf(`{"done":%d}`, rng.Intn(100)))
				}
				switch rng.Intn(3) {
				case 0:
					do(rules.Complete{RunID: r.ID, Checkpoint: cp})
				case 1:
					do(rules.Fail{RunID: r.ID, Error: "boom", Checkpoint: cp})
				default:
					if now.Before(r.Deadline) {
						now = r.Deadline
					}
					do(rules.ForceEnd{RunID: r.ID, Reason: events.ForcedTimebox})
				}
			}
		case k < 15:
			if st.Status != rules.StatusDeleted {
				s := spec()
				u := events.TaskUpdated{Payload: s.Payload, Schedule: s.Schedule, Tolerance: events.Duration(time.Second),
					Timebox: events.Duration(s.Schedule.Interval.D() / 2), Priority: s.Priority}
				if rng.Intn(2) == 0 {
					u.NextRun = now.Add(time.Duration(rng.Intn(60)) * time.Second)
				}
				record([]events.Event{u})
			}
		case k < 16:
			do(rules.Pause{})
		case k < 17:
			do(rules.Resume{})
		case k < 18:
			do(rules.Delete{Reason: "random"})
		default:
			if st.Status == rules.StatusDeleted {
				do(rules.Create{TaskID: id, Spec: spec(), FirstRun: now.Add(time.Duration(rng.Intn(30)) * time.Second)})
			}
		}
	}
	return log
}

// The same agreement on logs the scenarios cannot script.
func TestPropertyFoldsAgreeOnRandomLogs(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 60
	}
	recreated := 0
	for seed := range n {
		rng := rand.New(rand.NewSource(int64(seed)))
		log := randomLog(t, rng)
		created := 0
		for _, r := range log {
			if r.Type == "TaskCreated" {
				created++
			}
		}
		if created > 1 {
			recreated++
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkFolds(t, rng, log) })
	}
	if recreated == 0 {
		t.Errorf("no random log re-created its task")
	}
}
