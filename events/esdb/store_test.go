package esdb_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/esdb"
	"github.com/cronactor/cronactor/events/esdb/esdbtestserver"
)

// testLogger shows the adapter's log in verbose test output, until the
// test ends.
func testLogger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

type testWriter struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// fastOptions keep reconnection quick in tests.
func fastOptions(t testing.TB) esdb.Options {
	return esdb.Options{
		Logger:     testLogger(t),
		MinBackoff: 5 * time.Millisecond,
		MaxBackoff: 100 * time.Millisecond,
		RetryFor:   20 * time.Second,
	}
}

// fastURL makes the client give up a discovery quickly, so that the
// adapter's own retries do the waiting.
func fastURL(srv *esdbtestserver.Server) string {
	return srv.URL("maxDiscoverAttempts=2", "discoveryInterval=10", "gossipTimeout=2")
}

func openStore(t testing.TB, url string, opts esdb.Options) *esdb.Store {
	t.Helper()
	s, err := esdb.Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// backend is where a test runs: the in-process test server (always), or the
// real server named by CRONACTOR_ESDB_URL. On a real server, whose database
// may hold anything, each test works in a namespace of its own.
type backend struct {
	srv       *esdbtestserver.Server // nil on a real server
	url       string
	namespace string
}

// stream names a new stream in the global log.
func (b backend) stream() string { return events.TaskStream(uuid.New()) }

// open opens a store on the backend, in the backend's namespace.
func (b backend) open(t testing.TB, tune ...func(*esdb.Options)) *esdb.Store {
	opts := fastOptions(t)
	opts.Namespace = b.namespace
	for _, f := range tune {
		f(&opts)
	}
	return openStore(t, b.url, opts)
}

// eachBackend runs f against a fresh test server and, when
// CRONACTOR_ESDB_URL is set, against that server.
func eachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	t.Run("testserver", func(t *testing.T) {
		srv := esdbtestserver.Run(t)
		f(t, backend{srv: srv, url: fastURL(srv)})
	})
	url := os.Getenv("CRONACTOR_ESDB_URL")
	t.Run("eventstoredb", func(t *testing.T) {
		if url == "" {
			t.Skip("CRONACTOR_ESDB_URL is not set: no EventStoreDB server to test against (the in-process test server covers the adapter)")
		}
		f(t, backend{url: url, namespace: "crtest" + uuid.NewString()[:8] + "."})
	})
}

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func proposal(t testing.TB, typ string, n int) events.Proposed {
	return events.Proposed{
		ID: uuid.New(), Type: typ, Schema: 1,
		At:            time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC).Add(time.Duration(n) * time.Second),
		CausationID:   uuid.New(),
		CorrelationID: uuid.New(),
		Data:          []byte(fmt.Sprintf(`{"n":%d}`, n)),
	}
}

func TestAppendReadRoundTrip(t *testing.T) { eachBackend(t, testAppendReadRoundTrip) }

func testAppendReadRoundTrip(t *testing.T, b backend) {
	s := b.open(t)
	ctx := ctxFor(t)
	stream := b.stream()

	p0, p1, p2 := proposal(t, "TaskCreated", 0), proposal(t, "RunEnqueued", 1), proposal(t, "RunStarted", 2)
	r1, err := s.Append(ctx, stream, events.NoStream, p0)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Version != 0 || r1.Position.IsZero() {
		t.Fatalf("first append: %+v", r1)
	}
	r2, err := s.Append(ctx, stream, events.Exactly(0), p1, p2)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Version != 2 || !r1.Position.Less(r2.Position) {
		t.Fatalf("second append: %+v after %+v", r2, r1)
	}
	got, err := s.ReadStream(ctx, stream, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("read %d events, want 3", len(got))
	}
	for i, p := range []events.Proposed{p0, p1, p2} {
		g := got[i]
		if g.ID != p.ID || g.Type != p.Type || g.Schema != p.Schema || !g.At.Equal(p.At) ||
			g.CausationID != p.CausationID || g.CorrelationID != p.CorrelationID ||
			string(g.Data) != string(p.Data) || g.Version != uint64(i) || g.Stream != stream {
			t.Errorf("event %d: got %+v, want %+v", i, g, p)
		}
	}
	if got[2].Position != r2.Position {
		t.Errorf("last event at %s, append said %s", got[2].Position, r2.Position)
	}
	if got[1].Position.Commit != got[2].Position.Commit || !got[1].Position.Less(got[2].Position) {
		t.Errorf("events of one append: %s then %s; want one commit position, rising prepare", got[1].Position, got[2].Position)
	}
	part, err := s.ReadStream(ctx, stream, 1, 1)
	if err != nil || len(part) != 1 || part[0].ID != p1.ID {
		t.Fatalf("ReadStream(from 1, limit 1) = %v, %v", part, err)
	}
	past, err := s.ReadStream(ctx, stream, 7, 0)
	if err != nil || len(past) != 0 {
		t.Fatalf("reading past the end = %v, %v; want nothing", past, err)
	}
}

