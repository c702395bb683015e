package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/cockroachdb/pebble/vfs/errorfs"
	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/faultfs"
	"github.com/cronactor/cronactor/internal/httpapi"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// waitKeeper waits (at most 30 s, on the Keeper's signal) until ok holds
// for its status.
func waitKeeper(t *testing.T, k *crontasks.Keeper, what string, ok func(crontasks.Status) bool) crontasks.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		changed := k.Changed()
		if st := k.Status(); ok(st) {
			return st
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s: %+v", what, k.Status())
		}
	}
}

// runsIn counts the RunCompleted events of a task in the log.
func runsIn(t *testing.T, st events.Store, id uuid.UUID) int {
	t.Helper()
	recs, err := st.ReadStream(context.Background(), events.TaskStream(id), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r.Type == "RunCompleted" {
			n++
		}
	}
	return n
}

// TestViewFailingMidRunLeavesSchedulerDeciding: the view's disk starts
// failing every write while the daemon runs. The view's database gives up
// (on today's main that panic ended the process); here the scheduler keeps
// deciding and running, view queries answer 503 with the reason and
// Retry-After, a create still answers 201 with its row (read-your-writes
// does not wait for a view that is down), /healthz says degraded. Once the
// disk heals the view is rebuilt and answers 200 with everything the
// scheduler did meanwhile.
func TestViewFailingMidRunLeavesSchedulerDeciding(t *testing.T) {
	st := memStore(t)
	clk := clock.NewVirtual(t0)
	s := startScheduler(t, scheduler.Config{Store: st, Clock: clk, Tick: 30 * time.Second}, map[string]worker.Handler{"noop": kinds.Noop()})
	var failing atomic.Bool
	// faultfs, not errorfs alone: once Pebble reuses an old WAL file as its
	// new WAL, errorfs no longer sees the WAL's writes.
	fs := faultfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op, path string) error {
		if failing.Load() && op.OpKind() == errorfs.OpKindWrite {
			return &os.PathError{Op: "write", Path: path, Err: syscall.EIO}
		}
		return nil
	}))
	// Sync: a failed WAL write surfaces at the batch that made it (without it,
	// once Pebble fills a WAL block: later, the same way).
	k, err := crontasks.OpenKeeper(crontasks.Config{Store: st, Dir: "/data/view", FS: fs, Coalesce: -1, Sync: true,
		Archetype: archetype.Archetype{Clock: clk}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Keeper.Run: %v", err)
		}
		k.Close()
	})
	srv := listen(t, httpapi.New(httpapi.Config{Scheduler: s, Keeper: k, ViewConfig: crontasks.Config{Store: st}, Store: st}))

	a := call(t, srv, "POST", "/v1/tasks", `{"name":"a","owner":"o","kind":"noop","interval":"1m"}`)
	if a.code != 201 {
		t.Fatalf("create: %d %s", a.code, a.body)
	}
	var first crontasks.Task
	json.Unmarshal([]byte(a.body), &first)
	clk.RunUntil(clk.Now().Add(3 * time.Minute))
	before := runsIn(t, st, first.ID)
	if before == 0 {
		t.Fatal("no runs before the fault")
	}

	// The view's disk fails; the scheduler goes on deciding.
	failing.Store(true)
	clk.RunUntil(clk.Now().Add(3 * time.Minute))
	waitKeeper(t, k, "the view to go down", func(s crontasks.Status) bool { return s.State == crontasks.StateUnavailable })
	clk.RunUntil(clk.Now().Add(5 * time.Minute))
	if after := runsIn(t, st, first.ID); after < before+5 {
		t.Fatalf("the scheduler stopped with the view: %d runs before the fault, %d after", before, after)
	}

	for _, path := range []string{"/v1/tasks", "/v1/tasks/" + first.ID.String(), "/v1/tasks?as_of=1"} {
		got := call(t, srv, "GET", path, "")
		if got.code != 503 || got.field != "view" || !strings.Contains(got.body, "the cron_tasks view is unavailable") {
			t.Errorf("GET %s with the view down: %d %s", path, got.code, got.body)
		}
	}
	resp, err := srv.Client().Get(srv.URL + "/v1/tasks")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Retry-After") == "" {
		t.Error("a 503 without Retry-After")
	}
	made := call(t, srv, "POST", "/v1/tasks", `{"name":"b","owner":"o","kind":"noop","interval":"1m"}`)
	var second crontasks.Task
	json.Unmarshal([]byte(made.body), &second)
	if made.code != 201 || second.Name != "b" || second.Status != "active" || second.NextRun == nil {
		t.Fatalf("create with the view down: %d %s", made.code, made.body)
	}
	if h := call(t, srv, "GET", "/healthz", ""); h.code != 200 || !strings.Contains(h.body, `"status": "degraded"`) {
		t.Errorf("/healthz with the view down: %d %s", h.code, h.body)
	}

	// The disk heals: the next retry opens a fresh view and rebuilds it.
	failing.Store(false)
	clk.RunUntil(clk.Now().Add(2 * time.Minute))
	waitKeeper(t, k, "the rebuilt view", func(s crontasks.Status) bool { return s.State == crontasks.StateReady })
	v, err := k.View()
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	if err := v.WaitFor(wctx, st.Head()); err != nil {
		t.Fatal(err)
	}
	got := call(t, srv, "GET", "/v1/tasks/"+first.ID.String(), "")
	var row crontasks.Task
	json.Unmarshal([]byte(got.body), &row)
	if got.code != 200 || int(row.CompletedCount) != runsIn(t, st, first.ID) {
		t.Fatalf("after the rebuild: %d %s; the log has %d runs", got.code, got.body, runsIn(t, st, first.ID))
	}
	if list := call(t, srv, "GET", "/v1/tasks", ""); list.code != 200 || !strings.Contains(list.body, second.ID.String()) {
		t.Errorf("list after the rebuild: %d %s", list.code, list.body)
	}
	if h := call(t, srv, "GET", "/healthz", ""); !strings.Contains(h.body, `"status": "ok"`) || !strings.Contains(h.body, `"moved_aside": "view.damaged-`) {
		t.Errorf("/healthz after the rebuild: %s", h.body)
	}
}
