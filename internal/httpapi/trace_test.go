package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/internal/httpapi"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// tracedServer is the API (token "t") over a real scheduler and view, its
// request spans exported to exp.
func tracedServer(t *testing.T, exp *tracetest.InMemoryExporter) *httptest.Server {
	t.Helper()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	return rig{api: httpapi.Config{Token: "t", TracerProvider: tp}}.serve(t)
}

// Each request is a server span named by its route pattern, not its path;
// a client's traceparent is continued; refused requests are spans too;
// health checks are not.
func TestAPIRequestsAreSpansNamedByRoute(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	srv := tracedServer(t, exp)
	a := call(t, srv, "POST", "/v1/tasks", `{"name":"n","owner":"o","kind":"noop","interval":"1m"}`, "Authorization", "Bearer t")
	if a.code != http.StatusCreated {
		t.Fatalf("create: %+v", a)
	}
	var task struct{ ID string }
	json.Unmarshal([]byte(a.body), &task)
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	call(t, srv, "GET", "/v1/tasks/"+task.ID, "", "Authorization", "Bearer t", "traceparent", parent)
	call(t, srv, "GET", "/v1/tasks/"+task.ID, "")                             // no token: 401
	call(t, srv, "GET", "/v1/no/such/thing", "", "Authorization", "Bearer t") // 404
	call(t, srv, "GET", "/healthz", "")                                       // a probe: no span

	type want struct {
		name, route, path string
		status            int
	}
	wants := []want{
		{"POST /v1/tasks", "/v1/tasks", "/v1/tasks", 201},
		{"GET /v1/tasks/{id}", "/v1/tasks/{id}", "/v1/tasks/" + task.ID, 200},
		{"GET /v1/tasks/{id}", "/v1/tasks/{id}", "/v1/tasks/" + task.ID, 401},
		{"GET /", "/", "/v1/no/such/thing", 404},
	}
	spans := exp.GetSpans()
	if len(spans) != len(wants) {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("%d spans %v, want %d", len(spans), names, len(wants))
	}
	for i, w := range wants {
		s := spans[i]
		at := map[string]string{}
		for _, kv := range s.Attributes {
			at[string(kv.Key)] = kv.Value.Emit()
		}
		if s.Name != w.name || s.SpanKind != trace.SpanKindServer || at["http.route"] != w.route || at["url.path"] != w.path ||
			at["http.response.status_code"] != itoa(w.status) || at["http.request.method"] != strings.Fields(w.name)[0] {
			t.Errorf("span %d: %q kind %v %v; want %+v", i, s.Name, s.SpanKind, at, w)
		}
		if s.Status.Code != codes.Unset {
			t.Errorf("span %d: status %+v; a 4xx is the client's error, not the server's", i, s.Status)
		}
	}
	if p := spans[1].Parent; p.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" || p.SpanID().String() != "b7ad6b7169203331" || !p.IsRemote() {
		t.Errorf("parent %v: the client's traceparent is not continued", p)
	}
	if spans[0].Parent.IsValid() {
		t.Errorf("a request without traceparent has parent %v", spans[0].Parent)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// The span's response wrapper still lets the event stream flush: an event
// appended after the stream opened reaches the client.
func TestEventStreamFlushesThroughTheSpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	srv := tracedServer(t, exp)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/events/stream", nil)
	req.Header.Set("Authorization", "Bearer t")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if a := call(t, srv, "POST", "/v1/tasks", `{"name":"n","owner":"o","kind":"noop","interval":"1m"}`, "Authorization", "Bearer t"); a.code != 201 {
		t.Fatalf("create: %+v", a)
	}
	buf := make([]byte, 4096)
	var got strings.Builder
	for !strings.Contains(got.String(), "TaskCreated") {
		n, err := resp.Body.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			t.Fatalf("stream ended (%v) before TaskCreated arrived:\n%s", err, got.String())
		}
	}
}