func TestErrors(t *testing.T) { eachBackend(t, testErrors) }

func testErrors(t *testing.T, b backend) {
	s := b.open(t)
	ctx := ctxFor(t)
	stream := b.stream()

	if _, err := s.ReadStream(ctx, stream, 0, 0); !errors.Is(err, events.ErrStreamNotFound) {
		t.Fatalf("missing stream: %v, want ErrStreamNotFound", err)
	}
	if _, err := s.Append(ctx, stream, events.Exactly(0), proposal(t, "X", 0)); !errors.Is(err, events.ErrVersionConflict) {
		t.Fatalf("Exactly(0) on a missing stream: %v", err)
	} else {
		var vc *events.VersionConflictError
		if !errors.As(err, &vc) || vc.ActualExists {
			t.Fatalf("conflict details: %#v", err)
		}
	}
	if _, err := s.Append(ctx, stream, events.NoStream, proposal(t, "X", 0), proposal(t, "X", 1)); err != nil {
		t.Fatal(err)
	}
	for _, exp := range []events.ExpectedVersion{events.NoStream, events.Exactly(0), events.Exactly(5)} {
		_, err := s.Append(ctx, stream, exp, proposal(t, "X", 2))
		var vc *events.VersionConflictError
		if !errors.As(err, &vc) || !errors.Is(err, events.ErrVersionConflict) {
			t.Fatalf("expected %s: %v, want a version conflict", exp, err)
		}
		if !vc.ActualExists || vc.Actual != 1 || vc.Stream != stream || vc.Expected != exp {
			t.Errorf("expected %s: conflict %+v, want actual 1", exp, vc)
		}
	}
	if r, err := s.Append(ctx, stream, events.AnyVersion, proposal(t, "X", 3)); err != nil || r.Version != 2 {
		t.Fatalf("AnyVersion: %+v, %v", r, err)
	}
	if _, err := s.Append(ctx, stream, events.AnyVersion); !errors.Is(err, events.ErrNoEvents) {
		t.Errorf("no events: %v", err)
	}
	for _, bad := range []string{"", "$system", "a/b"} {
		if _, err := s.Append(ctx, bad, events.AnyVersion, proposal(t, "X", 0)); !errors.Is(err, events.ErrInvalidStream) {
			t.Errorf("stream %q: %v", bad, err)
		}
	}
	noType := proposal(t, "", 0)
	if _, err := s.Append(ctx, stream, events.AnyVersion, noType); !errors.Is(err, esdb.ErrInvalidEvent) {
		t.Errorf("no type: %v", err)
	}
}

func TestRetriedAppendIsRecognised(t *testing.T) { eachBackend(t, testRetriedAppendIsRecognised) }

