package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/internal/httpapi"
	"github.com/cronactor/cronactor/projections/history"
	"github.com/google/uuid"
)

// storeWithEvents returns a store holding one task stream of n events.
func storeWithEvents(t *testing.T, n int) (*embedded.Store, uuid.UUID) {
	t.Helper()
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	id := uuid.MustParse("7b1e4c9a-3f2d-4e8b-9a6c-5d4e3f2a1b0c")
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	evs := []events.Event{events.TaskCreated{TaskID: id, Name: "poll", Owner: "o", Kind: "noop",
		Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, Timebox: events.Duration(30 * time.Second), NextRun: at}}
	for len(evs) < n {
		evs = append(evs, events.TaskPaused{}, events.TaskResumed{NextRun: at})
	}
	var ps []events.Proposed
	for i, e := range evs[:n] {
		p, err := events.Propose(e, uuid.Nil, at.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if _, err := st.Append(context.Background(), events.TaskStream(id), events.NoStream, ps...); err != nil {
		t.Fatal(err)
	}
	return st, id
}

// TestEventsPages: GET /v1/tasks/{id}/events answers at most limit events
// (EventsDefaultLimit when not given) and a "next" to continue after; the
// pages together are the whole stream, in order.
func TestEventsPages(t *testing.T) {
	st, id := storeWithEvents(t, 7)
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st}))
	t.Cleanup(srv.Close)
	path := "/v1/tasks/" + id.String() + "/events"

	var versions []uint64
	after, pages := "", 0
	for {
		q := "?limit=3"
		if after != "" {
			q += "&after=" + after
		}
		a := call(t, srv, "GET", path+q, "")
		if a.code != 200 {
			t.Fatalf("page %d: %d %s", pages, a.code, a.body)
		}
		var page history.EventList
		if err := json.Unmarshal([]byte(a.body), &page); err != nil {
			t.Fatal(err)
		}
		if len(page.Events) > 3 {
			t.Fatalf("page %d has %d events, limit 3", pages, len(page.Events))
		}
		for _, e := range page.Events {
			versions = append(versions, e.Version)
		}
		pages++
		if page.Next == "" {
			break
		}
		if pages > 10 {
			t.Fatal("pages never end")
		}
		after = page.Next
	}
	if fmt.Sprint(versions) != "[0 1 2 3 4 5 6]" || pages != 3 {
		t.Fatalf("read versions %v in %d pages; want 0…6 in 3", versions, pages)
	}

	// Without parameters: one page of up to EventsDefaultLimit, no next.
	var all history.EventList
	a := call(t, srv, "GET", path, "")
	if err := json.Unmarshal([]byte(a.body), &all); err != nil || len(all.Events) != 7 || all.Next != "" {
		t.Fatalf("default page: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "GET", path+"?after=6", ""); a.code != 200 || !strings.Contains(a.body, `"events": []`) || strings.Contains(a.body, `"next"`) {
		t.Fatalf("after the last event: %d %s", a.code, a.body)
	}
	for _, c := range []struct{ query, field string }{
		{"?limit=0", "limit"},
		{fmt.Sprintf("?limit=%d", httpapi.EventsMaxLimit+1), "limit"},
		{"?limit=many", "limit"},
		{"?after=-1", "after"},
		{"?after=v3", "after"},
		{"?cursor=3", "cursor"},
	} {
		if a := call(t, srv, "GET", path+c.query, ""); a.code != 400 || a.field != c.field {
			t.Errorf("%s: %d %s; want 400 naming %q", c.query, a.code, a.body, c.field)
		}
	}
}

// TestEventsDefaultLimit: a long stream is not answered in one piece.
func TestEventsDefaultLimit(t *testing.T) {
	st, id := storeWithEvents(t, httpapi.EventsDefaultLimit+5)
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st}))
	t.Cleanup(srv.Close)
	var page history.EventList
	a := call(t, srv, "GET", "/v1/tasks/"+id.String()+"/events", "")
	if err := json.Unmarshal([]byte(a.body), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != httpapi.EventsDefaultLimit || page.Next != fmt.Sprint(httpapi.EventsDefaultLimit-1) {
		t.Fatalf("first page: %d events, next %q", len(page.Events), page.Next)
	}
}

// failingStore fails every read with an error carrying internal detail.
type failingStore struct{ events.Store }

var errInternal = errors.New("open /var/lib/cronactor/secret/000042.sst: input/output error")

func (failingStore) ReadStream(context.Context, string, uint64, int) ([]events.Recorded, error) {
	return nil, errInternal
}

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestInternalErrorIsGeneric: a 500 tells the client an error ID and
// nothing of the internal error; the log has the detail under that ID.
func TestInternalErrorIsGeneric(t *testing.T) {
	var logs lockedBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: failingStore{}, Logger: logger}))
	t.Cleanup(srv.Close)
	a := call(t, srv, "GET", "/v1/tasks/7b1e4c9a-3f2d-4e8b-9a6c-5d4e3f2a1b0c/events", "")
	if a.code != 500 {
		t.Fatalf("got %d %s, want 500", a.code, a.body)
	}
	if strings.Contains(a.body, "/var/lib") || strings.Contains(a.body, "sst") || strings.Contains(a.body, "input/output") {
		t.Errorf("the 500 body echoes the internal error: %s", a.body)
	}
	var body struct {
		Error struct{ Message, ID string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &body); err != nil || body.Error.Message == "" {
		t.Fatalf("500 body %s: %v", a.body, err)
	}
	if _, err := uuid.Parse(body.Error.ID); err != nil {
		t.Fatalf("500 body carries no error id: %s", a.body)
	}
	var logged struct {
		ErrorID string `json:"error_id"`
		Err     string `json:"err"`
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if json.Unmarshal([]byte(line), &logged) == nil && logged.ErrorID == body.Error.ID {
			break
		}
	}
	if logged.ErrorID != body.Error.ID || !strings.Contains(logged.Err, errInternal.Error()) {
		t.Errorf("the log does not hold the detail under id %s:\n%s", body.Error.ID, logs.String())
	}
}

// TestAsOfQueries: as_of reads the task list and a task as they were.
func TestAsOfQueries(t *testing.T) {
	srv := server(t, "")
	a := call(t, srv, "POST", "/v1/tasks", `{`+good+`}`)
	var created struct {
		ID       string
		Position string
	}
	if err := json.Unmarshal([]byte(a.body), &created); err != nil || a.code != 201 {
		t.Fatalf("create: %d %s", a.code, a.body)
	}
	if p := call(t, srv, "POST", "/v1/tasks/"+created.ID+"/pause", ""); p.code != 200 {
		t.Fatalf("pause: %d %s", p.code, p.body)
	}
	if g := call(t, srv, "GET", "/v1/tasks/"+created.ID+"?as_of="+created.Position, ""); g.code != 200 || !strings.Contains(g.body, `"status": "active"`) {
		t.Fatalf("as of the create: %d %s", g.code, g.body)
	}
	if l := call(t, srv, "GET", "/v1/tasks?status=paused&as_of="+created.Position, ""); l.code != 200 || strings.Contains(l.body, created.ID) {
		t.Fatalf("paused tasks as of the create: %d %s", l.code, l.body)
	}
	if l := call(t, srv, "GET", "/v1/tasks?status=paused", ""); !strings.Contains(l.body, created.ID) {
		t.Fatalf("paused tasks now: %d %s", l.code, l.body)
	}
	if g := call(t, srv, "GET", "/v1/tasks?as_of=yesterday", ""); g.code != 400 || g.field != "as_of" {
		t.Fatalf("bad as_of: %d %s", g.code, g.body)
	}
}
