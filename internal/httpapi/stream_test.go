package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/internal/httpapi"
	"github.com/cronactor/cronactor/projections/crontasks"
	"github.com/google/uuid"
)

// streamServer is server() with the stream tuned and the store at hand.
func streamServer(t *testing.T, token string, sc httpapi.StreamConfig) (*httptest.Server, *embedded.Store) {
	t.Helper()
	st := memStore(t)
	return rig{store: st, api: httpapi.Config{Token: token, Stream: sc}}.serve(t), st
}

// sse is one parsed message of a stream: an event (id and data) or a
// comment.
type sse struct {
	id, data, comment string
}

type sseReader struct {
	body io.ReadCloser
	r    *bufio.Reader
}

// openStream starts GET /v1/events/stream; the test's deadline bounds it.
func openStream(t *testing.T, srv *httptest.Server, query string, hdr ...string) *sseReader {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/events/stream"+query, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	return &sseReader{body: resp.Body, r: bufio.NewReader(resp.Body)}
}

// next reads one message (blank-line terminated).
func (s *sseReader) next() (sse, error) {
	var m sse
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return m, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if m != (sse{}) {
				return m, nil
			}
		case strings.HasPrefix(line, ":"):
			m.comment = strings.TrimSpace(line[1:])
		case strings.HasPrefix(line, "id: "):
			m.id = line[4:]
		case strings.HasPrefix(line, "data: "):
			m.data = line[6:]
		}
	}
}

// nextEvent skips comments.
func (s *sseReader) nextEvent(t *testing.T) sse {
	t.Helper()
	for {
		m, err := s.next()
		if err != nil {
			t.Fatalf("stream ended: %v", err)
		}
		if m.id != "" {
			return m
		}
	}
}

func createTask(t *testing.T, srv *httptest.Server, name string) string {
	t.Helper()
	a := call(t, srv, "POST", "/v1/tasks", `{"name":"`+name+`","owner":"o","kind":"noop","interval":"1m"}`)
	if a.code != 201 {
		t.Fatalf("create %s: %d %s", name, a.code, a.body)
	}
	var tk crontasks.Task
	json.Unmarshal([]byte(a.body), &tk)
	return tk.ID.String()
}

func TestStreamResumesWithLastEventID(t *testing.T) {
	srv, _ := streamServer(t, "", httpapi.StreamConfig{})
	ids := []string{createTask(t, srv, "a"), createTask(t, srv, "b"), createTask(t, srv, "c")}

	first := openStream(t, srv, "?from=0")
	var got []sse
	for range 3 {
		got = append(got, first.nextEvent(t))
	}
	first.body.Close()
	for i, m := range got {
		var ev map[string]any
		if err := json.Unmarshal([]byte(m.data), &ev); err != nil {
			t.Fatalf("event %d data: %v: %s", i, err, m.data)
		}
		if ev["task_id"] != ids[i] || ev["type"] != "TaskCreated" || ev["position"] != m.id {
			t.Fatalf("event %d: id %s data %s; want TaskCreated of %s at that position", i, m.id, m.data, ids[i])
		}
		// The data is an item of GET /v1/tasks/{id}/events plus task_id.
		var list struct{ Events []map[string]any }
		json.Unmarshal([]byte(call(t, srv, "GET", "/v1/tasks/"+ids[i]+"/events", "").body), &list)
		delete(ev, "task_id")
		if len(list.Events) == 0 || !reflect.DeepEqual(ev, list.Events[0]) {
			t.Fatalf("event %d: stream data %v differs from the audit endpoint's %v", i, ev, list.Events)
		}
	}

	// A fourth task while nobody listens; a client resuming after the
	// second event gets the third and the fourth, nothing twice.
	ids = append(ids, createTask(t, srv, "d"))
	again := openStream(t, srv, "?from=0", "Last-Event-ID", got[1].id)
	for _, want := range ids[2:] {
		m := again.nextEvent(t)
		if !strings.Contains(m.data, `"task_id":"`+want+`"`) {
			t.Fatalf("resumed stream: got %s, want the event of %s", m.data, want)
		}
	}
	// from alone works the same way.
	byFrom := openStream(t, srv, "?from="+got[2].id)
	if m := byFrom.nextEvent(t); !strings.Contains(m.data, ids[3]) {
		t.Fatalf("from=%s: got %s, want the event of %s", got[2].id, m.data, ids[3])
	}
}

func TestStreamStartsAtHeadAndFollows(t *testing.T) {
	srv, _ := streamServer(t, "", httpapi.StreamConfig{})
	createTask(t, srv, "old")
	s := openStream(t, srv, "")
	// The opening comment says where the stream starts; it is sent at once,
	// so the client knows it is connected before any event.
	if m, err := s.next(); err != nil || !strings.HasPrefix(m.comment, "stream after 1") {
		t.Fatalf("opening message %+v, %v", m, err)
	}
	id := createTask(t, srv, "new")
	if m := s.nextEvent(t); !strings.Contains(m.data, id) {
		t.Fatalf("got %s, want the new task's event only", m.data)
	}
}

func TestStreamHeartbeat(t *testing.T) {
	srv, _ := streamServer(t, "", httpapi.StreamConfig{Heartbeat: 5 * time.Millisecond})
	s := openStream(t, srv, "")
	for {
		m, err := s.next()
		if err != nil {
			t.Fatalf("no heartbeat before the stream ended: %v", err)
		}
		if m.comment == "heartbeat" {
			return
		}
	}
}