func testRetriedAppendIsRecognised(t *testing.T, b backend) {
	s := b.open(t)
	ctx := ctxFor(t)
	stream := b.stream()

	first := []events.Proposed{proposal(t, "A", 0), proposal(t, "B", 1)}
	r1, err := s.Append(ctx, stream, events.NoStream, first...)
	if err != nil {
		t.Fatal(err)
	}
	second := []events.Proposed{proposal(t, "C", 2)}
	r2, err := s.Append(ctx, stream, events.Exactly(1), second...)
	if err != nil {
		t.Fatal(err)
	}
	// Retries of both appends, after the stream moved on.
	again1, err := s.Append(ctx, stream, events.NoStream, first...)
	if err != nil || again1 != r1 {
		t.Fatalf("retry of the first append = %+v, %v; want %+v", again1, err, r1)
	}
	again2, err := s.Append(ctx, stream, events.Exactly(1), second...)
	if err != nil || again2 != r2 {
		t.Fatalf("retry of the second append = %+v, %v; want %+v", again2, err, r2)
	}
	anyOne := []events.Proposed{proposal(t, "D", 3)}
	r3, err := s.Append(ctx, stream, events.AnyVersion, anyOne...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, stream, events.AnyVersion, proposal(t, "E", 4)); err != nil {
		t.Fatal(err)
	}
	again3, err := s.Append(ctx, stream, events.AnyVersion, anyOne...)
	if err != nil || again3 != r3 {
		t.Fatalf("retry of an AnyVersion append = %+v, %v; want %+v", again3, err, r3)
	}
	if got, err := s.ReadStream(ctx, stream, 0, 0); err != nil || len(got) != 5 {
		t.Fatalf("stream holds %d events (%v), want 5", len(got), err)
	}
	// Same place, different event: a conflict, not a retry.
	if _, err := s.Append(ctx, stream, events.Exactly(1), proposal(t, "C", 2)); !errors.Is(err, events.ErrVersionConflict) {
		t.Fatalf("different event at the same place: %v", err)
	}
}

func TestReadAllFiltersAndPages(t *testing.T) { eachBackend(t, testReadAllFiltersAndPages) }

func testReadAllFiltersAndPages(t *testing.T, b backend) {
	s := b.open(t, func(o *esdb.Options) { o.PageSize = 3 }) // several pages
	ctx := ctxFor(t)
	other := "other-" + uuid.NewString()

	var want []uuid.UUID
	for i := range 5 {
		if b.srv != nil {
			b.srv.AppendRaw("$stats-node", "$statsCollected", []byte(`{}`), nil)
		}
		if _, err := s.Append(ctx, other, events.AnyVersion, proposal(t, "OrderPlaced", i)); err != nil {
			t.Fatal(err)
		}
		p := proposal(t, "TaskCreated", i)
		if _, err := s.Append(ctx, b.stream(), events.NoStream, p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p.ID)
	}
	all, err := s.ReadAll(ctx, events.Start, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(want) {
		t.Fatalf("ReadAll: %d events, want %d", len(all), len(want))
	}
	for i := range all {
		if all[i].ID != want[i] {
			t.Fatalf("event %d: %s, want %s", i, all[i].ID, want[i])
		}
	}
	rest, err := s.ReadAll(ctx, all[1].Position, 2)
	if err != nil || len(rest) != 2 || rest[0].ID != want[2] || rest[1].ID != want[3] {
		t.Fatalf("ReadAll(after 2nd, limit 2) = %v, %v", rest, err)
	}
	none, err := s.ReadAll(ctx, all[4].Position, 0)
	if err != nil || len(none) != 0 {
		t.Fatalf("ReadAll after the last = %v, %v", none, err)
	}

	// With "" every non-system stream (of the namespace) is part of the
	// global log.
	every := b.open(t, func(o *esdb.Options) { o.StreamPrefixes = []string{""} })
	got, err := every.ReadAll(ctx, events.Start, 0)
	if err != nil || len(got) != 10 {
		t.Fatalf("every stream: %d events, %v; want 10", len(got), err)
	}
}

// collector gathers subscription deliveries and signals each one.
type collector struct {
	mu   sync.Mutex
	got  []events.Recorded
	seen chan struct{}
}

func newCollector() *collector { return &collector{seen: make(chan struct{}, 1<<16)} }

func (c *collector) handle(r events.Recorded) error {
	c.mu.Lock()
	c.got = append(c.got, r)
	c.mu.Unlock()
	c.seen <- struct{}{}
	return nil
}

// waitFor blocks until n deliveries arrived in total.
func (c *collector) waitFor(t testing.TB, ctx context.Context, n int) []events.Recorded {
	t.Helper()
	for {
		c.mu.Lock()
		got := append([]events.Recorded(nil), c.got...)
		c.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-c.seen:
		case <-ctx.Done():
			t.Fatalf("waited for %d deliveries, have %d: %v", n, len(got), ctx.Err())
		}
	}
}

