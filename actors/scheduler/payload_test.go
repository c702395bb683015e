package scheduler_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/scheduler/schedulertest"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events"
)

// A handler that implements worker.PayloadValidator checks every payload of
// its kind that a create or an update would record; what it refuses is not
// recorded, and an update that leaves the payload alone is not checked.
func TestPayloadIsCheckedByTheKindsHandler(t *testing.T) {
	noop := worker.HandlerFunc(func(context.Context, *worker.Run) (json.RawMessage, error) { return nil, nil })
	var checks atomic.Int32
	h := schedulertest.New(t,
		schedulertest.WithHandler("counted", worker.WithPayloadCheck(noop, func(p json.RawMessage) error {
			checks.Add(1)
			var v struct{ N int }
			if json.Unmarshal(p, &v) != nil || v.N <= 0 {
				return &scheduler.FieldError{Field: "payload.n", Message: "must be positive"}
			}
			return nil
		})),
		schedulertest.WithHandler("plain", worker.WithPayloadCheck(noop, func(json.RawMessage) error { return errors.New("not for me") })),
		schedulertest.WithHandler("panicky", worker.WithPayloadCheck(noop, func(json.RawMessage) error { panic("boom") })),
		schedulertest.WithHandler("unchecked", noop))
	s, store := h.Scheduler(), h.Store().(events.HeadReader)
	ctx := context.Background()
	spec := func(kind, payload string) scheduler.TaskSpec {
		return scheduler.TaskSpec{Name: kind, Owner: "o", Kind: kind, Interval: time.Minute, Payload: json.RawMessage(payload)}
	}
	refused := func(what string, call func() error, field, msg string) {
		t.Helper()
		before := store.Head()
		err := call()
		var fe *scheduler.FieldError
		if !errors.As(err, &fe) || fe.Field != field || !strings.Contains(fe.Message, msg) {
			t.Fatalf("%s: %v, want a %s error with %q", what, err, field, msg)
		}
		if after := store.Head(); after != before {
			t.Fatalf("%s: refused, but the store's head moved %v → %v", what, before, after)
		}
	}
	create := func(kind, payload string) func() error {
		return func() error { _, _, err := s.CreateTask(ctx, spec(kind, payload)); return err }
	}
	refused("create counted", create("counted", `{"n":0}`), "payload.n", "must be positive")
	refused("create plain", create("plain", `{}`), "payload", "not for me")
	refused("create panicky", create("panicky", `{}`), "payload", "panicked")

	task, created, err := s.CreateTask(ctx, spec("counted", `{"n":1}`))
	if err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	refused("update", func() error {
		_, err := s.UpdateTask(ctx, task.ID, scheduler.TaskUpdate{Payload: json.RawMessage(`{"n":-1}`)})
		return err
	}, "payload.n", "must be positive")
	n := checks.Load()
	p := 3
	if _, err := s.UpdateTask(ctx, task.ID, scheduler.TaskUpdate{Priority: &p}); err != nil {
		t.Fatal(err)
	}
	if checks.Load() != n {
		t.Fatal("an update that keeps the payload checked it")
	}
	if _, err := s.UpdateTask(ctx, task.ID, scheduler.TaskUpdate{Payload: json.RawMessage(`{"n":2}`)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateTask(ctx, spec("unchecked", `{"anything":true}`)); err != nil {
		t.Fatalf("a handler without a check: %v", err)
	}
}
