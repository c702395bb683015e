package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/internal/httpapi"
)

// GET /v1/queues over a real server: every queue by name with its limit,
// depth, busy workers and whether the daemon was started with it.
func TestQueuesEndpoint(t *testing.T) {
	mem := memStore(t)
	clk := clock.NewVirtual(t0)
	s := startScheduler(t, scheduler.Config{Store: mem, Clock: clk, Tick: time.Second, Workers: 1, Queues: map[string]int{"reports": 2, "mail": 8}},
		map[string]worker.Handler{"work": worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
			return nil, clock.Sleep(ctx, clk, time.Minute)
		})})
	srv := listen(t, httpapi.New(httpapi.Config{Scheduler: s, Store: mem, Token: "tok"}))

	if a := call(t, srv, "GET", "/v1/queues", ""); a.code != 401 {
		t.Fatalf("without the token: %d %s", a.code, a.body)
	}
	get := func() string {
		t.Helper()
		a := call(t, srv, "GET", "/v1/queues", "", "Authorization", "Bearer tok")
		if a.code != 200 {
			t.Fatalf("GET /v1/queues: %d %s", a.code, a.body)
		}
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(a.body)); err != nil {
			t.Fatalf("GET /v1/queues: %v: %s", err, a.body)
		}
		return b.String()
	}
	want := `{"queues":[{"name":"default","limit":1,"depth":0,"busy":0,"configured":true},` +
		`{"name":"mail","limit":8,"depth":0,"busy":0,"configured":true},` +
		`{"name":"reports","limit":2,"depth":0,"busy":0,"configured":true}]}`
	if got := get(); got != want {
		t.Fatalf("at start:\n%s\nwant\n%s", got, want)
	}
	// Two tasks of the default queue due at once: one runs, one waits.
	for _, name := range []string{"a", "b"} {
		if _, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: name, Owner: "o", Kind: "work",
			Interval: time.Hour, FirstRun: t0.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	clk.RunUntil(t0.Add(2 * time.Second))
	var got struct {
		Queues []map[string]any `json:"queues"`
	}
	if err := json.Unmarshal([]byte(get()), &got); err != nil {
		t.Fatal(err)
	}
	if d := got.Queues[0]; d["name"] != "default" || d["busy"] != 1.0 || d["depth"] != 1.0 {
		t.Fatalf("with one run running and one waiting: %v", d)
	}
}
