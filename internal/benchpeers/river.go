package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// riverLabel says what River's figure is: unlike the in-memory peers, River
// records every job and its completion in Postgres before it says so.
const riverLabel = "durable, on the same Postgres"

// riverOptions configure the River peer: the database it runs in and the
// settings of its client (docs/decisions/0024-river-peer.md says why
// these).
type riverOptions struct {
	// url is the Postgres database; River gets a schema of its own there,
	// created for the run and dropped after it.
	url string
	// workers is the default queue's MaxWorkers.
	workers int
	// poll is the client's FetchPollInterval: how soon a worker looks for
	// jobs that fell due when nothing notified it (a scheduled job's due
	// time notifies nobody), the counterpart of our tick.
	poll time.Duration
	// cooldown is the client's FetchCooldown: the least time between two
	// fetches, which bounds River's rate at workers/cooldown.
	cooldown time.Duration
	// counted, when set, is told how many of the wave's jobs River's table
	// holds as completed once the wave is over (tests).
	counted func(n int)
}

// riverArgs is the no-op job: i is its index in the wave.
type riverArgs struct {
	I int `json:"i"`
}

func (riverArgs) Kind() string { return "cronactor_bench_noop" }

// riverMargin is how far ahead of the start the wave is due: River's
// schema is migrated, its client started and every job inserted first.
func riverMargin(n int) time.Duration { return 5*time.Second + time.Duration(n)*100*time.Microsecond }

// runRiver gives River w.n no-op jobs scheduled at w.due in a schema of
// its own and counts a job done when River reports it completed, which it
// does after the completion is written to the database.
func runRiver(o riverOptions) func(ctx context.Context, w *wave) error {
	return func(ctx context.Context, w *wave) error {
		pool, err := pgxpool.New(ctx, o.url)
		if err != nil {
			return fmt.Errorf("river: connect: %w", err)
		}
		defer pool.Close()
		schema, err := newSchema(ctx, pool)
		if err != nil {
			return err
		}
		defer func() {
			// The run's schema goes, whatever happened (a fresh context: ctx
			// may be the cancelled one).
			dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, _ = pool.Exec(dctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		}()
		quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
		driver := riverpgxv5.New(pool)
		m, err := rivermigrate.New(driver, &rivermigrate.Config{Schema: schema, Logger: quiet})
		if err != nil {
			return fmt.Errorf("river: migrator: %w", err)
		}
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("river: migrate: %w", err)
		}

		workers := river.NewWorkers()
		river.AddWorker(workers, river.WorkFunc(func(_ context.Context, j *river.Job[riverArgs]) error {
			if j.Args.I < 0 || j.Args.I >= w.n {
				return fmt.Errorf("job index %d out of range", j.Args.I)
			}
			w.ran(j.Args.I)
			return nil
		}))
		client, err := river.NewClient(driver, &river.Config{
			Schema:            schema,
			Logger:            quiet,
			Workers:           workers,
			Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: o.workers}},
			FetchPollInterval: o.poll,
			FetchCooldown:     o.cooldown,
		})
		if err != nil {
			return fmt.Errorf("river: client: %w", err)
		}
		// A subscription drops events it cannot buffer: room for all of them.
		completed, cancelSub := client.SubscribeConfig(&river.SubscribeConfig{
			Kinds: []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed}, ChanSize: w.n + 1})
		defer cancelSub()
		if err := client.Start(ctx); err != nil {
			return fmt.Errorf("river: start: %w", err)
		}
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = client.Stop(sctx)
		}()

		// All scheduled at the due instant, inserted in batches over COPY
		// (InsertManyFast: River's fastest insert; its time is setup).
		const batch = 10000
		params := make([]river.InsertManyParams, 0, min(batch, w.n))
		for i := 0; i < w.n; i += batch {
			params = params[:0]
			for j := i; j < min(i+batch, w.n); j++ {
				params = append(params, river.InsertManyParams{Args: riverArgs{I: j},
					InsertOpts: &river.InsertOpts{ScheduledAt: w.due}})
			}
			if _, err := client.InsertManyFast(ctx, params); err != nil {
				return fmt.Errorf("river: insert: %w", err)
			}
		}
		w.ready()

		for done := 0; done < w.n; {
			select {
			case ev := <-completed:
				if ev.Kind != river.EventKindJobCompleted {
					return fmt.Errorf("river: job %d: %s", ev.Job.ID, ev.Kind)
				}
				done++
				if done == w.n {
					w.completed(time.Now())
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		// What River recorded, not only what it reported.
		var recorded int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema, "river_job"}.Sanitize()+
			" WHERE state = 'completed' AND finalized_at IS NOT NULL").Scan(&recorded); err != nil {
			return fmt.Errorf("river: count completed jobs: %w", err)
		}
		if o.counted != nil {
			o.counted(recorded)
		}
		if recorded != w.n {
			return fmt.Errorf("river: %d of %d jobs recorded completed", recorded, w.n)
		}
		return nil
	}
}

// newSchema creates a schema of this run's own for River.
func newSchema(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	name := "cronactor_bench_river_" + hex.EncodeToString(b[:])
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("river: create schema %s: %w", name, err)
	}
	return name, nil
}
