package main_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/scheduler/pgtx"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// A service creates a task in its own transaction on the daemon's
// database (pgtx), from another process: the running daemon runs it
// without a restart. A rolled-back one never appears.
func TestDaemonRunsATaskCreatedInATransaction(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test builds and runs the daemon")
	}
	url := pgtest.URL(t)
	bin := buildBinary(t)
	d := startDaemonOn(t, bin, freeAddr(t), "--store", "postgres", "--postgres", url)
	waitReady(t, d)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	create := func(name string, commit bool) scheduler.Task {
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		task, created, err := pgtx.Writer{}.CreateTask(ctx, tx, scheduler.TaskSpec{Owner: "svc", Name: name, Kind: "noop",
			Schedule: scheduler.Every(time.Second)})
		if err != nil || !created {
			t.Fatalf("create %s: %v (created %v)", name, err, created)
		}
		if commit {
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return task
	}
	gone := create("rolled-back", false)
	task := create("committed", true)
	waitFor(t, 30*time.Second, "runs of the task created in a transaction\n"+d.logs.String(), func() bool {
		var got crontasks.Task
		return d.call("GET", "/v1/tasks/"+task.ID.String(), nil, &got) == 200 && got.CompletedCount >= 2
	})
	if code := d.call("GET", "/v1/tasks/"+gone.ID.String(), nil, nil); code != 404 {
		t.Fatalf("the rolled-back task: %d", code)
	}
}
