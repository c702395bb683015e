package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/internal/httpapi"
)

func TestHistoryAndExplainEndpoints(t *testing.T) {
	srv, _ := streamServer(t, "", httpapi.StreamConfig{})
	id := createTask(t, srv, "poll")
	if a := call(t, srv, "POST", "/v1/tasks/"+id+"/pause", ""); a.code != 200 {
		t.Fatalf("pause: %d %s", a.code, a.body)
	}

	a := call(t, srv, "GET", "/v1/tasks/"+id+"/history", "")
	var h httpapi.HistoryBody
	if err := json.Unmarshal([]byte(a.body), &h); err != nil || a.code != 200 {
		t.Fatalf("history: %d %s %v", a.code, a.body, err)
	}
	var texts []string
	for _, r := range h.Rows {
		texts = append(texts, r.Event+": "+r.Text+" ["+r.Status+"]")
	}
	if got, want := strings.Join(texts, "\n"), "TaskCreated: Initial state [active]\nTaskPaused: poll is paused [paused]"; got != want || h.Task != "poll" {
		t.Fatalf("history rows:\n%s\nwant:\n%s", got, want)
	}
	if a := call(t, srv, "GET", "/v1/tasks/"+id+"/history?limit=1", ""); !strings.Contains(a.body, `"truncated": true`) || strings.Contains(a.body, "Initial state") {
		t.Fatalf("history limit=1 keeps the latest row: %s", a.body)
	}
	if a := call(t, srv, "GET", "/v1/tasks/"+id+"/history?since=2027-01-01T00:00:00Z", ""); !strings.Contains(a.body, `"rows": []`) {
		t.Fatalf("history since a later time: %s", a.body)
	}

	a = call(t, srv, "GET", "/v1/tasks/"+id+"/explain?at=2026-01-01T00:00:10Z", "")
	var ex httpapi.ExplainBody
	if err := json.Unmarshal([]byte(a.body), &ex); err != nil || a.code != 200 {
		t.Fatalf("explain: %d %s %v", a.code, a.body, err)
	}
	if !strings.Contains(ex.Verdict, "poll was paused") || !strings.Contains(ex.Verdict, "(R7)") || ex.Status != "paused" ||
		!strings.HasPrefix(ex.Text, "poll ("+id+") at 2026-01-01T00:00:10Z\n"+ex.Verdict+"\n") || len(ex.Decisions) != 2 || !ex.Decisions[1].Before {
		t.Fatalf("explain: %+v", ex)
	}

	for _, c := range []struct {
		path  string
		code  int
		field string
	}{
		{"/v1/tasks/" + id + "/explain", 400, "at"},
		{"/v1/tasks/" + id + "/explain?at=yesterday", 400, "at"},
		{"/v1/tasks/" + id + "/explain?at=2026-01-01T00:00:10Z&window=-1s", 400, "window"},
		{"/v1/tasks/" + id + "/explain?at=2026-01-01T00:00:10Z&colour=red", 400, "colour"},
		{"/v1/tasks/1e0a4a28-3b24-4d2c-9d6b-7a1f9b3a5b10/explain?at=2026-01-01T00:00:10Z", 404, "id"},
		{"/v1/tasks/" + id + "/history?limit=0", 400, "limit"},
		{"/v1/tasks/" + id + "/history?since=soon", 400, "since"},
		{"/v1/tasks/1e0a4a28-3b24-4d2c-9d6b-7a1f9b3a5b10/history", 404, "id"},
	} {
		if a := call(t, srv, "GET", c.path, ""); a.code != c.code || a.field != c.field {
			t.Errorf("GET %s: %d field %q (%s); want %d field %q", c.path, a.code, a.field, a.body, c.code, c.field)
		}
	}
}

func TestUIServedWithoutToken(t *testing.T) {
	srv, _ := streamServer(t, "s3cret", httpapi.StreamConfig{})
	for _, p := range []string{"/ui/", "/ui/js/app.js", "/ui/app.css", "/ui/tasks/deep-link"} {
		a := call(t, srv, "GET", p, "")
		if a.code != 200 {
			t.Fatalf("GET %s: %d", p, a.code)
		}
	}
	if a := call(t, srv, "GET", "/ui/", ""); !strings.Contains(a.body, `<script type="module" src="/ui/js/app.js">`) {
		t.Fatalf("the shell: %s", a.body)
	}
	if a := call(t, srv, "GET", "/v1/tasks", ""); a.code != 401 {
		t.Fatalf("data without the token: %d", a.code)
	}
}
