package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/internal/httpapi"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// t0 is when the tests' virtual clocks start.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// rig says what the API under test stands on: a real scheduler and a real
// view on one store. Its zero value is the usual: a new in-memory embedded
// store, a virtual clock at t0, the kind noop, no token.
type rig struct {
	store events.Store              // nil: a new in-memory embedded store
	sched scheduler.Config          // its Store is store; a nil Clock is a virtual one at t0
	kinds map[string]worker.Handler // what the scheduler runs; nil: noop
	api   httpapi.Config            // its Scheduler, View, ViewConfig and Store are filled in
}

// start starts the scheduler and the view, each stopped when the test ends,
// and returns the API's handler over them.
func (r rig) start(t *testing.T) (http.Handler, *scheduler.Scheduler, *crontasks.View) {
	t.Helper()
	if r.store == nil {
		r.store = memStore(t)
	}
	r.sched.Store = r.store
	if r.sched.Clock == nil {
		r.sched.Clock = clock.NewVirtual(t0)
	}
	if r.kinds == nil {
		r.kinds = map[string]worker.Handler{"noop": kinds.Noop()}
	}
	s := startScheduler(t, r.sched, r.kinds)
	v, err := crontasks.Open(crontasks.Config{Store: r.store})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { v.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done; v.Close() })
	r.api.Scheduler, r.api.View, r.api.ViewConfig, r.api.Store = s, v, crontasks.Config{Store: r.store}, r.store
	return httpapi.New(r.api), s, v
}

// serve is start's API served over HTTP until the test ends.
func (r rig) serve(t *testing.T) *httptest.Server {
	t.Helper()
	h, _, _ := r.start(t)
	return listen(t, h)
}

// memStore is an in-memory embedded store, closed when the test ends.
func memStore(t *testing.T) *embedded.Store {
	t.Helper()
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// startScheduler starts a scheduler on cfg running kinds, stopped when the
// test ends.
func startScheduler(t *testing.T, cfg scheduler.Config, kinds map[string]worker.Handler) *scheduler.Scheduler {
	t.Helper()
	s, err := scheduler.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for kind, h := range kinds {
		s.Register(kind, h)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s.Stop(ctx)
	})
	return s
}

// listen serves h over HTTP until the test ends.
func listen(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// server is the usual rig, with token, over HTTP.
func server(t *testing.T, token string) *httptest.Server {
	t.Helper()
	return rig{api: httpapi.Config{Token: token}}.serve(t)
}

type answer struct {
	code  int
	body  string
	field string
}

func call(t *testing.T, srv *httptest.Server, method, path, body string, hdr ...string) answer {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct{ Field string } `json:"error"`
	}
	json.Unmarshal(b, &e)
	return answer{code: resp.StatusCode, body: string(b), field: e.Error.Field}
}

const good = `"name":"poll","owner":"channel/pop3/42","kind":"noop","interval":"1m"`

func TestCreateValidation(t *testing.T) {
	srv := server(t, "")
	big := `"` + strings.Repeat("x", 70<<10) + `"`
	cases := []struct {
		name, body string
		code       int
		field      string
	}{
		{"missing name", `{"owner":"o","kind":"noop","interval":"1m"}`, 400, "name"},
		{"missing owner", `{"name":"n","kind":"noop","interval":"1m"}`, 400, "owner"},
		{"missing kind", `{"name":"n","owner":"o","interval":"1m"}`, 400, "kind"},
		{"missing interval", `{"name":"n","owner":"o","kind":"noop"}`, 400, "interval"},
		{"interval not a duration", `{` + good[:strings.Index(good, `"interval"`)] + `"interval":"often"}`, 400, "interval"},
		{"interval under 1s", `{"name":"n","owner":"o","kind":"noop","interval":"500ms"}`, 400, "interval"},
		{"interval not a string", `{"name":"n","owner":"o","kind":"noop","interval":60}`, 400, "interval"},
		{"negative tolerance", `{` + good + `,"tolerance":"-1s"}`, 400, "tolerance"},
		{"tolerance half the interval", `{` + good + `,"tolerance":"30s"}`, 400, "tolerance"},
		{"zero timebox", `{` + good + `,"timebox":"0s"}`, 400, "timebox"},
		{"timebox over interval", `{` + good + `,"timebox":"61s"}`, 400, "timebox"},
		{"unknown kind", `{"name":"n","owner":"o","kind":"teleport","interval":"1m"}`, 400, "kind"},
		{"unknown field", `{` + good + `,"color":"red"}`, 400, "color"},
		{"payload over 64 KiB", `{` + good + `,"payload":` + big + `}`, 400, "payload"},
		{"bad first_run", `{` + good + `,"first_run":"tomorrow"}`, 400, "first_run"},
		{"not JSON", `{"name":`, 400, "body"},
		{"trailing data", `{` + good + `} {}`, 400, "body"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := call(t, srv, "POST", "/v1/tasks", c.body)
			if a.code != c.code || a.field != c.field {
				t.Fatalf("got %d field %q: %s; want %d field %q", a.code, a.field, a.body, c.code, c.field)
			}
		})
	}
	// Nothing was half-applied: no task exists.
	if a := call(t, srv, "GET", "/v1/tasks", ""); !strings.Contains(a.body, `"tasks": []`) {
		t.Fatalf("rejected creates left tasks behind: %s", a.body)
	}
}

