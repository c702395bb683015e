package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/httpapi"
)

// refusingStore is the in-memory store whose appends are refused with
// cond (an events condition) while cond is set, and which says so through
// events.WriteStatusReader, as the embedded store does.
type refusingStore struct {
	events.Store
	mu      sync.Mutex
	cond    error
	restart bool
	refused uint64
}

func (s *refusingStore) set(cond error, restart bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cond, s.restart, s.refused = cond, restart, 0
}

func (s *refusingStore) refusal() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cond == nil {
		return nil
	}
	s.refused++
	return fmt.Errorf("%w: /srv/cronactor/data: appends refused: write /srv/cronactor/data/events/000002.log: read-only file system", s.cond)
}

func (s *refusingStore) Append(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	if err := s.refusal(); err != nil {
		return events.AppendResult{}, err
	}
	return s.Store.Append(ctx, stream, exp, evs...)
}

func (s *refusingStore) AppendAsync(ctx context.Context, stream string, exp events.ExpectedVersion, evs []events.Proposed, done func(events.AppendResult, error)) {
	if err := s.refusal(); err != nil {
		done(events.AppendResult{}, err)
		return
	}
	events.AppendAsync(ctx, s.Store, stream, exp, evs, done)
}

func (s *refusingStore) WriteStatus() events.WriteStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cond == nil {
		return events.WriteStatus{}
	}
	return events.WriteStatus{Err: fmt.Errorf("%w: /srv/cronactor/data", s.cond), Refused: s.refused, RestartNeeded: s.restart}
}

type health struct {
	Status string `json:"status"`
	Store  struct {
		Writable       bool   `json:"writable"`
		Condition      string `json:"condition"`
		Message        string `json:"message"`
		RefusedAppends uint64 `json:"refused_appends"`
		RestartNeeded  bool   `json:"restart_needed"`
	} `json:"store"`
}

func getHealth(t *testing.T, a answer) health {
	t.Helper()
	var h health
	if err := json.Unmarshal([]byte(a.body), &h); err != nil {
		t.Fatalf("healthz body %s: %v", a.body, err)
	}
	return h
}

