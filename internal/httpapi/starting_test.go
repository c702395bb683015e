package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/httpapi"
)

// While the daemon starts, every request is answered at once: /healthz
// 503 "starting" with the phase, and the store's state once it is open
// (an unreachable EventStoreDB server: its condition); any other request
// 503 with Retry-After, naming the phase.
func TestStartingAnswersAtOnce(t *testing.T) {
	var store atomic.Pointer[refusingStore]
	var phase atomic.Value
	phase.Store("open_store")
	srv := httptest.NewServer(httpapi.Starting(httpapi.StartingConfig{
		Phase: func() string { return phase.Load().(string) },
		Store: func() events.Store {
			if s := store.Load(); s != nil {
				return s
			}
			return nil
		}}))
	defer srv.Close()

	hz := call(t, srv, "GET", "/healthz", "")
	if h := getHealth(t, hz); hz.code != http.StatusServiceUnavailable || h.Status != "starting" ||
		!strings.Contains(hz.body, `"phase": "open_store"`) || strings.Contains(hz.body, `"store"`) {
		t.Fatalf("healthz before the store is open: %d %s", hz.code, hz.body)
	}

	st := &refusingStore{Store: memStore(t)}
	st.set(events.ErrUnreachable, false)
	store.Store(st)
	phase.Store("catch_up_view")
	hz = call(t, srv, "GET", "/healthz", "")
	if h := getHealth(t, hz); hz.code != http.StatusServiceUnavailable || h.Status != "starting" || h.Store.Writable ||
		h.Store.Condition != "unreachable" || !strings.Contains(hz.body, `"phase": "catch_up_view"`) {
		t.Fatalf("healthz with the store's server unreachable: %d %s", hz.code, hz.body)
	}
	if strings.Contains(hz.body, "/srv/cronactor") {
		t.Errorf("/healthz shows a path: %s", hz.body)
	}

	st.set(nil, false)
	if hz := call(t, srv, "GET", "/healthz", ""); hz.code != http.StatusServiceUnavailable || !getHealth(t, hz).Store.Writable {
		t.Fatalf("healthz with the store writable, still starting: %d %s", hz.code, hz.body)
	}

	req, _ := http.NewRequest("GET", srv.URL+"/v1/tasks", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("an API call while starting: %s, Retry-After %q", resp.Status, resp.Header.Get("Retry-After"))
	}
	if a := call(t, srv, "POST", "/v1/tasks", "{}"); a.code != http.StatusServiceUnavailable || !strings.Contains(a.body, "starting (catch_up_view)") {
		t.Fatalf("a create while starting: %d %s", a.code, a.body)
	}
}
