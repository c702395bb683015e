package scheduler_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// outage is what outageStore does to appends and stream reads.
type outage int32

const (
	storeUp     outage = iota
	storeDown          // appends and reads fail, nothing written
	answersLost        // appends are written, then answered with an error
)

// outageStore is a store whose server goes away for a while: down, it
// refuses appends and stream reads; with its answers lost, it writes an
// append and answers it with an error (the commit landed, the answer did
// not). It counts, by event type, the appends it failed.
type outageStore struct {
	events.Store
	mode atomic.Int32
	err  error // what a failed call returns: errServerGone when nil

	mu     sync.Mutex
	failed map[string]int
}

var errServerGone = fmt.Errorf("%w: server closed the connection unexpectedly", events.ErrUnreachable)

func (s *outageStore) Append(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	switch outage(s.mode.Load()) {
	case storeDown:
		s.count(evs)
		return events.AppendResult{}, s.fault()
	case answersLost:
		if _, err := s.Store.Append(ctx, stream, exp, evs...); err != nil {
			return events.AppendResult{}, err
		}
		s.count(evs)
		return events.AppendResult{}, s.fault()
	}
	return s.Store.Append(ctx, stream, exp, evs...)
}

func (s *outageStore) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	if outage(s.mode.Load()) == storeDown {
		return nil, s.fault()
	}
	return s.Store.ReadStream(ctx, stream, from, limit)
}

func (s *outageStore) fault() error {
	if s.err != nil {
		return s.err
	}
	return errServerGone
}

func (s *outageStore) count(evs []events.Proposed) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed == nil {
		s.failed = map[string]int{}
	}
	for _, e := range evs {
		s.failed[e.Type]++
	}
}

func (s *outageStore) failures(typ string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failed[typ]
}

// runLedger is, for each run in the log, how often it was enqueued and
// started, and its outcomes by type.
type runLedger struct {
	enqueued, started int
	outcomes          []string
}