// TestReadOnlyStoreIs503: while the store refuses appends because its data
// directory is read-only, /healthz answers 503 with the condition and the
// count of refused appends, every kind of write answers 503 with a JSON
// error naming the condition (and Retry-After while the store resumes by
// itself), reads answer; a store that needs a restart says so; once the
// store is writable again, /healthz is 200 and writes work.
func TestReadOnlyStoreIs503(t *testing.T) {
	st := &refusingStore{Store: memStore(t)}
	srv := rig{store: st, api: httpapi.Config{Logger: slog.New(slog.DiscardHandler)}}.serve(t)

	if h := call(t, srv, "GET", "/healthz", ""); h.code != http.StatusOK || !getHealth(t, h).Store.Writable {
		t.Fatalf("healthz of a writable store: %d %s", h.code, h.body)
	}
	a := call(t, srv, "POST", "/v1/tasks", `{`+good+`}`)
	if a.code != http.StatusCreated {
		t.Fatalf("create: %d %s", a.code, a.body)
	}
	var task struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(a.body), &task); err != nil {
		t.Fatal(err)
	}
	a = call(t, srv, "POST", "/v1/tasks", `{"name":"paused",`+strings.TrimPrefix(good, `"name":"poll",`)+`}`)
	var paused struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(a.body), &paused); err != nil {
		t.Fatal(err)
	}
	if a := call(t, srv, "POST", "/v1/tasks/"+paused.ID+"/pause", ""); a.code != http.StatusOK {
		t.Fatalf("pause: %d %s", a.code, a.body)
	}

	st.set(events.ErrReadOnly, false)
	writes := []struct{ method, path, body string }{
		{"POST", "/v1/tasks", `{"name":"new",` + strings.TrimPrefix(good, `"name":"poll",`) + `}`},
		{"PATCH", "/v1/tasks/" + task.ID, `{"interval":"2m"}`},
		{"POST", "/v1/tasks/" + task.ID + "/pause", ""},
		{"POST", "/v1/tasks/" + paused.ID + "/resume", ""},
		{"POST", "/v1/tasks/" + task.ID + "/trigger", ""},
		{"DELETE", "/v1/tasks/" + task.ID, ""},
	}
	for _, w := range writes {
		a := call(t, srv, w.method, w.path, w.body)
		if a.code != http.StatusServiceUnavailable {
			t.Fatalf("%s %s on a read-only store: %d %s, want 503", w.method, w.path, a.code, a.body)
		}
		var body struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(a.body), &body); err != nil || !strings.Contains(body.Error.Message, "store: data directory is read-only") {
			t.Fatalf("%s %s: 503 body %s (%v) does not name the condition", w.method, w.path, a.body, err)
		}
		if strings.Contains(a.body, "/srv/cronactor") {
			t.Errorf("the answer shows a path: %s", a.body)
		}
	}
	resp, err := http.Post(srv.URL+"/v1/tasks/"+task.ID+"/pause", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("pause on a read-only store: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if r := call(t, srv, "GET", "/v1/tasks/"+task.ID, ""); r.code != http.StatusOK {
		t.Fatalf("read on a read-only store: %d %s", r.code, r.body)
	}
	hz := call(t, srv, "GET", "/healthz", "")
	h := getHealth(t, hz)
	if hz.code != http.StatusServiceUnavailable || h.Status != "failing" || h.Store.Writable || h.Store.Condition != "read_only" ||
		!strings.Contains(h.Store.Message, "read-only") || h.Store.RestartNeeded || h.Store.RefusedAppends < uint64(len(writes)) {
		t.Fatalf("healthz on a read-only store: %d %s", hz.code, hz.body)
	}
	if strings.Contains(hz.body, "/srv/cronactor") {
		t.Errorf("/healthz shows a path: %s", hz.body)
	}

	st.set(events.ErrReadOnly, true)
	if a := call(t, srv, "POST", "/v1/tasks/"+task.ID+"/pause", ""); a.code != http.StatusServiceUnavailable || !strings.Contains(a.body, "restart needed") {
		t.Fatalf("pause on a store that needs a restart: %d %s", a.code, a.body)
	}
	if hz := call(t, srv, "GET", "/healthz", ""); hz.code != http.StatusServiceUnavailable || !getHealth(t, hz).Store.RestartNeeded ||
		!strings.Contains(getHealth(t, hz).Store.Message, "restart needed") {
		t.Fatalf("healthz on a store that needs a restart: %d %s", hz.code, hz.body)
	}
	st.set(events.ErrWriteFailed, true)
	if a := call(t, srv, "POST", "/v1/tasks/"+task.ID+"/pause", ""); a.code != http.StatusServiceUnavailable || !strings.Contains(a.body, "write to the event store failed") {
		t.Fatalf("pause after a failed write: %d %s", a.code, a.body)
	}
	if hz := call(t, srv, "GET", "/healthz", ""); hz.code != http.StatusServiceUnavailable || getHealth(t, hz).Store.Condition != "write_failed" {
		t.Fatalf("healthz after a failed write: %d %s", hz.code, hz.body)
	}

	// A networked store's server unreachable (issue 38 item 12): 503 and
	// why, and the pause is refused with a Retry-After (it resumes by
	// itself).
	st.set(events.ErrUnreachable, false)
	if hz := call(t, srv, "GET", "/healthz", ""); hz.code != http.StatusServiceUnavailable || getHealth(t, hz).Status != "failing" ||
		getHealth(t, hz).Store.Condition != "unreachable" || !strings.Contains(getHealth(t, hz).Store.Message, "server cannot be reached") {
		t.Fatalf("healthz with the store's server unreachable: %d %s", hz.code, hz.body)
	}
	if a := call(t, srv, "POST", "/v1/tasks/"+task.ID+"/pause", ""); a.code != http.StatusServiceUnavailable || !strings.Contains(a.body, "server cannot be reached") {
		t.Fatalf("pause with the store's server unreachable: %d %s", a.code, a.body)
	}

	st.set(nil, false)
	if hz := call(t, srv, "GET", "/healthz", ""); hz.code != http.StatusOK || getHealth(t, hz).Status != "ok" {
		t.Fatalf("healthz once writable again: %d %s", hz.code, hz.body)
	}
	if a := call(t, srv, "POST", "/v1/tasks/"+task.ID+"/pause", ""); a.code != http.StatusOK {
		t.Fatalf("pause once writable again: %d %s", a.code, a.body)
	}
}
