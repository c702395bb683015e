package httpapi_test

import (
	"context"
	"net/http/httptest"
	"runtime"
	"time"

	"encoding/json"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/google/uuid"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// created makes the task of `good` and returns its ID.
func created(t *testing.T, a answer) string {
	t.Helper()
	if a.code != http.StatusCreated {
		t.Fatalf("create: %d %s", a.code, a.body)
	}
	var row struct{ ID string }
	if err := json.Unmarshal([]byte(a.body), &row); err != nil {
		t.Fatal(err)
	}
	return row.ID
}

type row struct {
	Version  uint64          `json:"version"`
	Priority int             `json:"priority"`
	Payload  json.RawMessage `json:"payload"`
	Interval string          `json:"interval"`
	Status   string          `json:"status"`
}

func decodeRow(t *testing.T, a answer) row {
	t.Helper()
	var r row
	if err := json.Unmarshal([]byte(a.body), &r); err != nil {
		t.Fatalf("%v: %s", err, a.body)
	}
	return r
}

// lockstep is a clock that makes writers through the scheduler's API take
// turns at the task's actor: before the actor takes its next message from
// them, every writer still going must have one waiting. The actor then
// answers their k-th calls before any of their (k+1)-th: a handler that
// reads, merges and writes back has both reads answered before either
// write, every time. It holds the actor after it processed a message (in
// End), never a caller, so no lock a caller holds is kept held.
type lockstep struct {
	*clock.Virtual
	mu       sync.Mutex
	cond     *sync.Cond
	writers  int // writers still going
	inFlight int // calls from the API not yet processed by a task actor
	begun    int // calls from the API so far
}

func newLockstep(v *clock.Virtual) *lockstep {
	l := &lockstep{Virtual: v}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// calledFrom reports whether fn (a function name fragment) is on the
// caller's stack.
func calledFrom(fn string) bool {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, fn) {
			return true
		}
		if !more {
			return false
		}
	}
}

func (l *lockstep) Begin() {
	// Start and Stop talk to the clock's and the queue's actors, not to a
	// task's. A task actor's append in flight counts as the call that
	// decided it, still in flight: its answer is processed (and ended) by
	// the actor as a message, and the call is answered then.
	if calledFrom("scheduler.(*Scheduler)") && !calledFrom("scheduler.(*Scheduler).Start") && !calledFrom("scheduler.(*Scheduler).Stop") ||
		calledFrom("task.(*Actor).append") {
		l.mu.Lock()
		l.inFlight++
		l.begun++
		l.cond.Broadcast()
		l.mu.Unlock()
	} else if calledFrom("task.(*Actor).maybeLeave") {
		// A resting actor's last message to itself: it ends in the actor.
		l.mu.Lock()
		l.inFlight++
		l.mu.Unlock()
	}
	l.Virtual.Begin()
}

func (l *lockstep) End() {
	if calledFrom("task.(*Actor)") {
		l.mu.Lock()
		l.inFlight--
		for l.inFlight < l.writers {
			l.cond.Wait()
		}
		l.mu.Unlock()
	}
	l.Virtual.End()
}

// run runs the writers in lockstep and waits for them. prime is one call
// into the task's actor that holds it until every writer has sent its
// first call.
func (l *lockstep) run(prime func(), writers ...func()) {
	l.mu.Lock()
	l.writers = len(writers)
	before := l.begun
	l.mu.Unlock()
	primed := make(chan struct{})
	go func() { prime(); close(primed) }()
	l.mu.Lock()
	for l.begun == before { // the primer has been sent
		l.cond.Wait()
	}
	l.mu.Unlock()
	var wg sync.WaitGroup
	for _, w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w()
			l.mu.Lock()
			l.writers--
			l.cond.Broadcast()
			l.mu.Unlock()
		}()
	}
	wg.Wait()
	<-primed
}

// handlerOn is server's handler, with the scheduler on clk, called in
// process.
func handlerOn(t *testing.T, clk clock.Clock) (http.Handler, *scheduler.Scheduler) {
	t.Helper()
	h, s, _ := rig{sched: scheduler.Config{Clock: clk}}.start(t)
	return h, s
}

func serve(h http.Handler, method, path, body string) answer {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	return answer{code: rec.Code, body: rec.Body.String()}
}