func TestStreamClosesOnShutdown(t *testing.T) {
	shutdown := make(chan struct{})
	reasons := make(chan string, 1)
	srv, _ := streamServer(t, "", httpapi.StreamConfig{Shutdown: shutdown, Disconnected: func(r string) { reasons <- r }})
	s := openStream(t, srv, "")
	if _, err := s.next(); err != nil {
		t.Fatal(err)
	}
	close(shutdown)
	var last sse
	for {
		m, err := s.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("stream ended with %v, want a clean end", err)
		}
		last = m
	}
	if last.comment != "server shutting down" {
		t.Fatalf("last message %+v, want the shutdown comment", last)
	}
	if r := <-reasons; r != httpapi.StreamShutdown {
		t.Fatalf("reason %q", r)
	}
}

func TestStreamNeedsTokenAndValidatesFrom(t *testing.T) {
	srv, _ := streamServer(t, "s3cret", httpapi.StreamConfig{})
	if a := call(t, srv, "GET", "/v1/events/stream", ""); a.code != 401 {
		t.Fatalf("no token: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "GET", "/v1/events/stream?from=x", "", "Authorization", "Bearer s3cret"); a.code != 400 || a.field != "from" {
		t.Fatalf("bad from: %d %s", a.code, a.body)
	}
	if a := call(t, srv, "GET", "/v1/events/stream", "", "Authorization", "Bearer s3cret", "Last-Event-ID", "x"); a.code != 400 || a.field != "Last-Event-ID" {
		t.Fatalf("bad Last-Event-ID: %d %s", a.code, a.body)
	}
	s := openStream(t, srv, "", "Authorization", "Bearer s3cret")
	if m, err := s.next(); err != nil || !strings.HasPrefix(m.comment, "stream after") {
		t.Fatalf("with token: %+v %v", m, err)
	}
}

// A client that stops reading is cut off once its buffer stays full, while
// a client that reads gets every event: one slow reader holds back nobody.
//
// The reading client is never more than Buffer events behind the log: the
// test appends the next event only once it has seen enough of those before.
// So its subscription always finds room in its buffer, and no wall-clock
// stall can cut it off, however the machine schedules its goroutines. (A
// producer that outran it would make its buffer full too, and then the
// test would ask whether the reader keeps up with MaxStall under load: it
// did not, under a loaded -race run, and was cut off after 55 of 110
// events.)
func TestStreamDisconnectsSlowClient(t *testing.T) {
	const buffer = 4
	reasons := make(chan string, 4)
	srv, st := streamServer(t, "", httpapi.StreamConfig{Buffer: buffer, MaxStall: 500 * time.Millisecond,
		Disconnected: func(r string) { reasons <- r }})

	// The slow client: a raw connection with a tiny receive window that
	// sends its request and never reads.
	d, ok := smallWindowDialer()
	if !ok {
		t.Skip("needs SO_RCVBUF (unix)")
	}
	conn, err := d.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/events/stream?from=0 HTTP/1.1\r\nHost: x\r\n\r\n")

	// The reading client follows from the start.
	fast := openStream(t, srv, "?from=0")
	seen := make(chan string, 1<<12)
	go func() {
		defer close(seen)
		for {
			m, err := fast.next()
			if err != nil {
				return
			}
			if m.id != "" {
				seen <- m.id
			}
		}
	}()
	// The events' positions: appended, and seen by the reading client.
	var want, got []string
	// next waits for the reading client's next event.
	next := func() {
		t.Helper()
		select {
		case id, ok := <-seen:
			if !ok {
				t.Fatalf("the reading client's stream ended after %d of %d events (%v)", len(got), len(want), got)
			}
			got = append(got, id)
		case <-time.After(30 * time.Second): // a bound on failure, not a wait for success
			t.Fatalf("the reading client got %d of %d events, then nothing for 30s", len(got), len(want))
		}
	}

	// Enough to fill the kernel's socket buffers (the largest send buffer
	// TCP may grow to, plus slack), then the slow client's buffer.
	n := (socketBufferMax()+2<<20)/(60<<10) + 8
	pad := `{"pad":"` + strings.Repeat("x", 60<<10) + `"}`
	stream := "load-" + uuid.NewString()
	for range n {
		for len(want)-len(got) >= buffer {
			next()
		}
		r, err := st.Append(context.Background(), stream, events.AnyVersion,
			events.Proposed{Type: "Padding", Schema: 1, At: time.Now(), Data: []byte(pad)})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, r.Position.String())
	}
	select {
	case r := <-reasons:
		if r != httpapi.StreamSlowClient {
			t.Fatalf("first stream to end ended with %q, want the slow client cut off", r)
		}
	case <-time.After(30 * time.Second): // a bound on failure, not a wait for success
		t.Fatal("the slow client was never disconnected")
	}
	// The slow client's connection is closed: reading it drains what the
	// kernel buffered, then ends.
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.Copy(io.Discard, conn); err != nil {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("the slow client's connection was left open")
		}
	}
	// The reading client got every event, in order, up to the last, and
	// its stream is still open.
	for len(got) < n {
		next()
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the reading client got the events at %v, want those at %v", got, want)
	}
	select {
	case r := <-reasons:
		t.Fatalf("the reading client's stream ended too (%q)", r)
	default:
	}
}

// socketBufferMax is the largest TCP send buffer the kernel grows to.
func socketBufferMax() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_wmem")
	if f := strings.Fields(string(b)); err == nil && len(f) == 3 {
		if v, err := strconv.Atoi(f[2]); err == nil {
			return v
		}
	}
	return 8 << 20
}