// ledger reads the whole log into a runLedger per run.
func ledger(t *testing.T, st events.Store) map[uuid.UUID]*runLedger {
	t.Helper()
	runs := map[uuid.UUID]*runLedger{}
	get := func(id uuid.UUID) *runLedger {
		if runs[id] == nil {
			runs[id] = &runLedger{}
		}
		return runs[id]
	}
	var after events.Position
	for {
		recs, err := st.ReadAll(context.Background(), after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 0 {
			return runs
		}
		for _, r := range recs {
			after = r.Position
			e, err := events.Decode(r)
			if err != nil {
				t.Fatal(err)
			}
			switch e := e.(type) {
			case events.RunEnqueued:
				get(e.RunID).enqueued++
			case events.RunStarted:
				get(e.RunID).started++
			case events.RunCompleted:
				get(e.RunID).outcomes = append(get(e.RunID).outcomes, r.Type)
			case events.RunFailed:
				get(e.RunID).outcomes = append(get(e.RunID).outcomes, r.Type)
			case events.RunDropped:
				get(e.RunID).outcomes = append(get(e.RunID).outcomes, r.Type)
			case events.RunForcedEnd:
				get(e.RunID).outcomes = append(get(e.RunID).outcomes, r.Type+"("+e.Reason+")")
			}
		}
	}
}

// TestRunsEndAfterAStoreOutage: while the store is away, starts and
// outcomes of runs fail to be recorded; once it is back, without a
// restart, every run enqueued has exactly one outcome and none started
// twice. With the store down (nothing written), a run whose handler
// completed is recorded completed — its kept outcome, not a forced end at
// its deadline. With answers lost (written, answered with an error), the
// actor learns what landed and still ends every run once.
func TestRunsEndAfterAStoreOutage(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mode      outage
		noForced  bool
		mustFail  []string // event types whose appends the outage must have failed
		outageFor time.Duration
		// err is what the store fails with (errServerGone when nil); an
		// error that is not a condition of the store's (ErrUnwritable) is
		// logged at ERROR by the decisions it fails — ticks — but not by
		// the workers for a start or an outcome the task actor keeps.
		err error
	}{
		{"down", storeDown, true, []string{"RunStarted", "RunCompleted", "RunEnqueued"}, 7 * time.Second, nil},
		{"answers lost", answersLost, false, []string{"RunStarted", "RunCompleted", "RunEnqueued"}, 7 * time.Second, nil},
		// Back before the deadlines of runs whose completion it refused,
		// and before the actors' next read: a deadline must not force
		// such a run to end.
		{"short", storeDown, true, []string{"RunCompleted"}, 2200 * time.Millisecond, nil},
		{"another error", storeDown, true, []string{"RunStarted", "RunCompleted", "RunEnqueued"}, 7 * time.Second,
			errors.New("store: the network is down")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewVirtual(t0)
			st := &outageStore{Store: memStore(t), err: tc.err}
			logs := &lockedBuffer{}
			s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: time.Second, Workers: 2,
				Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			if err != nil {
				t.Fatal(err)
			}
			// A run takes 2 s: with 8 tasks and 2 workers runs wait in the
			// queue, so the outage meets starts as well as outcomes.
			work := worker.HandlerFunc(func(ctx context.Context, run *worker.Run) (json.RawMessage, error) {
				return nil, clock.Sleep(ctx, clk, 2*time.Second)
			})
			if err := s.Register("work", work); err != nil {
				t.Fatal(err)
			}
			if err := s.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer stopNow(s)
			var ids []uuid.UUID
			for i := range 8 {
				task, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: fmt.Sprintf("t%d", i), Owner: "o", Kind: "work",
					Interval: 5 * time.Second, Tolerance: time.Second, Timebox: 4 * time.Second, FirstRun: t0.Add(time.Duration(i) * 700 * time.Millisecond)})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, task.ID)
			}
			clk.RunUntil(t0.Add(20*time.Second + 300*time.Millisecond))
			st.mode.Store(int32(tc.mode))
			clk.RunUntil(clk.Now().Add(tc.outageFor))
			st.mode.Store(int32(storeUp))
			clk.RunUntil(clk.Now().Add(60 * time.Second))
			for _, typ := range tc.mustFail {
				if st.failures(typ) == 0 {
					t.Fatalf("the outage failed no append of %s: the test does not test what it says", typ)
				}
			}
			// Pause every task, so that no run is enqueued any more, and let
			// those open end.
			for _, id := range ids {
				if _, err := s.PauseTask(context.Background(), id); err != nil {
					t.Fatal(err)
				}
			}
			clk.RunUntil(clk.Now().Add(30 * time.Second))

			runs := ledger(t, st.Store)
			var bad []string
			outcomes := map[string]int{}
			for id, r := range runs {
				for _, o := range r.outcomes {
					outcomes[o]++
				}
				switch {
				case r.enqueued != 1:
					bad = append(bad, fmt.Sprintf("run %s enqueued %d times", id, r.enqueued))
				case r.started > 1:
					bad = append(bad, fmt.Sprintf("run %s started %d times", id, r.started))
				case len(r.outcomes) != 1:
					bad = append(bad, fmt.Sprintf("run %s (started %d) has %d outcomes %v", id, r.started, len(r.outcomes), r.outcomes))
				case tc.noForced && strings.HasPrefix(r.outcomes[0], "RunForcedEnd"):
					bad = append(bad, fmt.Sprintf("run %s: %s, though its handler returns in 2 s of a 4 s timebox", id, r.outcomes[0]))
				}
			}
			// Each run kept is logged at WARN once (its start, then its
			// outcome); no ERROR: the store's outage is the store's to log
			// (but for the ticks another error fails).
			l := logs.take()
			seen := map[string]int{}
			for _, line := range strings.Split(l, "\n") {
				if strings.Contains(line, "level=ERROR") && (tc.err == nil || !strings.Contains(line, `msg="tick failed"`)) {
					bad = append(bad, "logged: "+line)
				}
				if !strings.Contains(line, "level=WARN") || !strings.Contains(line, "not recorded") {
					continue
				}
				msg, _, _ := strings.Cut(line, " task_id=")
				_, run, _ := strings.Cut(line, " run_id=")
				run, _, _ = strings.Cut(run, " ")
				msg = msg[strings.Index(msg, "msg="):]
				if seen[msg+run]++; seen[msg+run] == 2 {
					bad = append(bad, fmt.Sprintf("run %s logged more than once: %s", run, msg))
				}
			}
			if len(seen) == 0 {
				bad = append(bad, "nothing kept was logged")
			}
			sort.Strings(bad)
			t.Logf("%d runs; outcomes %v", len(runs), outcomes)
			if len(bad) > 0 {
				t.Logf("%s", l)
				t.Fatalf("%d of %d runs wrong after the store came back:\n%s", len(bad), len(runs), strings.Join(bad, "\n"))
			}
		})
	}
}