// Two PATCHes of different fields sent at once both survive: the update is
// decided by the task's actor against its current state, not read, merged
// and written back by the handler (where the later write put back the
// field the other had just changed).
func TestConcurrentPatchesOfDifferentFieldsBothSurvive(t *testing.T) {
	clk := newLockstep(clock.NewVirtual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	h, s := handlerOn(t, clk)
	id := created(t, serve(h, "POST", "/v1/tasks", `{`+good+`}`))
	// Keep the task's actor in memory (a resting task's actor leaves after
	// each call), so that both calls meet in its mailbox.
	if _, err := s.TaskPID(context.Background(), uuid.MustParse(id)); err != nil {
		t.Fatal(err)
	}
	answers := make([]answer, 2)
	clk.run(func() { s.Task(context.Background(), uuid.MustParse(id)) },
		func() { answers[0] = serve(h, "PATCH", "/v1/tasks/"+id, `{"priority":5}`) },
		func() { answers[1] = serve(h, "PATCH", "/v1/tasks/"+id, `{"payload":{"page":2}}`) },
	)
	for _, a := range answers {
		if a.code != http.StatusOK {
			t.Fatalf("PATCH: %d %s", a.code, a.body)
		}
	}
	answer := serve(h, "GET", "/v1/tasks/"+id, "")
	if strings.Contains(answer.body, "_fold") {
		t.Fatalf("the API shows the view's stored task state: %s", answer.body)
	}
	got := decodeRow(t, answer)
	var payload struct{ Page int }
	json.Unmarshal(got.Payload, &payload)
	if got.Priority != 5 || payload.Page != 2 {
		t.Fatalf("after both PATCHes: priority %d, payload %s: one PATCH was lost", got.Priority, got.Payload)
	}
}

func TestETagAndIfMatch(t *testing.T) {
	srv := server(t, "")
	create := call(t, srv, "POST", "/v1/tasks", `{`+good+`}`)
	id := created(t, create)
	get := func() (row, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/v1/tasks/"+id, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r row
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			t.Fatal(err)
		}
		return r, resp.Header.Get("ETag")
	}
	r0, tag0 := get()
	if tag0 != strconv.Quote(strconv.FormatUint(r0.Version, 10)) {
		t.Fatalf("GET ETag %q for version %d", tag0, r0.Version)
	}
	// The right version: applied, and the answer carries the new ETag.
	req, _ := http.NewRequest("PATCH", srv.URL+"/v1/tasks/"+id, strings.NewReader(`{"priority":7}`))
	req.Header.Set("If-Match", tag0)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r1, tag1 := get()
	if resp.StatusCode != http.StatusOK || r1.Priority != 7 || resp.Header.Get("ETag") != tag1 || tag1 == tag0 {
		t.Fatalf("PATCH with a current If-Match: %d, ETag %q (GET says %q, before %q), priority %d",
			resp.StatusCode, resp.Header.Get("ETag"), tag1, tag0, r1.Priority)
	}
	// A stale version: 412 naming If-Match, and nothing recorded.
	for _, c := range []struct{ method, path, body string }{
		{"PATCH", "/v1/tasks/" + id, `{"priority":9}`},
		{"POST", "/v1/tasks/" + id + "/pause", ``},
		{"DELETE", "/v1/tasks/" + id, ``},
	} {
		a := call(t, srv, c.method, c.path, c.body, "If-Match", tag0)
		if a.code != http.StatusPreconditionFailed || a.field != "If-Match" {
			t.Fatalf("%s %s with a stale If-Match: %d %s", c.method, c.path, a.code, a.body)
		}
		if r, tag := get(); tag != tag1 || r.Priority != 7 || r.Status != "active" {
			t.Fatalf("after a 412 the task changed: %+v ETag %s", r, tag)
		}
	}
	ev := call(t, srv, "GET", "/v1/tasks/"+id+"/events", "")
	var list struct{ Events []json.RawMessage }
	if err := json.Unmarshal([]byte(ev.body), &list); err != nil || len(list.Events) != 2 {
		t.Fatalf("events after one update and three refused writes: %d, want 2", len(list.Events))
	}
	// Weak tags and * are accepted; a malformed one is a 400.
	if a := call(t, srv, "POST", "/v1/tasks/"+id+"/pause", ``, "If-Match", "W/"+tag1); a.code != http.StatusOK {
		t.Fatalf("pause with a weak current tag: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "POST", "/v1/tasks/"+id+"/resume", ``, "If-Match", "*"); a.code != http.StatusOK {
		t.Fatalf("resume with If-Match *: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "DELETE", "/v1/tasks/"+id, ``, "If-Match", "seven"); a.code != http.StatusBadRequest || a.field != "If-Match" {
		t.Fatalf("malformed If-Match: %d %s", a.code, a.body)
	}
}
