package scheduler_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// runTrail is a task's stream from version from as "mm:ss Type run" lines,
// without its TaskCompacted events: what the task did, whatever was
// removed of its history.
func runTrail(t *testing.T, st events.Store, id uuid.UUID, since time.Time) string {
	t.Helper()
	recs, err := st.ReadStream(context.Background(), events.TaskStream(id), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range recs {
		if r.Type == "TaskCompacted" || r.At.Before(since) {
			continue
		}
		ev, err := events.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		run := 0
		switch e := ev.(type) {
		case events.RunEnqueued:
			run = e.Run
		case events.RunStarted:
			run = e.Run
		case events.RunCompleted:
			run = e.Run
		case events.CheckpointSaved:
			run = e.Run
		}
		fmt.Fprintf(&b, "%s %s %d\n", mmss(r.At), r.Type, run)
	}
	return b.String()
}

// TestRetentionKeepsTaskRunning: two tasks on the same schedule, one with
// a history retention of 10 minutes, run for an hour on the virtual clock
// (the scheduler restarted halfway, from the whole log, with no
// snapshots). The old events of the one with retention leave its stream
// and the global log, each behind a TaskCompacted, and it goes on exactly
// as the other: the same events at the same instants, the same state.
func TestRetentionKeepsTaskRunning(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := memStore(t)
	ctx := context.Background()
	const retention = 10 * time.Minute
	start := func() *scheduler.Scheduler {
		s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: 10 * time.Second, SnapshotEvery: -1})
		if err != nil {
			t.Fatal(err)
		}
		s.Register("noop", sleeper(clk, 5*time.Second))
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := start()
	spec := scheduler.TaskSpec{Owner: "o", Kind: "noop", Interval: time.Minute, FirstRun: t0.Add(time.Minute)}
	kept, retained := spec, spec
	kept.Name, retained.Name, retained.HistoryRetention = "kept", "retained", retention
	a, _, err := s.CreateTask(ctx, kept)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := s.CreateTask(ctx, retained)
	if err != nil {
		t.Fatal(err)
	}
	if b.HistoryRetention != retention || a.HistoryRetention != 0 {
		t.Fatalf("retentions %s and %s", a.HistoryRetention, b.HistoryRetention)
	}
	clk.RunUntil(t0.Add(30 * time.Minute))
	stopNow(s)
	s = start()
	defer stopNow(s)
	end := t0.Add(60 * time.Minute)
	clk.RunUntil(end)

	recs, err := st.ReadStream(ctx, events.TaskStream(b.ID), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Type != "TaskCompacted" || recs[0].Version == 0 {
		t.Fatalf("the retained stream begins with %s at version %d", recs[0].Type, recs[0].Version)
	}
	// Kept at least the retention, removed by about twice it.
	if first := recs[1].At; first.Before(end.Add(-2*retention-2*time.Minute)) || first.After(end.Add(-retention)) {
		t.Fatalf("the oldest event kept was decided at %s (the end is %s, retention %s)", mmss(first), mmss(end), retention)
	}
	all, err := st.ReadAll(ctx, events.Start, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		if r.Stream == events.TaskStream(b.ID) && r.Version < recs[0].Version {
			t.Fatalf("the global log still holds version %d of the retained task", r.Version)
		}
	}
	whole, err := st.ReadStream(ctx, events.TaskStream(a.ID), 0, 0)
	if err != nil || whole[0].Version != 0 || whole[0].Type != "TaskCreated" {
		t.Fatalf("the task without retention lost its start: %v", err)
	}
	// The same events at the same instants as far back as the retained
	// stream goes, and the same state.
	since := recs[1].At
	ta, tb := runTrail(t, st, a.ID, since), runTrail(t, st, b.ID, since)
	if !strings.HasSuffix(ta, tb) || strings.Count(tb, "RunCompleted") < 5 {
		t.Fatalf("the trails differ:\nwithout retention:\n%s\nwith:\n%s", ta, tb)
	}
	ga, err := s.Task(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := s.Task(ctx, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ga.Runs != gb.Runs || ga.Runs < 55 || !ga.NextRun.Equal(gb.NextRun) || !ga.LastRun.Equal(gb.LastRun) || ga.Status != gb.Status ||
		string(ga.Checkpoint) != string(gb.Checkpoint) || ga.Waiting != gb.Waiting || ga.Running != gb.Running {
		t.Fatalf("states differ:\nwithout retention %+v\nwith %+v", ga, gb)
	}
}
