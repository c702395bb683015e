package crontasks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// TestFreshTaskHasEveryContractField: the HTTP API's task object has every
// field of the published task object (id, name, owner, kind, payload,
// interval, tolerance, timebox, priority, status, next_run, last_run, the
// counts, checkpoint, created_at, updated_at) even before the task has a
// payload, a run or a checkpoint (those are null then, not absent).
func TestFreshTaskHasEveryContractField(t *testing.T) {
	store := memStore(t)
	id := uuid.MustParse("c0000000-0000-4000-8000-0000000000cc")
	p, err := events.Propose(events.TaskCreated{TaskID: id, Name: "fresh", Owner: "user/1", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Tolerance: events.Duration(5 * time.Second),
		Timebox: events.Duration(30 * time.Second), NextRun: t0.Add(time.Minute)}, uuid.Nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Append(context.Background(), events.TaskStream(id), events.NoStream, p); err != nil {
		t.Fatal(err)
	}
	v := openView(t, crontasks.Config{Store: store})
	if err := v.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	got, err := v.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got.Payload != nil || got.Checkpoint != nil {
		t.Errorf("a row read back carries payload %q checkpoint %q, want nil", got.Payload, got.Checkpoint)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"id", "name", "owner", "kind", "payload", "interval", "tolerance", "timebox", "priority", "status",
		"next_run", "last_run", "run_count", "completed_count", "dropped_count", "forced_count", "failed_count", "missed_count",
		"checkpoint", "created_at", "updated_at"} {
		if _, ok := m[field]; !ok {
			t.Errorf("a fresh task's JSON lacks %q: %s", field, b)
		}
	}
	for field, want := range map[string]string{"payload": "null", "checkpoint": "null", "last_run": "null",
		"interval": `"1m0s"`, "tolerance": `"5s"`, "next_run": `"2026-03-01T00:01:00Z"`, "status": `"active"`} {
		if string(m[field]) != want {
			t.Errorf("%s = %s, want %s", field, m[field], want)
		}
	}
}

// TestUpdateWithoutNextRunKeepsIt: TaskUpdated and TaskResumed may leave
// next_run unset (the schema does not require it); the row keeps the
// previous nextRun instead of becoming due at the zero time.
func TestUpdateWithoutNextRunKeepsIt(t *testing.T) {
	id := uuid.MustParse("c0000000-0000-4000-8000-0000000000cd")
	md := events.Metadata{Stream: events.TaskStream(id), At: t0}
	row, err := crontasks.Evolve(nil, md, events.TaskCreated{TaskID: id, Name: "n", Owner: "o", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Timebox: events.Duration(time.Second), NextRun: t0.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []events.Event{
		events.TaskUpdated{Schedule: events.Schedule{Interval: events.Duration(2 * time.Minute)}, Timebox: events.Duration(time.Second)},
		events.TaskPaused{}, events.TaskResumed{},
	} {
		md.Version++
		if row, err = crontasks.Evolve(row, md, ev); err != nil {
			t.Fatal(err)
		}
		if row.NextRun == nil || !row.NextRun.Equal(t0.Add(time.Minute)) {
			t.Fatalf("after %s next_run = %v, want %v", ev.EventType(), row.NextRun, t0.Add(time.Minute))
		}
	}
}

// TestByOwnerOrdersByName: an owner's tasks come by name (bytewise), then
// id, whatever the names' lengths or bytes; ByOwnerName matches exactly.
func TestByOwnerOrdersByName(t *testing.T) {
	store := memStore(t)
	names := []string{"b", "abc", "a\x00b", "ab", "a", "", "a\x00", "ab"}
	for i, name := range names {
		id := uuid.NewSHA1(uuid.NameSpaceOID, []byte{byte(i)})
		p, err := events.Propose(events.TaskCreated{TaskID: id, Name: name + "x", Owner: "o/1", Kind: "noop",
			Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Timebox: events.Duration(time.Second),
			NextRun: t0}, uuid.Nil, t0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Append(context.Background(), events.TaskStream(id), events.NoStream, p); err != nil {
			t.Fatal(err)
		}
	}
	v := openView(t, crontasks.Config{Store: store})
	if err := v.CatchUp(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	var prev *crontasks.Task
	cursor := ""
	for {
		page, err := v.ByOwner(context.Background(), "o/1", 3, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range page.Tasks {
			got = append(got, task.Name)
			if prev != nil && (prev.Name > task.Name || prev.Name == task.Name && bytes.Compare(prev.ID[:], task.ID[:]) > 0) {
				t.Errorf("%q (%s) before %q (%s)", prev.Name, prev.ID, task.Name, task.ID)
			}
			task := task
			prev = &task
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	if len(got) != len(names) {
		t.Fatalf("got %d tasks, want %d: %q", len(got), len(names), got)
	}
	for _, name := range []string{"abx", "ax", "a\x00bx"} {
		want := 0
		for _, n := range names {
			if n+"x" == name {
				want++
			}
		}
		tasks, err := v.ByOwnerName(context.Background(), "o/1", name)
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) != want {
			t.Errorf("ByOwnerName(%q) = %d tasks, want %d", name, len(tasks), want)
		}
		for _, task := range tasks {
			if task.Name != name {
				t.Errorf("ByOwnerName(%q) returned %q", name, task.Name)
			}
		}
	}
}