func subscribe(t testing.TB, s *esdb.Store, after events.Position, c *collector) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Subscribe(ctx, after, c.handle) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func checkExactly(t testing.TB, got []events.Recorded, want []uuid.UUID) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("delivered %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].ID != want[i] {
			t.Fatalf("delivery %d: %s, want %s", i, got[i].ID, want[i])
		}
		if i > 0 && !got[i-1].Position.Less(got[i].Position) {
			t.Fatalf("delivery %d at %s does not follow %s", i, got[i].Position, got[i-1].Position)
		}
	}
}

func TestSubscribeCatchUpThenLive(t *testing.T) { eachBackend(t, testSubscribeCatchUpThenLive) }

func testSubscribeCatchUpThenLive(t *testing.T, b backend) {
	s := b.open(t)
	ctx := ctxFor(t)
	other := "other-" + uuid.NewString()
	var want []uuid.UUID
	appendOne := func(i int) events.AppendResult {
		p := proposal(t, "TaskCreated", i)
		if _, err := s.Append(ctx, other, events.AnyVersion, proposal(t, "Other", i)); err != nil {
			t.Fatal(err)
		}
		r, err := s.Append(ctx, b.stream(), events.NoStream, p)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, p.ID)
		return r
	}
	first := appendOne(0)
	appendOne(1)

	c := newCollector()
	stop := subscribe(t, s, events.Start, c)
	c.waitFor(t, ctx, 2)
	for i := 2; i < 6; i++ {
		appendOne(i)
	}
	checkExactly(t, c.waitFor(t, ctx, 6), want)
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Subscribe after cancel = %v, want context.Canceled", err)
	}

	// From a position: exclusive.
	c2 := newCollector()
	subscribe(t, s, first.Position, c2)
	checkExactly(t, c2.waitFor(t, ctx, 5), want[1:])
}

func TestSubscribeHandlerErrorAndClose(t *testing.T) {
	eachBackend(t, testSubscribeHandlerErrorAndClose)
}

func testSubscribeHandlerErrorAndClose(t *testing.T, b backend) {
	s := b.open(t)
	ctx := ctxFor(t)
	if _, err := s.Append(ctx, b.stream(), events.NoStream, proposal(t, "A", 0)); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := s.Subscribe(ctx, events.Start, func(events.Recorded) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("handler error: Subscribe = %v", err)
	}

	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.Subscribe(context.Background(), events.Start, func(events.Recorded) error {
			close(started)
			return nil
		})
	}()
	<-started
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, events.ErrClosed) {
		t.Fatalf("Subscribe after Close = %v, want ErrClosed", err)
	}
	if _, err := s.Append(ctx, b.stream(), events.NoStream, proposal(t, "A", 0)); !errors.Is(err, events.ErrClosed) {
		t.Fatalf("Append after Close = %v", err)
	}
	if _, err := s.ReadAll(ctx, events.Start, 0); !errors.Is(err, events.ErrClosed) {
		t.Fatalf("ReadAll after Close = %v", err)
	}
}

