package pgtx_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/scheduler/pgtx"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events/postgres"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
)

// A service signs a customer up and schedules the customer's monthly
// invoice in the same transaction: the task exists exactly when the
// customer's row does. The scheduler, running on the same database, picks
// the task up from the log. A throwaway database of the test server stands
// in for yours.
func Example() {
	url, drop, err := pgtest.Database()
	if err != nil {
		panic(err)
	}
	defer drop()
	ctx := context.Background()

	// The scheduler's side: the Postgres store, a running scheduler.
	store, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	clk := clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s, _ := scheduler.New(scheduler.Config{Store: store, Clock: clk}) // Follow: on by default on Postgres
	s.Register("invoice", worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) { return nil, nil }))
	if err := s.Start(ctx); err != nil {
		panic(err)
	}
	defer s.Stop(ctx)

	// The service's side: its own pool and tables.
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	pool.Exec(ctx, `CREATE TABLE customers (id text PRIMARY KEY, plan text NOT NULL)`)
	w := pgtx.Writer{Scheduler: s, Clock: clk}

	signUp := func(id, plan string, fail bool) (scheduler.Task, error) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			return scheduler.Task{}, err
		}
		defer tx.Rollback(ctx) // a no-op once committed
		if _, err := tx.Exec(ctx, `INSERT INTO customers (id, plan) VALUES ($1, $2)`, id, plan); err != nil {
			return scheduler.Task{}, err
		}
		// The task last, right before Commit (it takes the log's head row).
		task, _, err := w.CreateTask(ctx, tx, scheduler.TaskSpec{Owner: "customer/" + id, Name: "monthly-invoice", Kind: "invoice",
			Schedule: scheduler.Cron("0 6 1 * *"), Payload: json.RawMessage(`{"plan":"` + plan + `"}`)})
		if err != nil {
			return scheduler.Task{}, err
		}
		if fail {
			return scheduler.Task{}, errors.New("payment declined") // rolled back: no customer, no task
		}
		return task, tx.Commit(ctx)
	}

	task, err := signUp("42", "pro", false)
	if err != nil {
		panic(err)
	}
	// Read-your-writes on the scheduler: wait until it has followed the log
	// up to the task's position.
	if err := s.WaitFollowed(ctx, task.Position); err != nil {
		panic(err)
	}
	got, _ := s.Task(ctx, task.ID)
	fmt.Println("scheduled:", got.Owner, got.Name, "next run", got.NextRun.Format(time.RFC3339))

	_, err = signUp("43", "basic", true)
	fmt.Println("sign-up 43:", err)
	_, err = s.Task(ctx, scheduler.TaskID("customer/43", "monthly-invoice"))
	fmt.Println("task of 43:", errors.Is(err, scheduler.ErrTaskNotFound))
	// Output:
	// scheduled: customer/42 monthly-invoice next run 2026-01-01T06:00:00Z
	// sign-up 43: payment declined
	// task of 43: true
}
