package scheduler_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/scheduler/schedulertest"
	"github.com/cronactor/cronactor/events"
)

// The Decide… functions decide as the task's actor does, against the
// stream they are given.
func TestDecideAgainstAStream(t *testing.T) {
	h := schedulertest.New(t, schedulertest.WithHandler("report", schedulertest.Script()))
	s := h.Scheduler()
	ctx := context.Background()
	spec := scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "report", Schedule: scheduler.Every(time.Minute),
		Payload: json.RawMessage(`{"a":1}`)}
	read := func(id [16]byte) []events.Recorded {
		recs, err := h.Store().ReadStream(ctx, events.TaskStream(id), 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}

	// A new task: a TaskCreated on no stream.
	d, err := scheduler.DecideCreate(s, nil, spec, h.Now())
	if err != nil || !d.Created || len(d.Events) != 1 || d.Events[0].Type != "TaskCreated" || !d.Expected.IsNoStream() {
		t.Fatalf("new: %+v, %v", d, err)
	}
	if _, err := scheduler.DecideCreate(s, nil, scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "nope", Schedule: scheduler.Every(time.Minute)}, h.Now()); !errors.Is(err, scheduler.ErrInvalidSpec) {
		t.Fatalf("unknown kind: %v", err)
	}

	task := h.Create(spec)
	recs := read(task.ID)
	if d, err := scheduler.DecideCreate(s, recs, spec, h.Now()); err != nil || d.Created || len(d.Events) != 0 || d.Task.ID != task.ID {
		t.Fatalf("same spec: %+v, %v", d, err)
	}
	other := spec
	other.Kind = "other"
	if _, err := scheduler.DecideCreate(nil, recs, other, h.Now()); !errors.Is(err, scheduler.ErrSpecConflict) {
		t.Fatalf("another spec: %v", err)
	}

	// An update and a delete against the stream at version 0.
	p := 7
	d, err = scheduler.DecideUpdate(s, recs, task.ID, scheduler.TaskUpdate{Priority: &p}, h.Now())
	if err != nil || len(d.Events) != 1 || d.Expected != events.Exactly(0) || d.Task.Priority != 7 || d.Task.Version != 1 {
		t.Fatalf("update: %+v, %v", d, err)
	}
	if _, err := scheduler.DecideUpdate(s, recs, task.ID, scheduler.TaskUpdate{Priority: &p}, h.Now(), scheduler.IfVersion(3)); !errors.Is(err, scheduler.ErrVersionMismatch) {
		t.Fatalf("update at another version: %v", err)
	}
	if _, err := scheduler.DecideUpdate(s, nil, task.ID, scheduler.TaskUpdate{Priority: &p}, h.Now()); !errors.Is(err, scheduler.ErrTaskNotFound) {
		t.Fatalf("update of no task: %v", err)
	}
	if _, err := scheduler.DecideDelete(nil, task.ID, h.Now()); !errors.Is(err, scheduler.ErrTaskNotFound) {
		t.Fatalf("delete of no task: %v", err)
	}

	// Deleted, then created again: a new incarnation at the next version.
	if _, err := s.DeleteTask(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	recs = read(task.ID)
	d, err = scheduler.DecideCreate(s, recs, spec, h.Now())
	if err != nil || !d.Created || d.Expected != events.Exactly(recs[len(recs)-1].Version) || d.Task.Status != "active" {
		t.Fatalf("created again: %+v, %v", d, err)
	}
	if d, err := scheduler.DecideDelete(recs, task.ID, h.Now()); err != nil || len(d.Events) != 0 {
		t.Fatalf("delete of a deleted task: %+v, %v", d, err)
	}
}

// On the embedded store (one writer process) the scheduler does not follow
// its log.
func TestNoFollowingOnTheEmbeddedStore(t *testing.T) {
	h := schedulertest.New(t)
	if _, ok := h.Scheduler().Followed(); ok {
		t.Fatal("following the embedded store's log")
	}
	if err := h.Scheduler().WaitFollowed(context.Background(), events.Start); !errors.Is(err, scheduler.ErrNotFollowing) {
		t.Fatal(err)
	}
}
