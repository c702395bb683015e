package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// max_waiting (R18) goes through POST and PATCH and comes back on the row:
// the default 3 when none was given; out of range is a 400 naming it, and
// nothing is recorded.
func TestMaxWaiting(t *testing.T) {
	srv := server(t, "")
	bound := func(a answer) int {
		t.Helper()
		var r struct {
			MaxWaiting *int `json:"max_waiting"`
		}
		if err := json.Unmarshal([]byte(a.body), &r); err != nil || r.MaxWaiting == nil {
			t.Fatalf("no max_waiting on the row (%v): %s", err, a.body)
		}
		return *r.MaxWaiting
	}
	def := call(t, srv, "POST", "/v1/tasks", `{`+good+`}`)
	if got := bound(def); def.code != 201 || got != 3 {
		t.Fatalf("default: %d, max_waiting %d, want 201 and 3: %s", def.code, got, def.body)
	}
	other := strings.Replace(good, `"poll"`, `"poll2"`, 1)
	for _, c := range []struct{ body, msg string }{
		{`{` + other + `,"max_waiting":0}`, "at least 1"},
		{`{` + other + `,"max_waiting":-2}`, "at least 1"},
		{`{` + other + `,"max_waiting":1001}`, "between 1 and 1000"},
		{`{` + other + `,"max_waiting":"5"}`, ""},
	} {
		a := call(t, srv, "POST", "/v1/tasks", c.body)
		if a.code != 400 || a.field != "max_waiting" || !strings.Contains(a.body, c.msg) {
			t.Errorf("%s: %d field %q: %s", c.body, a.code, a.field, a.body)
		}
	}
	if list := call(t, srv, "GET", "/v1/tasks?owner=channel/pop3/42", ""); strings.Contains(list.body, "poll2") {
		t.Fatalf("a refused create left a task: %s", list.body)
	}
	id := created(t, call(t, srv, "POST", "/v1/tasks", `{`+other+`,"max_waiting":7}`))
	if got := bound(call(t, srv, "GET", "/v1/tasks/"+id, "")); got != 7 {
		t.Fatalf("max_waiting %d, want 7", got)
	}
	// The same create again is the same task; another bound is another spec.
	if a := call(t, srv, "POST", "/v1/tasks", `{`+other+`,"max_waiting":7}`); a.code != 200 {
		t.Fatalf("same create: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "POST", "/v1/tasks", `{`+other+`,"max_waiting":8}`); a.code != 409 {
		t.Fatalf("create with another bound: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "PATCH", "/v1/tasks/"+id, `{"max_waiting":2}`); a.code != 200 || bound(a) != 2 {
		t.Fatalf("patch: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "PATCH", "/v1/tasks/"+id, `{"max_waiting":0}`); a.code != 400 || a.field != "max_waiting" {
		t.Fatalf("patch 0: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "PATCH", "/v1/tasks/"+id, `{"max_waiting":5000}`); a.code != 400 || a.field != "max_waiting" {
		t.Fatalf("patch 5000: %d %s", a.code, a.body)
	}
	if got := bound(call(t, srv, "GET", "/v1/tasks/"+id, "")); got != 2 {
		t.Fatalf("after refused patches max_waiting %d, want 2", got)
	}
}
