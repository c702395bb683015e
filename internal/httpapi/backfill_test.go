package httpapi_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// POST /v1/tasks/{id}/backfill: 202 with the slots of the window, each a
// run with trigger backfill and its slot in the task's events; a bad
// window is a 400 naming the field and a paused or deleted task a 409,
// recording nothing.
func TestBackfill(t *testing.T) {
	srv, _, st, settle := clockServer(t)
	id := created(t, call(t, srv, "POST", "/v1/tasks", `{`+good+`}`))
	settle(5 * time.Minute)
	path := "/v1/tasks/" + id + "/backfill"
	win := func(from, to time.Duration) string {
		return `{"from":"` + t0.Add(from).Format(time.RFC3339) + `","to":"` + t0.Add(to).Format(time.RFC3339) + `"}`
	}
	a := call(t, srv, "POST", path, win(0, 3*time.Minute))
	var ans struct{ Slots []string }
	want := []string{"2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"}
	if err := json.Unmarshal([]byte(a.body), &ans); a.code != 202 || err != nil || !reflect.DeepEqual(ans.Slots, want) {
		t.Fatalf("backfill: %d %s", a.code, a.body)
	}
	settle(5 * time.Second)
	ev := call(t, srv, "GET", "/v1/tasks/"+id+"/events", "")
	var list struct {
		Events []struct {
			Type string
			Data struct {
				Trigger string
				Slot    time.Time
			}
		}
	}
	if err := json.Unmarshal([]byte(ev.body), &list); err != nil {
		t.Fatal(err)
	}
	var got []string
	requested := false
	for _, e := range list.Events {
		requested = requested || e.Type == "BackfillRequested"
		if e.Type == "RunEnqueued" && e.Data.Trigger == "backfill" {
			got = append(got, e.Data.Slot.UTC().Format(time.RFC3339))
		}
	}
	if !requested || !reflect.DeepEqual(got, want) {
		t.Fatalf("recorded request %v, backfill runs of slots %v: %s", requested, got, ev.body)
	}

	refused := func(name, body string, code int, field, reason string) {
		t.Helper()
		before := st.Head()
		a := call(t, srv, "POST", path, body)
		var e struct {
			Error struct{ Field, Message string }
		}
		json.Unmarshal([]byte(a.body), &e)
		if a.code != code || e.Error.Field != field || !strings.Contains(e.Error.Message, reason) {
			t.Errorf("%s: %d %s; want %d naming %s with %q", name, a.code, a.body, code, field, reason)
		}
		if st.Head() != before {
			t.Errorf("%s: a refused backfill recorded events", name)
		}
	}
	refused("future", win(0, time.Hour), 400, "to", "in the future")
	refused("reversed", win(3*time.Minute, 0), 400, "to", "must be after from")
	refused("empty", win(time.Minute, time.Minute), 400, "to", "must be after from")
	refused("no slot", win(time.Minute+time.Second, 2*time.Minute), 400, "from", "no slot")
	refused("too many", win(-1001*time.Minute, 0), 400, "to", "1001 slots, more than the limit of 1000")
	refused("no from", `{"to":"2026-01-01T00:01:00Z"}`, 400, "from", "required")
	refused("bad to", `{"from":"2026-01-01T00:01:00Z","to":"yesterday"}`, 400, "to", "RFC 3339")
	refused("unknown key", `{"from":"2026-01-01T00:01:00Z","to":"2026-01-01T00:02:00Z","count":3}`, 400, "count", "")
	call(t, srv, "POST", "/v1/tasks/"+id+"/pause", "")
	refused("paused", win(0, time.Minute), 409, "id", "the task cannot be backfilled: the task is paused")
	call(t, srv, "DELETE", "/v1/tasks/"+id, "")
	refused("deleted", win(0, time.Minute), 409, "id", "deleted")
}