// TestSubscriptionSurvivesServerRestart: the server goes away in the
// middle of a subscription and comes back; the subscription resumes from
// the last event handled, losing nothing and handling nothing twice.
func TestSubscriptionSurvivesServerRestart(t *testing.T) {
	srv := esdbtestserver.Run(t)
	s := openStore(t, fastURL(srv), fastOptions(t))
	ctx := ctxFor(t)
	var want []uuid.UUID
	appendN := func(from, to int) {
		for i := from; i < to; i++ {
			p := proposal(t, "RunStarted", i)
			if _, err := s.Append(ctx, events.TaskStream(uuid.New()), events.NoStream, p); err != nil {
				t.Fatal(err)
			}
			want = append(want, p.ID)
		}
	}
	appendN(0, 5)
	c := newCollector()
	subscribe(t, s, events.Start, c)
	c.waitFor(t, ctx, 5)

	srv.Stop()
	// Written while the subscription is down, by another program.
	for i := 5; i < 8; i++ {
		p := proposal(t, "RunStarted", i)
		data, _ := p.Data, 0
		srv.AppendRaw(events.TaskStream(uuid.New()), p.Type, data, []byte(`{"at":"2026-01-02T03:04:05Z","schema":1}`))
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	// Reads find the server again (the client alone would not).
	if all, err := s.ReadAll(ctx, events.Start, 0); err != nil || len(all) != 8 {
		t.Fatalf("ReadAll after the restart: %d events, %v; want 8", len(all), err)
	}
	appendN(8, 12) // and so do appends
	got := c.waitFor(t, ctx, 12)
	if len(got) != 12 {
		t.Fatalf("delivered %d, want 12", len(got))
	}
	for i, r := range got {
		if i > 0 && !got[i-1].Position.Less(r.Position) {
			t.Fatalf("delivery %d at %s repeats or precedes %s", i, r.Position, got[i-1].Position)
		}
	}
	checkExactly(t, got[:5], want[:5])
	checkExactly(t, got[8:], want[5:])
	// Nothing more arrives: a duplicate would show up as a 13th delivery
	// once the subscription caught up with one more event.
	p := proposal(t, "RunStarted", 12)
	if _, err := s.Append(ctx, events.TaskStream(uuid.New()), events.NoStream, p); err != nil {
		t.Fatal(err)
	}
	got = c.waitFor(t, ctx, 13)
	if len(got) != 13 || got[12].ID != p.ID {
		t.Fatalf("after the restart: %d deliveries, last %s; want 13 ending with %s", len(got), got[len(got)-1].ID, p.ID)
	}
}

// TestServerDownAtStart: the store is opened while nothing listens; calls
// made then succeed once the server is up.
func TestServerDownAtStart(t *testing.T) {
	srv, err := esdbtestserver.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	s := openStore(t, fastURL(srv), fastOptions(t))
	ctx := ctxFor(t)

	c := newCollector()
	subscribe(t, s, events.Start, c)
	p := proposal(t, "TaskCreated", 0)
	appended := make(chan error, 1)
	go func() {
		_, err := s.Append(ctx, events.TaskStream(uuid.New()), events.NoStream, p)
		appended <- err
	}()
	// A call with a short deadline gives up while the server is down.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = s.ReadAll(short, events.Start, 0)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ReadAll with the server down = %v, want the deadline", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := <-appended; err != nil {
		t.Fatalf("append across the server's start: %v", err)
	}
	got := c.waitFor(t, ctx, 1)
	if got[0].ID != p.ID {
		t.Fatalf("delivered %s, want %s", got[0].ID, p.ID)
	}
}

func TestUnavailableAfterRetryFor(t *testing.T) {
	srv, err := esdbtestserver.New()
	if err != nil {
		t.Fatal(err)
	}
	opts := fastOptions(t)
	opts.RetryFor = 100 * time.Millisecond
	s := openStore(t, fastURL(srv), opts)
	_, err = s.ReadStream(ctxFor(t), "task-x", 0, 0)
	if !errors.Is(err, esdb.ErrUnavailable) {
		t.Fatalf("ReadStream with no server = %v, want ErrUnavailable", err)
	}
}

