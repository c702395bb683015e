package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/httpapi"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// Event streams past StreamConfig.MaxSubscribers are refused with 429 and
// an error that says the bound and the flag raising it; once one closes,
// another is let in.
func TestStreamSubscribersAreCapped(t *testing.T) {
	ended := make(chan string, 8)
	srv, _ := streamServer(t, "", httpapi.StreamConfig{MaxSubscribers: 2, Heartbeat: 100 * time.Millisecond, Disconnected: func(r string) { ended <- r }})
	first := openStream(t, srv, "")
	if _, err := first.next(); err != nil {
		t.Fatal(err)
	}
	second := openStream(t, srv, "")
	if _, err := second.next(); err != nil {
		t.Fatal(err)
	}
	a := notStream(t, srv, "/v1/events/stream")
	if a.code != 429 || !strings.Contains(a.body, "at most 2") || !strings.Contains(a.body, "--max-stream-clients") {
		t.Fatalf("a third stream: %d %s", a.code, a.body)
	}
	first.body.Close()
	if r := <-ended; r != httpapi.StreamClientGone {
		t.Fatalf("the first stream ended with %q", r)
	}
	third := openStream(t, srv, "")
	if _, err := third.next(); err != nil {
		t.Fatalf("a stream once another closed: %v", err)
	}
}

// holdReads is a store whose log reads wait, once armed, until released.
type holdReads struct {
	events.Store
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	release chan struct{}
}

func (h *holdReads) hold() {
	h.mu.Lock()
	armed := h.armed
	if armed {
		h.armed = false
		close(h.entered)
	}
	h.mu.Unlock()
	if armed {
		<-h.release
	}
}

func (h *holdReads) ReadAll(ctx context.Context, after events.Position, limit int) ([]events.Recorded, error) {
	h.hold()
	return h.Store.ReadAll(ctx, after, limit)
}

func (h *holdReads) Subscribe(ctx context.Context, after events.Position, fn func(events.Recorded) error) error {
	h.hold()
	return h.Store.Subscribe(ctx, after, fn)
}

// Requests with as_of past Config.MaxAsOf in flight are refused with 429
// and an error that says the bound and the flag raising it.
func TestAsOfRequestsAreCapped(t *testing.T) {
	st, _ := storeWithEvents(t, 3)
	h := &holdReads{Store: st, armed: true, entered: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, ViewConfig: crontasks.Config{Store: h}, MaxAsOf: 1}))
	t.Cleanup(srv.Close)
	done := make(chan answer, 1)
	go func() { done <- call(t, srv, "GET", "/v1/tasks?as_of=1", "") }()
	select {
	case <-h.entered:
	case a := <-done:
		t.Fatalf("the first as_of request ended before reading the log: %d %s", a.code, a.body)
	case <-time.After(30 * time.Second): // a bound on a hang, not a wait
		t.Fatal("the first as_of request never read the log")
	}
	a := call(t, srv, "GET", "/v1/tasks?as_of=1", "")
	var e struct {
		Error struct{ Field, Message string }
	}
	json.Unmarshal([]byte(a.body), &e)
	if a.code != 429 || e.Error.Field != "as_of" || !strings.Contains(e.Error.Message, "at most 1") || !strings.Contains(e.Error.Message, "--max-as-of") {
		t.Fatalf("a second as_of request while one is in flight: %d %s", a.code, a.body)
	}
	close(h.release)
	if a := <-done; a.code != 200 {
		t.Fatalf("the first as_of request: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "GET", "/v1/tasks?as_of=1", ""); a.code != 200 {
		t.Fatalf("an as_of request once the first ended: %d %s", a.code, a.body)
	}
}

// notStream is GET path that reads the body only when the answer is not a
// stream that goes on (which fails the test).
func notStream(t *testing.T, srv *httptest.Server, path string) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+path, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == 200 {
		t.Fatalf("GET %s: 200, a stream past the cap", path)
	}
	b, _ := io.ReadAll(resp.Body)
	return answer{code: resp.StatusCode, body: string(b)}
}
