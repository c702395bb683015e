package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/google/uuid"
)

// clockServer is the API over a scheduler on a virtual clock the test
// drives, with the store to look into; settle advances the clock and
// waits until the view has folded everything recorded meanwhile.
func clockServer(t *testing.T) (srv *httptest.Server, clk *clock.Virtual, st *embedded.Store, settle func(time.Duration)) {
	t.Helper()
	st = memStore(t)
	clk = clock.NewVirtual(t0)
	h, _, v := rig{store: st, sched: scheduler.Config{Clock: clk, Tick: time.Second}}.start(t)
	srv = listen(t, h)
	settle = func(d time.Duration) {
		t.Helper()
		clk.RunUntil(clk.Now().Add(d))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := v.WaitFor(ctx, st.Head()); err != nil {
			t.Fatal(err)
		}
	}
	return srv, clk, st, settle
}

// POST /v1/tasks/{id}/trigger: 202 with the run's ID, which the task's
// events record as a manual run; a paused, finished or deleted task
// refuses with 409 and the reason, recording nothing; an unknown task is
// a 404.
func TestTrigger(t *testing.T) {
	srv, clk, st, settle := clockServer(t)
	id := created(t, call(t, srv, "POST", "/v1/tasks", `{`+good+`}`))
	a := call(t, srv, "POST", "/v1/tasks/"+id+"/trigger", "")
	var ans struct {
		TaskID string    `json:"task_id"`
		RunID  uuid.UUID `json:"run_id"`
	}
	if err := json.Unmarshal([]byte(a.body), &ans); a.code != 202 || err != nil || ans.RunID == uuid.Nil || ans.TaskID != id {
		t.Fatalf("trigger: %d %s", a.code, a.body)
	}
	ev := call(t, srv, "GET", "/v1/tasks/"+id+"/events", "")
	var list struct {
		Events []struct {
			Type  string
			RunID uuid.UUID `json:"run_id"`
			Data  struct{ Trigger string }
		}
	}
	if err := json.Unmarshal([]byte(ev.body), &list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range list.Events {
		found = found || (e.Type == "RunEnqueued" && e.RunID == ans.RunID && e.Data.Trigger == "manual")
	}
	if !found {
		t.Fatalf("no manual RunEnqueued with run %s: %s", ans.RunID, ev.body)
	}
	settle(2 * time.Second)
	if row := call(t, srv, "GET", "/v1/tasks/"+id, ""); !strings.Contains(row.body, `"trigger_count": 1`) {
		t.Errorf("row after a trigger: %s", row.body)
	}

	refused := func(name, path, reason string) {
		t.Helper()
		before := st.Head()
		a := call(t, srv, "POST", path, "")
		var e struct {
			Error struct{ Field, Message string }
		}
		json.Unmarshal([]byte(a.body), &e)
		if a.code != 409 || e.Error.Field != "id" || !strings.Contains(e.Error.Message, reason) {
			t.Errorf("%s: %d %s; want 409 naming id with %q", name, a.code, a.body, reason)
		}
		if st.Head() != before {
			t.Errorf("%s: a refused trigger recorded events", name)
		}
	}
	call(t, srv, "POST", "/v1/tasks/"+id+"/pause", "")
	refused("paused", "/v1/tasks/"+id+"/trigger", "paused")
	call(t, srv, "DELETE", "/v1/tasks/"+id, "")
	refused("deleted", "/v1/tasks/"+id+"/trigger", "deleted")

	// An at task whose one instant has passed is finished.
	at := clk.Now().Add(3 * time.Second).Format(time.RFC3339)
	once := created(t, call(t, srv, "POST", "/v1/tasks", `{"name":"once","owner":"o","kind":"noop","at":["`+at+`"]}`))
	settle(10 * time.Second)
	if row := call(t, srv, "GET", "/v1/tasks/"+once, ""); !strings.Contains(row.body, `"status": "finished"`) {
		t.Fatalf("the at task did not finish: %s", row.body)
	}
	refused("finished", "/v1/tasks/"+once+"/trigger", "finished")

	for _, c := range []struct {
		path  string
		code  int
		field string
	}{
		{"/v1/tasks/" + uuid.NewString() + "/trigger", 404, "id"},
		{"/v1/tasks/not-a-uuid/trigger", 400, "id"},
		{"/v1/tasks/" + once + "/trigger?now=1", 400, "now"},
	} {
		if a := call(t, srv, "POST", c.path, ""); a.code != c.code || a.field != c.field {
			t.Errorf("POST %s: %d field %q, want %d naming %q: %s", c.path, a.code, a.field, c.code, c.field, a.body)
		}
	}
	if a := call(t, srv, "GET", "/v1/tasks/"+once+"/trigger", ""); a.code == 202 {
		t.Errorf("GET trigger: %d", a.code)
	}
}
