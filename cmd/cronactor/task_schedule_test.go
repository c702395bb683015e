package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/projections/crontasks"
)

// fakeAPI answers the task endpoints with fixed rows and keeps the last
// request body.
type fakeAPI struct {
	lastPath string
	lastBody map[string]any
}

const cronRow = `{"id":"7d0c1e0e-0000-4000-8000-000000000001","name":"report","owner":"team","kind":"noop",
"cron":["0 9 * * MON-FRI","0 12 * * SAT"],"timezone":"Europe/Berlin","dst_gap":"shift","dst_overlap":"first",
"tolerance":"5s","timebox":"12h0m0s","priority":0,"status":"active","next_run":"2026-03-26T08:00:00Z","last_run":null}`

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.lastPath = r.URL.RequestURI()
	f.lastBody = nil
	if b, _ := io.ReadAll(r.Body); len(b) > 0 {
		json.Unmarshal(b, &f.lastBody)
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasSuffix(r.URL.Path, "/upcoming"):
		w.Write([]byte(`{"slots":["2026-03-26T09:00:00+01:00","2026-03-30T09:00:00+02:00"]}`))
	case r.URL.Path == "/v1/tasks" && r.Method == http.MethodGet:
		w.Write([]byte(`{"tasks":[` + cronRow + `]}`))
	default:
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(cronRow))
	}
}

// task create sends the schedule flags as the API's fields; task upcoming
// prints one slot per line; task list shows the schedule as written and
// its zone.
func TestTaskScheduleFlags(t *testing.T) {
	api := &fakeAPI{}
	srv := httptest.NewServer(api)
	defer srv.Close()
	out, _, err := runCLI(t, "task", "create", "--server", srv.URL, "--name", "report", "--owner", "team", "--kind", "noop",
		"--cron", "0 9 * * MON-FRI", "--cron", "0 12 * * SAT", "--timezone", "Europe/Berlin", "--dst-gap", "skip",
		"--dst-overlap", "both", "--start-at", "2026-03-01T00:00:00Z", "--end-at", "2026-12-31T00:00:00Z",
		"--max-runs", "100", "--jitter", "30s")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(api.lastBody)
	want := `{"cron":["0 9 * * MON-FRI","0 12 * * SAT"],"dst_gap":"skip","dst_overlap":"both","end_at":"2026-12-31T00:00:00Z",` +
		`"jitter":"30s","kind":"noop","max_runs":100,"name":"report","owner":"team","start_at":"2026-03-01T00:00:00Z","timezone":"Europe/Berlin"}`
	if string(got) != want {
		t.Fatalf("create sent %s\nwant %s", got, want)
	}
	if !strings.Contains(out, "0 9 * * MON-FRI | 0 12 * * SAT") || !strings.Contains(out, "Europe/Berlin") || !strings.Contains(out, "SCHEDULE") {
		t.Fatalf("create printed:\n%s", out)
	}
	// --exclude repeats; on update an empty one clears the list.
	if _, _, err := runCLI(t, "task", "create", "--server", srv.URL, "--name", "x", "--owner", "team", "--kind", "noop",
		"--cron", "0 9 * * *", "--exclude", "2026-12-25", "--exclude", "0 9 * * SAT,SUN"); err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(api.lastBody["exclude"]); string(got) != `["2026-12-25","0 9 * * SAT,SUN"]` {
		t.Fatalf("create --exclude sent %v", api.lastBody)
	}
	if _, _, err := runCLI(t, "task", "update", "7d0c1e0e-0000-4000-8000-000000000001", "--server", srv.URL, "--exclude", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(api.lastBody); string(got) != `{"exclude":[]}` {
		t.Fatalf("update --exclude '' sent %s", got)
	}
	if _, _, err := runCLI(t, "task", "create", "--server", srv.URL, "--name", "once", "--owner", "team", "--kind", "noop",
		"--at", "2026-12-01T09:00:00Z, 2026-12-02T09:00:00Z"); err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(api.lastBody["at"]); string(got) != `["2026-12-01T09:00:00Z","2026-12-02T09:00:00Z"]` || api.lastBody["cron"] != nil {
		t.Fatalf("create --at sent %v", api.lastBody)
	}
	out, _, err = runCLI(t, "task", "upcoming", "7d0c1e0e-0000-4000-8000-000000000001", "--count", "2", "--server", srv.URL)
	if err != nil || out != "2026-03-26T09:00:00+01:00\n2026-03-30T09:00:00+02:00\n" || !strings.HasSuffix(api.lastPath, "/upcoming?count=2") {
		t.Fatalf("upcoming: %v %q (asked %s)", err, out, api.lastPath)
	}
	out, _, err = runCLI(t, "task", "list", "--server", srv.URL)
	if err != nil || !strings.Contains(out, "ZONE") || !strings.Contains(out, "Europe/Berlin") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"task", "create", "--server", srv.URL, "--max-runs", "many"},
		{"task", "create", "--server", srv.URL, "--at", ","},
		{"task", "upcoming", "--server", srv.URL},
		{"task", "upcoming", "x", "--count", "0", "--server", srv.URL},
	} {
		if _, _, err := runCLI(t, args...); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// task list and task get show a cron schedule's exclude list after its
// expressions (whole with -o wide, cut with "…" in the narrow table).
func TestTaskTablesShowExclude(t *testing.T) {
	var task crontasks.Task
	if err := json.Unmarshal([]byte(cronRow), &task); err != nil {
		t.Fatal(err)
	}
	task.Exclude = []string{"2026-12-25", "0 9 * * SAT,SUN"}
	var wide, narrow strings.Builder
	printTasks(&wide, []crontasks.Task{task}, true, task.CreatedAt)
	printTasks(&narrow, []crontasks.Task{task}, false, task.CreatedAt)
	if !strings.Contains(wide.String(), "0 9 * * MON-FRI | 0 12 * * SAT except 2026-12-25, 0 9 * * SAT,SUN") {
		t.Errorf("wide:\n%s", wide.String())
	}
	if !strings.Contains(narrow.String(), "0 9 * * MON-FRI | 0 12 * * SAT except 2…") {
		t.Errorf("narrow:\n%s", narrow.String())
	}
}
