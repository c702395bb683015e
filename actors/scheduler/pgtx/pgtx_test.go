package pgtx_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/scheduler/pgtx"
	"github.com/cronactor/cronactor/actors/scheduler/schedulertest"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/postgres"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rig is a running scheduler on a virtual clock and a Postgres store, and
// the embedder's own pool on the same database.
type rig struct {
	h     *schedulertest.Harness
	store *postgres.Store
	pool  *pgxpool.Pool
	w     pgtx.Writer
}

func newRig(t *testing.T) *rig {
	t.Helper()
	url := pgtest.URL(t)
	ctx := ctxFor(t)
	store, err := postgres.Open(ctx, url, postgres.Options{PollInterval: 50 * time.Millisecond, MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(ctx, `CREATE TABLE invoices (id text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	noop := worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) { return nil, nil })
	h := schedulertest.New(t, schedulertest.WithStore(store), schedulertest.WithHandler("report", noop),
		schedulertest.WithConfig(scheduler.Config{SnapshotEvery: -1}))
	return &rig{h: h, store: store, pool: pool, w: pgtx.Writer{Scheduler: h.Scheduler(), Clock: h.Clock()}}
}

// inTx runs fn in a transaction of the embedder's pool, with a business
// row written first as a service would, and commits unless rollback.
func (r *rig) inTx(t *testing.T, rollback bool, fn func(tx pgx.Tx) error) error {
	t.Helper()
	ctx := ctxFor(t)
	tx, err := r.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `INSERT INTO invoices (id) VALUES (gen_random_uuid()::text)`); err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		return err
	}
	if rollback {
		return tx.Rollback(ctx)
	}
	return tx.Commit(ctx)
}

func spec(name string) scheduler.TaskSpec {
	return scheduler.TaskSpec{Owner: "customer/42", Name: name, Kind: "report",
		Schedule: scheduler.Every(time.Minute), Payload: json.RawMessage(`{"ledger":"eu"}`)}
}

func (r *rig) follow(t *testing.T, pos events.Position) {
	t.Helper()
	if err := r.h.Scheduler().WaitFollowed(ctxFor(t), pos); err != nil {
		t.Fatal(err)
	}
}

func TestRolledBackCreateLeavesNoTask(t *testing.T) {
	r := newRig(t)
	var task scheduler.Task
	err := r.inTx(t, true, func(tx pgx.Tx) error {
		var created bool
		var err error
		task, created, err = r.w.CreateTask(ctxFor(t), tx, spec("monthly"))
		if err == nil && !created {
			t.Errorf("created false for a new task")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.ReadStream(ctxFor(t), events.TaskStream(task.ID), 0, 0); !errors.Is(err, events.ErrStreamNotFound) {
		t.Fatalf("stream after rollback: %v", err)
	}
	// A committed transaction after it: once the scheduler has followed
	// past it, it has seen everything the rolled-back one could have left.
	var other scheduler.Task
	if err := r.inTx(t, false, func(tx pgx.Tx) error {
		var err error
		other, _, err = r.w.CreateTask(ctxFor(t), tx, spec("other"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r.follow(t, other.Position)
	r.h.Advance(3 * time.Minute)
	if _, err := r.h.Scheduler().Task(ctxFor(t), task.ID); !errors.Is(err, scheduler.ErrTaskNotFound) {
		t.Fatalf("task after rollback: %v", err)
	}
	if runs := r.h.Runs(task.ID); len(runs) != 0 {
		t.Fatalf("runs of a rolled-back task: %+v", runs)
	}
	if tasks, _ := r.h.Scheduler().Tasks(ctxFor(t)); len(tasks) != 1 || tasks[0].ID != other.ID {
		t.Fatalf("tasks: %+v", tasks)
	}
}

func TestCommittedCreateRunsWithoutRestart(t *testing.T) {
	r := newRig(t)
	var task scheduler.Task
	if err := r.inTx(t, false, func(tx pgx.Tx) error {
		var err error
		task, _, err = r.w.CreateTask(ctxFor(t), tx, spec("monthly"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if task.Position.IsZero() || task.Version != 0 {
		t.Fatalf("task as created: %+v", task)
	}
	r.follow(t, task.Position)
	r.h.Advance(3*time.Minute + time.Second)
	runs := r.h.Runs(task.ID)
	if len(runs) != 3 || runs[2].Outcome != "completed" {
		t.Fatalf("runs: %+v", runs)
	}
	if tasks, _ := r.h.Scheduler().Tasks(ctxFor(t)); len(tasks) != 1 {
		t.Fatalf("tasks (the owners' index): %+v", tasks)
	}
}

func TestUpdateAndDeleteInTx(t *testing.T) {
	r := newRig(t)
	task := r.h.Create(spec("daily")) // by the scheduler itself: it rests as a record
	r.h.Advance(time.Minute + time.Second)
	if n := len(r.h.Runs(task.ID)); n != 1 {
		t.Fatalf("runs before the update: %d", n)
	}
	// Every 10 minutes, the next run in 30 s: earlier than the 2 min the
	// due-time index holds for the task.
	var updated scheduler.Task
	every := scheduler.Every(10 * time.Minute)
	next := r.h.Now().Add(30 * time.Second)
	if err := r.inTx(t, false, func(tx pgx.Tx) error {
		var err error
		updated, err = r.w.UpdateTask(ctxFor(t), tx, task.ID, scheduler.TaskUpdate{Schedule: &every, NextRun: &next})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r.follow(t, updated.Position)
	got, err := r.h.Scheduler().Task(ctxFor(t), task.ID)
	if err != nil || got.Interval != 10*time.Minute || got.Version != updated.Version {
		t.Fatalf("after the update: %+v, %v (tx said version %d)", got, err, updated.Version)
	}
	r.h.Advance(9 * time.Minute) // the old schedule would have run 9 more times
	runs := r.h.Runs(task.ID)
	if len(runs) != 2 || !runs[1].EnqueuedAt.Equal(next) {
		t.Fatalf("runs after the update: %+v, want the second enqueued at %s", runs, next)
	}
	r.h.Advance(2 * time.Minute)
	if n := len(r.h.Runs(task.ID)); n != 3 {
		t.Fatalf("runs on the new schedule: %d, want 3", n)
	}

	var deleted scheduler.Task
	if err := r.inTx(t, false, func(tx pgx.Tx) error {
		var err error
		deleted, err = r.w.DeleteTask(ctxFor(t), tx, task.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r.follow(t, deleted.Position)
	r.h.Advance(time.Hour)
	if n := len(r.h.Runs(task.ID)); n != 3 {
		t.Fatalf("runs after the delete: %d, want 3", n)
	}
	if tasks, _ := r.h.Scheduler().Tasks(ctxFor(t)); len(tasks) != 0 {
		t.Fatalf("tasks after the delete: %+v", tasks)
	}
	if got, _ := r.h.Scheduler().Task(ctxFor(t), task.ID); got.Status != "deleted" {
		t.Fatalf("status after the delete: %q", got.Status)
	}
}

func TestConflictingSpecFailsAndRollsBack(t *testing.T) {
	r := newRig(t)
	var first scheduler.Task
	if err := r.inTx(t, false, func(tx pgx.Tx) error {
		var err error
		first, _, err = r.w.CreateTask(ctxFor(t), tx, spec("monthly"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	other := spec("monthly")
	other.Payload = json.RawMessage(`{"ledger":"us"}`)
	err := r.inTx(t, false, func(tx pgx.Tx) error {
		_, _, err := r.w.CreateTask(ctxFor(t), tx, other)
		return err
	})
	if !errors.Is(err, scheduler.ErrSpecConflict) {
		t.Fatalf("another spec: %v", err)
	}
	// The same spec again (its payload written otherwise): the same task.
	same := spec("monthly")
	same.Payload = json.RawMessage(`{ "ledger" : "eu" }`)
	if err := r.inTx(t, false, func(tx pgx.Tx) error {
		task, created, err := r.w.CreateTask(ctxFor(t), tx, same)
		if err == nil && (created || task.ID != first.ID || task.Version != 0) {
			t.Errorf("the same spec again: created %v, %+v", created, task)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	recs, err := r.store.ReadStream(ctxFor(t), events.TaskStream(first.ID), 0, 0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("stream: %d events, %v", len(recs), err)
	}
}

// Transactions of four goroutines create tasks while the scheduler works
// its own: a follower of the log reads positions 1, 2, 3… without a gap,
// and the scheduler takes in every task the transactions made.
func TestConcurrentTxsKeepTheOrder(t *testing.T) {
	r := newRig(t)
	own := r.h.Create(spec("own"))
	const writers, each = 4, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				err := r.inTx(t, false, func(tx pgx.Tx) error {
					_, _, err := r.w.CreateTask(ctxFor(t), tx, spec(fmt.Sprintf("w%d-%d", g, i)))
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	// The scheduler appends meanwhile: its own task runs every minute.
	for range 5 {
		r.h.Advance(time.Minute)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// The log's head as the database has it: the store's Head() learns of
	// the transactions' appends only through their notifications, which
	// may still be on their way.
	var last uint64
	if err := r.pool.QueryRow(ctxFor(t), `SELECT position FROM cronactor_head WHERE id = 1`).Scan(&last); err != nil {
		t.Fatal(err)
	}
	head := events.Position{Commit: last, Prepare: last}
	r.follow(t, head)
	ctx, cancel := context.WithCancel(ctxFor(t))
	var next uint64 = 1
	err := r.store.Subscribe(ctx, events.Start, func(rec events.Recorded) error {
		if rec.Position.Commit != next {
			return fmt.Errorf("position %d after %d", rec.Position.Commit, next-1)
		}
		if next == head.Commit {
			cancel()
		}
		next++
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	tasks, err := r.h.Scheduler().Tasks(ctxFor(t))
	if err != nil || len(tasks) != writers*each+1 {
		t.Fatalf("tasks the scheduler knows: %d, %v", len(tasks), err)
	}
	if n := len(r.h.Runs(own.ID)); n != 5 {
		t.Fatalf("runs of its own task: %d", n)
	}
}

// A task with an actor in memory (pinned here, as an embedder's actor
// would; a task with an open run has one too): the update of a transaction
// reaches that actor (task.Refresh), not only a resting task's record.
func TestUpdateReachesALiveActor(t *testing.T) {
	r := newRig(t)
	task := r.h.Create(spec("pinned"))
	if _, err := r.h.Scheduler().TaskPID(ctxFor(t), task.ID); err != nil {
		t.Fatal(err)
	}
	var updated scheduler.Task
	if err := r.inTx(t, false, func(tx pgx.Tx) error {
		var err error
		updated, err = r.w.UpdateTask(ctxFor(t), tx, task.ID, scheduler.TaskUpdate{Payload: json.RawMessage(`{"ledger":"us"}`)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	r.follow(t, updated.Position)
	got, err := r.h.Scheduler().Task(ctxFor(t), task.ID)
	if err != nil || string(got.Payload) != `{"ledger":"us"}` || got.Version != updated.Version {
		t.Fatalf("the live actor after the update: %s at version %d, %v (tx said %d)", got.Payload, got.Version, err, updated.Version)
	}
}
