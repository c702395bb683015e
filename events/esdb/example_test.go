package esdb_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/esdb"
	"github.com/cronactor/cronactor/events/esdb/esdbtestserver"
)

// A task's events on EventStoreDB: append with optimistic concurrency, read
// the stream back, and follow the global log. The in-process test server
// stands in for EventStoreDB here; in production the URL names a real
// server, e.g. "esdb://admin:changeit@db1:2113?tlsCAFile=/etc/esdb/ca.crt".
func Example() {
	srv, err := esdbtestserver.New()
	if err != nil {
		panic(err)
	}
	if err := srv.Start(); err != nil {
		panic(err)
	}
	defer srv.Stop()

	ctx := context.Background()
	store, err := esdb.Open(ctx, srv.URL(), esdb.Options{})
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
	fmt.Println("appended version", res.Version)

	paused, _ := events.Propose(events.TaskPaused{}, uuid.Nil, at.Add(time.Minute))
	_, err = store.Append(ctx, stream, events.NoStream, paused)
	fmt.Println("second writer:", errors.Is(err, events.ErrVersionConflict))

	recs, err := store.ReadStream(ctx, stream, 0, 0)
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		fmt.Println(r.Version, r.Type, r.Schema, r.At.Format(time.RFC3339))
	}

	sub, cancel := context.WithCancel(ctx)
	_ = store.Subscribe(sub, events.Start, func(r events.Recorded) error {
		fmt.Println("global log:", r.Stream == stream, r.Type)
		cancel()
		return nil
	})
	// Output:
	// appended version 0
	// second writer: true
	// 0 TaskCreated 1 2026-03-01T00:00:00Z
	// global log: true TaskCreated
}
