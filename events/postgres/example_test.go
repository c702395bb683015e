package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/postgres"
	"github.com/cronactor/cronactor/events/postgres/pgtest"
)

// A task's events on PostgreSQL: append with optimistic concurrency, read
// the stream back, and follow the global log. A throwaway database of the
// test server stands in here; in production the URL names your database,
// e.g. "postgres://cronactor:secret@db1:5432/cronactor?sslmode=verify-full".
func Example() {
	url, drop, err := pgtest.Database()
	if err != nil {
		panic(err)
	}
	defer drop()

	ctx := context.Background()
	store, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		panic(err)
	}
	defer store.Close()

	taskID := uuid.MustParse("0b6f5b8e-8f1e-4c3a-9d62-3f0f6f2b7a10")
	stream := events.TaskStream(taskID)
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	created, err := events.Propose(events.TaskCreated{
		TaskID: taskID, Name: "poll", Owner: "channel/pop3/42", Kind: "noop",
		Schedule:  events.Schedule{Interval: events.Duration(time.Minute)},
		Tolerance: events.Duration(5 * time.Second), Timebox: events.Duration(30 * time.Second),
		NextRun: at.Add(30 * time.Second),
	}, events.ContentID(stream, events.NoStream, 0, "TaskCreated", nil), at)
	if err != nil {
		panic(err)
	}
	res, err := store.Append(ctx, stream, events.NoStream, created)
	if err != nil {
		panic(err)
	}
	fmt.Println("appended version", res.Version, "at position", res.Position)

	// A second writer that also thinks the stream is new loses.
	paused, _ := events.Propose(events.TaskPaused{}, uuid.Nil, at.Add(time.Minute))
	_, err = store.Append(ctx, stream, events.NoStream, paused)
	fmt.Println("second writer:", errors.Is(err, events.ErrVersionConflict))

	recs, err := store.ReadStream(ctx, stream, 0, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(recs[0].Type, recs[0].At.Format(time.RFC3339))

	// Followers read the global log from a position, then wait for more.
	sub, cancel := context.WithCancel(ctx)
	_ = store.Subscribe(sub, events.Start, func(r events.Recorded) error {
		fmt.Println("followed", r.Position, r.Type)
		cancel()
		return nil
	})
	// Output:
	// appended version 0 at position 1
	// second writer: true
	// TaskCreated 2026-03-01T00:00:00Z
	// followed 1 TaskCreated
}
