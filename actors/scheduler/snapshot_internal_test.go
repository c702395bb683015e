package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/google/uuid"
)

// TestSnapshotRecoveryIsTheFullFold drives a scheduler through random
// commands, ticks, runs that outlast a step, failures with retries, and
// snapshots — whole ones, and ones cut short before their meta entry as a
// crash would leave them — and after every step recovers the tasks both
// ways: from the snapshot and the log after it, and from the whole log.
// Every task that is not deleted and idle must come out the same.
func TestSnapshotRecoveryIsTheFullFold(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { snapshotFoldRun(t, seed) })
	}
}

func snapshotFoldRun(t *testing.T, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 1))
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(t0)
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	handlers := map[string]worker.Handler{
		"quick": worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) { return nil, nil }),
		"slow": worker.HandlerFunc(func(ctx context.Context, _ *worker.Run) (json.RawMessage, error) {
			return nil, clock.Sleep(ctx, clk, 100*time.Second)
		}),
		"flaky": worker.HandlerFunc(func(_ context.Context, r *worker.Run) (json.RawMessage, error) {
			if r.Number%2 == 1 {
				return nil, errors.New("odd run")
			}
			return nil, nil
		}),
	}
	// RecordEvery 2: live actors' states are recorded often, so a restart
	// reads the tasks that had an actor from their record and the tail.
	cfg := Config{Store: st, Tick: 30 * time.Second, Workers: 2, RecordEvery: 2}
	start := func() *Scheduler {
		c := cfg
		c.Clock = clk
		s, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		for kind, h := range handlers {
			if err := s.Register(kind, h); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := start()
	defer func() { stopNowInternal(s) }()

	var ids []uuid.UUID
	sweeps := 0
	for step := range 60 {
		var op string
		switch r := rng.IntN(10); {
		case r < 3 || len(ids) == 0:
			kinds := []string{"quick", "slow", "flaky"}
			every := time.Duration(1+rng.IntN(4)) * time.Minute
			spec := TaskSpec{Name: fmt.Sprintf("t%03d", step), Owner: "o", Kind: kinds[rng.IntN(3)],
				Interval: every, Timebox: every,
				FirstRun: clk.Now().Add(time.Duration(rng.IntN(90)) * time.Second)}
			if rng.IntN(3) == 0 {
				spec.Retry = &RetryPolicy{MaxAttempts: 3, InitialBackoff: 10 * time.Second, Multiplier: 2, MaxBackoff: time.Minute}
			}
			tk, _, err := s.CreateTask(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, tk.ID)
			op = "create"
		case r < 4:
			id := ids[rng.IntN(len(ids))]
			_, _ = s.PauseTask(ctx, id) // a deleted task refuses: fine
			op = "pause"
		case r < 5:
			id := ids[rng.IntN(len(ids))]
			_, _ = s.ResumeTask(ctx, id)
			op = "resume"
		case r < 6:
			id := ids[rng.IntN(len(ids))]
			_, _ = s.DeleteTask(ctx, id)
			op = "delete"
		case r < 7:
			id := ids[rng.IntN(len(ids))]
			_, _ = s.Trigger(ctx, id)
			op = "trigger"
		case r < 8:
			// A restart: after a stop (which snapshots), or after a crash
			// (which does not), with runs under way either way.
			crash := rng.IntN(2) == 0
			if crash {
				s.snap = nil
			}
			stopNowInternal(s)
			clk = clock.NewVirtual(clk.Now())
			s = start()
			op = fmt.Sprintf("restart (crash %v)", crash)
		default:
			clk.RunUntil(clk.Now().Add(time.Duration(rng.IntN(180)) * time.Second))
			op = "time"
		}
		clk.Quiesce() // what the call set going (a run, say) is done
		switch r := rng.IntN(10); {
		case r < 3:
			if err := s.sweep(ctx, nil); err != nil {
				t.Fatal(err)
			}
			sweeps++
			op += "+sweep"
		case r < 4 && sweeps > 0:
			cutSweep(t, s, rng)
			op += "+cut sweep"
		}
		if sweeps == 0 {
			continue
		}
		compareRecoveries(t, cfg, fmt.Sprintf("step %d (%s)", step, op))
	}
	if sweeps == 0 {
		t.Fatal("no snapshot was taken: the test compared nothing")
	}
}

// cutSweep writes some of the records a sweep would write, and no meta
// entry: what a crash in the middle of a sweep leaves. The scheduler keeps
// them to write in its next sweep, as a new process would have them from
// its recovery.
func cutSweep(t *testing.T, s *Scheduler, rng *rand.Rand) {
	t.Helper()
	s.mu.Lock()
	var some []events.SnapshotEntry
	for id, rec := range s.snap.dirty {
		if rng.IntN(2) == 0 {
			some = append(some, events.SnapshotEntry{Key: append([]byte(nil), id[:]...), Value: []byte(rec)})
		}
	}
	s.mu.Unlock()
	if err := s.snap.store.WriteSnapshot(context.Background(), some); err != nil {
		t.Fatal(err)
	}
}

// compareRecoveries recovers the tasks from cfg's store both ways and
// compares them.
func compareRecoveries(t *testing.T, cfg Config, at string) {
	t.Helper()
	ctx := context.Background()
	cfg.Clock = clock.NewVirtual(time.Time{})
	fresh, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	full, err := fresh.recoverStates(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fresh.snap = newSnapshots(fresh.cfg)
	r, err := fresh.recoverFromSnapshot(ctx)
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	snapped := maps.Clone(r.states)
	for _, rt := range r.recorded {
		if _, ok := r.changed[rt.id]; ok {
			continue
		}
		want := full[rt.id]
		if want == nil {
			t.Fatalf("%s: the snapshot has a record of task %s the log does not have", at, rt.id)
		}
		if rec := newRecord(want); rt.rec != rec {
			t.Fatalf("%s: task %s: the record kept from the snapshot is not the task's record", at, rt.id)
		}
		if got, wantAt := rt.at, placementOf(rt.id, &want.State); !samePlacement(got, wantAt) {
			t.Fatalf("%s: task %s is placed %+v from its record, %+v from the log", at, rt.id, got, wantAt)
		}
		st := &task.Initial{}
		if err := readRecord(rt.rec, st); err != nil {
			t.Fatal(err)
		}
		st.Tracked = false
		if rt.st != nil && !reflect.DeepEqual(*rt.st, *st) {
			t.Fatalf("%s: task %s: the state kept for its actor is not its record's", at, rt.id)
		}
		if (rt.st != nil) != (!rt.at.idle && !rt.at.rests) {
			t.Fatalf("%s: task %s: a state kept (%v) though placed %+v", at, rt.id, rt.st != nil, rt.at)
		}
		snapped[rt.id] = st
	}
	for id, want := range full {
		got := snapped[id]
		if rules.Idle(&want.State) {
			if got != nil && !rules.Idle(&got.State) {
				t.Fatalf("%s: task %s is deleted and idle in the log, but the snapshot has it %s", at, id, got.State.Status)
			}
			continue
		}
		if got == nil {
			t.Fatalf("%s: task %s (%s, version %d) is missing from the snapshot's recovery", at, id, want.State.Status, want.State.Version)
		}
		if !reflect.DeepEqual(*got, *want) {
			t.Fatalf("%s: task %s differs:\nsnapshot %+v\n    log  %+v", at, id, *got, *want)
		}
	}
	for id, got := range snapped {
		if _, ok := full[id]; !ok {
			t.Fatalf("%s: the snapshot's recovery has task %s (%s) the log does not", at, id, got.State.Status)
		}
	}
}

// samePlacement compares two placements, their due times as instants.
func samePlacement(a, b placement) bool {
	at, bt := a.entry.NextRun, b.entry.NextRun
	a.entry.NextRun, b.entry.NextRun = time.Time{}, time.Time{}
	return a == b && at.Equal(bt)
}

func stopNowInternal(s *Scheduler) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Stop(ctx)
}

// A snapshot whose mark is past the log's head (a log restored from an
// older backup, say) is not used.
func TestSnapshotPastTheHeadIsRefused(t *testing.T) {
	ctx := context.Background()
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	meta := snapshotMeta{mark: events.Position{Commit: 10, Prepare: 10}}
	if err := st.WriteSnapshot(ctx, []events.SnapshotEntry{{Key: metaKey, Value: meta.appendBinary(nil)}}); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	s.snap = newSnapshots(s.cfg)
	if _, err := s.recoverFromSnapshot(ctx); !errors.Is(err, errNoSnapshot) {
		t.Fatalf("got %v, want errNoSnapshot", err)
	}
}