// TestConcurrentAppendsDuringClose: closing the store while appends are in
// flight must not crash the process (the client panics when closed under a
// failing call), and every append ends with a result or an error.
func TestConcurrentAppendsDuringClose(t *testing.T) {
	srv := esdbtestserver.Run(t)
	s, err := esdb.Open(context.Background(), fastURL(srv), fastOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t)
	var wg sync.WaitGroup
	started := make(chan struct{}, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				_, err := s.Append(ctx, events.TaskStream(uuid.New()), events.NoStream, proposal(t, "A", i))
				if i == 0 {
					started <- struct{}{}
				}
				if errors.Is(err, events.ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	for range 8 {
		<-started
	}
	srv.Stop() // failures in flight while closing
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

// TestNamespaces: two stores in different namespaces of one server share
// nothing.
func TestNamespaces(t *testing.T) {
	srv := esdbtestserver.Run(t)
	ctx := ctxFor(t)
	b := backend{srv: srv, url: fastURL(srv)}
	blue := b.open(t, func(o *esdb.Options) { o.Namespace = "blue." })
	green := b.open(t, func(o *esdb.Options) { o.Namespace = "green." })
	stream := events.TaskStream(uuid.New())
	if _, err := blue.Append(ctx, stream, events.NoStream, proposal(t, "A", 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := green.Append(ctx, stream, events.NoStream, proposal(t, "A", 0)); err != nil {
		t.Fatalf("same stream name in another namespace: %v", err)
	}
	if _, err := green.Append(ctx, stream, events.Exactly(0), proposal(t, "B", 1)); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*esdb.Store{"blue": blue, "green": green} {
		all, err := s.ReadAll(ctx, events.Start, 0)
		want := map[string]int{"blue": 1, "green": 2}[name]
		if err != nil || len(all) != want || all[0].Stream != stream {
			t.Errorf("%s global log: %+v, %v; want %d events of %s", name, all, err, want, stream)
		}
		c := newCollector()
		subscribe(t, s, events.Start, c)
		if got := c.waitFor(t, ctx, want); len(got) != want {
			t.Errorf("%s subscription: %d events", name, len(got))
		}
	}
	if n := srv.Len(); n != 3 {
		t.Fatalf("server holds %d events, want 3", n)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		opts  esdb.Options
		field string
	}{
		{esdb.Options{PageSize: 1}, "PageSize"},
		{esdb.Options{StreamPrefixes: []string{"$ce-"}}, "StreamPrefixes"},
		{esdb.Options{StreamPrefixes: []string{}}, "StreamPrefixes"},
		{esdb.Options{MinBackoff: time.Hour}, "MinBackoff"},
		{esdb.Options{MaxBackoff: time.Hour}, "MaxBackoff"},
		{esdb.Options{Namespace: "$x"}, "Namespace"},
	} {
		err := tc.opts.Validate()
		if !errors.Is(err, esdb.ErrInvalidOptions) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%+v: %v, want an error naming %s", tc.opts, err, tc.field)
		}
	}
	if err := (esdb.Options{}).Validate(); err != nil {
		t.Errorf("zero options: %v", err)
	}
	if _, err := esdb.Open(context.Background(), "http://nope", esdb.Options{}); !errors.Is(err, esdb.ErrInvalidURL) {
		t.Errorf("bad URL: %v", err)
	}
}

// BenchmarkAppend measures appends of one event through the adapter and the
// client to the in-process test server (so: the adapter's and the client's
// overhead plus loopback gRPC, not EventStoreDB's speed).
func BenchmarkAppend(b *testing.B) {
	srv := esdbtestserver.Run(b)
	opts := fastOptions(b)
	opts.Logger = nil
	s := openStore(b, srv.URL(), opts)
	ctx := context.Background()
	if _, err := s.Append(ctx, "task-warmup", events.AnyVersion, proposal(b, "A", 0)); err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		stream := events.TaskStream(uuid.New())
		for i := 0; pb.Next(); i++ {
			if _, err := s.Append(ctx, stream, events.AnyVersion, proposal(b, "A", i)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestGossipSeeds: a cluster connection string makes the client ask the
// gossip service for the leader first; the test server names itself.
func TestGossipSeeds(t *testing.T) {
	srv := esdbtestserver.Run(t)
	url := "esdb://" + srv.Addr() + "," + srv.Addr() + "?tls=false&maxDiscoverAttempts=2&discoveryInterval=10"
	s := openStore(t, url, fastOptions(t))
	ctx := ctxFor(t)
	stream := events.TaskStream(uuid.New())
	if _, err := s.Append(ctx, stream, events.NoStream, proposal(t, "A", 0)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadStream(ctx, stream, 0, 0); err != nil || len(got) != 1 {
		t.Fatalf("read through a gossip-discovered leader: %v, %v", got, err)
	}
}