func TestCreateIsIdempotentByOwnerAndName(t *testing.T) {
	srv := server(t, "")
	a := call(t, srv, "POST", "/v1/tasks", `{`+good+`,"payload":{"a":1,"b":2},"tolerance":"0s","first_run":"2026-01-01T00:00:30Z"}`)
	if a.code != 201 {
		t.Fatalf("create: %d %s", a.code, a.body)
	}
	var t1 crontasks.Task
	json.Unmarshal([]byte(a.body), &t1)
	if t1.Tolerance.D() != 0 || t1.NextRun == nil || !t1.NextRun.Equal(time.Date(2026, 1, 1, 0, 0, 30, 0, time.UTC)) {
		t.Fatalf("created %+v", t1)
	}
	same := call(t, srv, "POST", "/v1/tasks", `{`+good+`,"payload":{"b":2,"a":1},"tolerance":"0s"}`)
	if same.code != 200 || !strings.Contains(same.body, t1.ID.String()) {
		t.Fatalf("same spec again: %d %s", same.code, same.body)
	}
	if other := call(t, srv, "POST", "/v1/tasks", `{`+good+`,"payload":{"a":2}}`); other.code != 409 {
		t.Fatalf("different spec: %d %s", other.code, other.body)
	}
}

func TestTaskEndpoints(t *testing.T) {
	srv := server(t, "")
	a := call(t, srv, "POST", "/v1/tasks", `{`+good+`}`)
	var tk crontasks.Task
	json.Unmarshal([]byte(a.body), &tk)
	id := tk.ID.String()
	if g := call(t, srv, "GET", "/v1/tasks/"+id, ""); g.code != 200 {
		t.Fatalf("get: %d", g.code)
	}
	if g := call(t, srv, "GET", "/v1/tasks/1e0a4a28-3b24-4d2c-9d6b-7a1f9b3a5b10", ""); g.code != 404 {
		t.Fatalf("unknown task: %d", g.code)
	}
	if g := call(t, srv, "GET", "/v1/tasks/not-a-uuid", ""); g.code != 400 || g.field != "id" {
		t.Fatalf("bad id: %d %s", g.code, g.body)
	}
	if p := call(t, srv, "PATCH", "/v1/tasks/"+id, `{"interval":"2m","priority":5}`); p.code != 200 || !strings.Contains(p.body, `"interval": "2m0s"`) || !strings.Contains(p.body, `"priority": 5`) {
		t.Fatalf("patch: %d %s", p.code, p.body)
	}
	if p := call(t, srv, "PATCH", "/v1/tasks/"+id, `{"timebox":"3m"}`); p.code != 400 || p.field != "timebox" {
		t.Fatalf("patch bad timebox: %d %s", p.code, p.body)
	}
	if p := call(t, srv, "PATCH", "/v1/tasks/"+id, `{"name":"renamed"}`); p.code != 400 || p.field != "name" {
		t.Fatalf("patch unknown field: %d %s", p.code, p.body)
	}
	if p := call(t, srv, "POST", "/v1/tasks/"+id+"/pause", ""); p.code != 200 || !strings.Contains(p.body, `"status": "paused"`) {
		t.Fatalf("pause: %d %s", p.code, p.body)
	}
	if l := call(t, srv, "GET", "/v1/tasks?status=paused", ""); !strings.Contains(l.body, id) {
		t.Fatalf("list paused: %s", l.body)
	}
	if l := call(t, srv, "GET", "/v1/tasks?colour=red", ""); l.code != 400 || l.field != "colour" {
		t.Fatalf("unknown query parameter: %d %s", l.code, l.body)
	}
	if l := call(t, srv, "GET", "/v1/tasks?limit=0", ""); l.code != 400 || l.field != "limit" {
		t.Fatalf("bad limit: %d %s", l.code, l.body)
	}
	if p := call(t, srv, "POST", "/v1/tasks/"+id+"/resume", ""); p.code != 200 || !strings.Contains(p.body, `"status": "active"`) {
		t.Fatalf("resume: %d %s", p.code, p.body)
	}
	if e := call(t, srv, "GET", "/v1/tasks/"+id+"/events", ""); e.code != 200 || strings.Count(e.body, `"type"`) != 4 {
		t.Fatalf("events: %d %s", e.code, e.body)
	}
	if o := call(t, srv, "DELETE", "/v1/owners/channel%2Fpop3%2F42/tasks", ""); o.code != 200 || !strings.Contains(o.body, `"deleted": 1`) {
		t.Fatalf("delete owner: %d %s", o.code, o.body)
	}
	if g := call(t, srv, "GET", "/v1/tasks/"+id, ""); !strings.Contains(g.body, `"status": "deleted"`) {
		t.Fatalf("after owner delete: %s", g.body)
	}
	if p := call(t, srv, "POST", "/v1/tasks/"+id+"/pause", ""); p.code != 409 {
		t.Fatalf("pause a deleted task: %d %s", p.code, p.body)
	}
}

func TestToken(t *testing.T) {
	srv := server(t, "s3cret")
	if a := call(t, srv, "GET", "/v1/tasks", ""); a.code != 401 {
		t.Fatalf("no token: %d", a.code)
	}
	if a := call(t, srv, "GET", "/v1/tasks", "", "Authorization", "Bearer wrong"); a.code != 401 {
		t.Fatalf("wrong token: %d", a.code)
	}
	if a := call(t, srv, "GET", "/v1/tasks", "", "Authorization", "Bearer s3cret"); a.code != 200 {
		t.Fatalf("right token: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "GET", "/healthz", ""); a.code != 200 {
		t.Fatalf("healthz needs no token: %d", a.code)
	}
}

// busyLog is a store whose head is always far ahead, as when other writers
// keep appending: a write's answer must not wait for them.
type busyLog struct{ *embedded.Store }

func (b busyLog) Head() events.Position {
	h := b.Store.Head()
	return events.Position{Commit: h.Commit + 1000, Prepare: h.Prepare + 1000}
}

// TestWritesWaitForTheirOwnPosition: the answer to a write waits for the view
// to fold that write, not for the log's head.
func TestWritesWaitForTheirOwnPosition(t *testing.T) {
	srv := rig{store: busyLog{memStore(t)}, api: httpapi.Config{ReadTimeout: 2 * time.Second}}.serve(t)
	a := call(t, srv, "POST", "/v1/tasks", "{"+good+"}")
	if a.code != http.StatusCreated {
		t.Fatalf("create: %d %s", a.code, a.body)
	}
	var row struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(a.body), &row); err != nil || row.Status != "active" {
		t.Fatalf("create answered %s", a.body)
	}
	if a := call(t, srv, "POST", "/v1/tasks/"+row.ID+"/pause", ""); a.code != http.StatusOK || !strings.Contains(a.body, `"paused"`) {
		t.Fatalf("pause: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "DELETE", "/v1/owners/channel%2Fpop3%2F42/tasks", ""); a.code != http.StatusOK || !strings.Contains(a.body, `"deleted": 1`) {
		t.Fatalf("delete owner: %d %s", a.code, a.body)
	}
}

// TestEveryRowHasEveryKey: an interval, a cron and an at task, created
// and listed, each carry every key DESIGN §5 and §2b name for a row (null
// where its schedule has none), and the JSON decodes back into the row.
func TestEveryRowHasEveryKey(t *testing.T) {
	srv := server(t, "")
	for _, body := range []string{
		`{` + good + `}`,
		`{"name":"c","owner":"o","kind":"noop","cron":"30 2 * * *","timezone":"America/New_York","max_runs":3}`,
		`{"name":"a","owner":"o","kind":"noop","at":["2030-01-01T00:00:00Z"]}`,
	} {
		if a := call(t, srv, "POST", "/v1/tasks", body); a.code != 201 {
			t.Fatalf("create %s: %d %s", body, a.code, a.body)
		}
	}
	list := call(t, srv, "GET", "/v1/tasks", "")
	var page struct{ Tasks []map[string]json.RawMessage }
	if err := json.Unmarshal([]byte(list.body), &page); err != nil || len(page.Tasks) != 3 {
		t.Fatalf("list: %v %s", err, list.body)
	}
	keys := []string{"id", "name", "owner", "kind", "payload", "interval", "tolerance", "timebox", "priority", "status",
		"next_run", "last_run", "run_count", "completed_count", "dropped_count", "forced_count", "failed_count",
		"missed_count", "checkpoint", "created_at", "updated_at",
		"cron", "at", "queue", "timezone", "dst_gap", "dst_overlap", "exclude", "start_at", "end_at", "max_runs", "jitter",
		"retry", "missed_run_policy", "missed_after", "start_deadline", "heartbeat_timeout"}
	// What each kind of schedule has not is exactly null.
	nulls := map[string][]string{
		`"poll"`: {"cron", "at", "timezone", "dst_gap", "dst_overlap", "exclude", "start_at", "end_at", "max_runs", "jitter"},
		`"c"`:    {"interval", "at", "exclude", "start_at", "end_at", "jitter"},
		`"a"`:    {"interval", "cron", "dst_gap", "dst_overlap", "exclude", "start_at", "end_at", "max_runs", "jitter"},
	}
	for _, row := range page.Tasks {
		for _, k := range keys {
			if _, ok := row[k]; !ok {
				t.Errorf("row %s: no %q", row["name"], k)
			}
		}
		for _, k := range nulls[string(row["name"])] {
			if string(row[k]) != "null" {
				t.Errorf("row %s: %q is %s, want null", row["name"], k, row[k])
			}
		}
	}
	var rows struct{ Tasks []crontasks.Task }
	if err := json.Unmarshal([]byte(list.body), &rows); err != nil {
		t.Fatalf("the rows do not decode: %v", err)
	}
	for _, r := range rows.Tasks {
		switch r.Name {
		case "poll":
			if r.Interval.D() != time.Minute || r.Cron != nil || r.MaxRuns != 0 {
				t.Errorf("interval row decoded as %+v", r)
			}
		case "c":
			if r.Interval != 0 || len(r.Cron) != 1 || r.Timezone != "America/New_York" || r.MaxRuns != 3 {
				t.Errorf("cron row decoded as %+v", r)
			}
		case "a":
			if r.Interval != 0 || len(r.At) != 1 || r.DSTGap != "" {
				t.Errorf("at row decoded as %+v", r)
			}
		}
	}
}

// TestListQueryErrorsNameTheParameter: a bad query of the task list gets a
// 400 whose error names the parameter at fault, not the query as a whole.
func TestListQueryErrorsNameTheParameter(t *testing.T) {
	srv := server(t, "")
	for _, c := range []struct{ query, field string }{
		{"?status=bogus", "status"},
		{"?cursor=zzz", "cursor"},
		{"?limit=0", "limit"},
		{"?due_before=yesterday", "due_before"},
		{"?as_of=never", "as_of"},
		{"?color=red", "color"},
	} {
		if a := call(t, srv, "GET", "/v1/tasks"+c.query, ""); a.code != 400 || a.field != c.field {
			t.Errorf("%s: %d %s; want 400 naming %q", c.query, a.code, a.body, c.field)
		}
	}
}
