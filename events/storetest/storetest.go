// Package storetest is the contract suite every events.Store implementation
// runs unchanged:
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) events.Store { return openMine(t) })
//	}
//
// newStore must return a fresh, empty store and arrange for it to be closed
// (t.Cleanup); the ClosedStore case closes it itself first, so Close must
// tolerate a second call. The suite uses stream names that start with
// events.TaskStreamPrefix so that backends filtering their global log by
// that prefix pass too. New backend behaviour goes into this suite first.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// NewStore opens a fresh, empty store for one test.
type NewStore func(t *testing.T) events.Store

// Run runs the whole contract suite.
func Run(t *testing.T, newStore NewStore) {
	cases := []struct {
		name string
		fn   func(*testing.T, events.Store)
	}{
		{"AppendToNewStreamWithNoStream", testAppendNoStream},
		{"ExpectedVersionRules", testExpectedVersionRules},
		{"VersionConflictErrorCarriesNumbers", testConflictError},
		{"ReadYourAppend", testReadYourAppend},
		{"StreamOrderAndPaging", testStreamPaging},
		{"MissingStream", testMissingStream},
		{"EmptyAppendAndBadStream", testBadInput},
		{"LargeBatch", testLargeBatch},
		{"GlobalOrderAndPaging", testGlobalPaging},
		{"BatchIsContiguousInGlobalLog", testBatchContiguous},
		{"IdempotentRetry", testIdempotentRetry},
		{"DifferentEventSameVersionConflicts", testDifferentEventConflicts},
		{"ConcurrentAppendersOneWinner", testOneWinner},
		{"ConcurrentStreamsAllLand", testConcurrentStreams},
		{"SubscribeCatchUpThenLive", testSubscribeCatchUpLive},
		{"SubscribeFromPosition", testSubscribeFromPosition},
		{"SubscribeHandlerError", testSubscribeHandlerError},
		{"ContextCancellation", testContextCancel},
		{"MetadataRoundTrip", testMetadataRoundTrip},
		{"IdempotentRetryAnyVersion", testIdempotentRetryAny},
		{"SubscribeLiveUnderConcurrentAppends", testSubscribeConcurrent},
		{"ClosedStore", testClosed},
		{"AsyncAppend", testAsyncAppend},
		{"StreamVersion", testStreamVersion},
		{"TruncateBefore", testTruncateBefore},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.fn(t, newStore(t))
		})
	}
}

// stream returns a fresh stream name unique within the process.
func stream() string {
	return events.TaskStreamPrefix + uuid.New().String()
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// ev builds a proposed event with a recognisable body.
func ev(label string) events.Proposed {
	return events.Proposed{
		ID:     uuid.New(),
		Type:   "TestHappened",
		Schema: 1,
		At:     time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC),
		Data:   []byte(fmt.Sprintf(`{"label":%q}`, label)),
	}
}

func evs(prefix string, n int) []events.Proposed {
	out := make([]events.Proposed, n)
	for i := range out {
		out[i] = ev(fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

func mustAppend(t *testing.T, s events.Store, st string, exp events.ExpectedVersion, e ...events.Proposed) events.AppendResult {
	t.Helper()
	res, err := s.Append(ctxT(t), st, exp, e...)
	if err != nil {
		t.Fatalf("append to %s (expected %s): %v", st, exp, err)
	}
	return res
}

func mustRead(t *testing.T, s events.Store, st string, from uint64, limit int) []events.Recorded {
	t.Helper()
	got, err := s.ReadStream(ctxT(t), st, from, limit)
	if err != nil {
		t.Fatalf("read %s from %d: %v", st, from, err)
	}
	return got
}

func labels(rs []events.Recorded) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Data)
	}
	return out
}

func wantLabels(t *testing.T, got []events.Recorded, want []events.Proposed) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events %v, want %d", len(got), labels(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i].Data, want[i].Data) {
			t.Fatalf("event %d: got %s, want %s", i, got[i].Data, want[i].Data)
		}
	}
}

func testAppendNoStream(t *testing.T, s events.Store) {
	st := stream()
	res := mustAppend(t, s, st, events.NoStream, ev("a"), ev("b"))
	if res.Version != 1 {
		t.Fatalf("version after two events = %d, want 1", res.Version)
	}
	if res.Position.IsZero() {
		t.Fatal("append returned the zero position")
	}
	_, err := s.Append(ctxT(t), st, events.NoStream, ev("c"))
	if !errors.Is(err, events.ErrVersionConflict) {
		t.Fatalf("NoStream on an existing stream: err = %v, want ErrVersionConflict", err)
	}
}

func testExpectedVersionRules(t *testing.T, s events.Store) {
	st := stream()
	if _, err := s.Append(ctxT(t), st, events.Exactly(0), ev("x")); !errors.Is(err, events.ErrVersionConflict) {
		t.Fatalf("Exactly(0) on a missing stream: err = %v, want conflict", err)
	}
	mustAppend(t, s, st, events.AnyVersion, ev("a"))
	mustAppend(t, s, st, events.Exactly(0), ev("b"))
	if _, err := s.Append(ctxT(t), st, events.Exactly(0), ev("stale")); !errors.Is(err, events.ErrVersionConflict) {
		t.Fatalf("stale Exactly(0): err = %v, want conflict", err)
	}
	if _, err := s.Append(ctxT(t), st, events.Exactly(5), ev("ahead")); !errors.Is(err, events.ErrVersionConflict) {
		t.Fatalf("Exactly(5) ahead of the stream: err = %v, want conflict", err)
	}
	res := mustAppend(t, s, st, events.AnyVersion, ev("c"))
	if res.Version != 2 {
		t.Fatalf("version = %d, want 2", res.Version)
	}
	got := mustRead(t, s, st, 0, 0)
	if len(got) != 3 {
		t.Fatalf("stream holds %d events after rejected appends, want 3: %v", len(got), labels(got))
	}
}

func testConflictError(t *testing.T, s events.Store) {
	st := stream()
	mustAppend(t, s, st, events.NoStream, ev("a"), ev("b"))
	_, err := s.Append(ctxT(t), st, events.Exactly(0), ev("c"))
	var vc *events.VersionConflictError
	if !errors.As(err, &vc) {
		t.Fatalf("err = %v (%T), want *events.VersionConflictError", err, err)
	}
	if vc.Stream != st || !vc.ActualExists || vc.Actual != 1 {
		t.Fatalf("conflict = %+v, want stream %s at 1", vc, st)
	}
}

func testReadYourAppend(t *testing.T, s events.Store) {
	st := stream()
	for i := 0; i < 5; i++ {
		e := ev(fmt.Sprint(i))
		res := mustAppend(t, s, st, events.AnyVersion, e)
		got := mustRead(t, s, st, res.Version, 0)
		if len(got) != 1 || got[0].ID != e.ID || got[0].Version != res.Version || got[0].Position != res.Position {
			t.Fatalf("append %d not readable right after: %+v", i, got)
		}
		all, err := s.ReadAll(ctxT(t), events.Start, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) == 0 || all[len(all)-1].ID != e.ID {
			t.Fatalf("append %d not at the end of the global log", i)
		}
	}
}

func testStreamPaging(t *testing.T, s events.Store) {
	st := stream()
	want := evs("p", 10)
	mustAppend(t, s, st, events.NoStream, want[:3]...)
	mustAppend(t, s, st, events.Exactly(2), want[3:]...)
	all := mustRead(t, s, st, 0, 0)
	wantLabels(t, all, want)
	for i, r := range all {
		if r.Version != uint64(i) || r.Stream != st {
			t.Fatalf("event %d has version %d stream %s", i, r.Version, r.Stream)
		}
	}
	// Page through with every page size, including ones that split evenly.
	for size := 1; size <= 11; size++ {
		var got []events.Recorded
		from := uint64(0)
		for {
			page := mustRead(t, s, st, from, size)
			if len(page) > size {
				t.Fatalf("page of size %d returned %d", size, len(page))
			}
			got = append(got, page...)
			if len(page) < size {
				break
			}
			from = page[len(page)-1].Version + 1
		}
		wantLabels(t, got, want)
	}
	if past := mustRead(t, s, st, 10, 0); len(past) != 0 {
		t.Fatalf("read past the end returned %d events", len(past))
	}
	if past := mustRead(t, s, st, 1000, 5); len(past) != 0 {
		t.Fatalf("read far past the end returned %d events", len(past))
	}
	if mid := mustRead(t, s, st, 7, 0); len(mid) != 3 || mid[0].Version != 7 {
		t.Fatalf("read from 7 = %v", labels(mid))
	}
}

func testMissingStream(t *testing.T, s events.Store) {
	_, err := s.ReadStream(ctxT(t), stream(), 0, 0)
	if !errors.Is(err, events.ErrStreamNotFound) {
		t.Fatalf("reading a missing stream: err = %v, want ErrStreamNotFound", err)
	}
	all, err := s.ReadAll(ctxT(t), events.Start, 0)
	if err != nil || len(all) != 0 {
		t.Fatalf("ReadAll on an empty store = %d events, %v", len(all), err)
	}
}

func testBadInput(t *testing.T, s events.Store) {
	st := stream()
	if _, err := s.Append(ctxT(t), st, events.NoStream); !errors.Is(err, events.ErrNoEvents) {
		t.Fatalf("empty append: err = %v, want ErrNoEvents", err)
	}
	if _, err := s.ReadStream(ctxT(t), st, 0, 0); !errors.Is(err, events.ErrStreamNotFound) {
		t.Fatalf("an empty append created the stream: %v", err)
	}
	if _, err := s.Append(ctxT(t), "", events.AnyVersion, ev("x")); !errors.Is(err, events.ErrInvalidStream) {
		t.Fatalf("empty stream name: err = %v, want ErrInvalidStream", err)
	}
}

func testLargeBatch(t *testing.T, s events.Store) {
	st := stream()
	want := make([]events.Proposed, 1000)
	big := bytes.Repeat([]byte("x"), 4000)
	for i := range want {
		want[i] = ev(fmt.Sprintf("big-%d-%s", i, big[:i%4000]))
	}
	res := mustAppend(t, s, st, events.NoStream, want...)
	if res.Version != 999 {
		t.Fatalf("version = %d, want 999", res.Version)
	}
	wantLabels(t, mustRead(t, s, st, 0, 0), want)
}

func readAllPaged(t *testing.T, s events.Store, after events.Position, size int) []events.Recorded {
	t.Helper()
	var out []events.Recorded
	for {
		page, err := s.ReadAll(ctxT(t), after, size)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page...)
		if len(page) < size {
			return out
		}
		after = page[len(page)-1].Position
	}
}

func testGlobalPaging(t *testing.T, s events.Store) {
	a, b := stream(), stream()
	var want []events.Proposed
	for i := 0; i < 6; i++ {
		ea, eb := ev(fmt.Sprint("a", i)), ev(fmt.Sprint("b", i))
		mustAppend(t, s, a, events.AnyVersion, ea)
		mustAppend(t, s, b, events.AnyVersion, eb)
		want = append(want, ea, eb)
	}
	all, err := s.ReadAll(ctxT(t), events.Start, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantLabels(t, all, want)
	for i := 1; i < len(all); i++ {
		if !all[i-1].Position.Less(all[i].Position) {
			t.Fatalf("global positions not increasing at %d: %v then %v", i, all[i-1].Position, all[i].Position)
		}
	}
	for size := 1; size <= 13; size++ {
		wantLabels(t, readAllPaged(t, s, events.Start, size), want)
	}
	rest, err := s.ReadAll(ctxT(t), all[4].Position, 0)
	if err != nil {
		t.Fatal(err)
	}
	wantLabels(t, rest, want[5:])
	tail, err := s.ReadAll(ctxT(t), all[len(all)-1].Position, 10)
	if err != nil || len(tail) != 0 {
		t.Fatalf("ReadAll after the last event = %d events, %v", len(tail), err)
	}
}

func testBatchContiguous(t *testing.T, s events.Store) {
	const writers, perBatch = 8, 5
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mustAppend(t, s, stream(), events.NoStream, evs(fmt.Sprint("w", w), perBatch)...)
		}()
	}
	wg.Wait()
	all := readAllPaged(t, s, events.Start, 7)
	if len(all) != writers*perBatch {
		t.Fatalf("global log holds %d events, want %d", len(all), writers*perBatch)
	}
	for i := 0; i < len(all); i += perBatch {
		for j := 1; j < perBatch; j++ {
			if all[i+j].Stream != all[i].Stream || all[i+j].Version != uint64(j) {
				t.Fatalf("batch of %s interleaved at global index %d", all[i].Stream, i+j)
			}
		}
	}
}

func testIdempotentRetry(t *testing.T, s events.Store) {
	st := stream()
	first := evs("r", 3)
	res1 := mustAppend(t, s, st, events.NoStream, first...)
	res2, err := s.Append(ctxT(t), st, events.NoStream, first...)
	if err != nil {
		t.Fatalf("retried NoStream append: %v", err)
	}
	if res2 != res1 {
		t.Fatalf("retry result %+v, first %+v", res2, res1)
	}
	next := evs("n", 2)
	res3 := mustAppend(t, s, st, events.Exactly(2), next...)
	res4, err := s.Append(ctxT(t), st, events.Exactly(2), next...)
	if err != nil || res4 != res3 {
		t.Fatalf("retried Exactly(2) append: %+v, %v; first %+v", res4, err, res3)
	}
	if got := mustRead(t, s, st, 0, 0); len(got) != 5 {
		t.Fatalf("stream holds %d events after retries, want 5", len(got))
	}
}

func testDifferentEventConflicts(t *testing.T, s events.Store) {
	st := stream()
	mustAppend(t, s, st, events.NoStream, ev("mine"))
	_, err := s.Append(ctxT(t), st, events.NoStream, ev("theirs"))
	if !errors.Is(err, events.ErrVersionConflict) {
		t.Fatalf("different event at the same place: err = %v, want conflict", err)
	}
}

func testOneWinner(t *testing.T, s events.Store) {
	st := stream()
	mustAppend(t, s, st, events.NoStream, ev("base"))
	for round := 0; round < 5; round++ {
		const contenders = 16
		var wins, conflicts atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for c := 0; c < contenders; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := s.Append(context.Background(), st, events.Exactly(uint64(round)), ev(fmt.Sprint(round, "-", c)))
				switch {
				case err == nil:
					wins.Add(1)
				case errors.Is(err, events.ErrVersionConflict):
					conflicts.Add(1)
				default:
					t.Errorf("contender %d: %v", c, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 || conflicts.Load() != contenders-1 {
			t.Fatalf("round %d: %d winners, %d conflicts; want 1 and %d", round, wins.Load(), conflicts.Load(), contenders-1)
		}
	}
	if got := mustRead(t, s, st, 0, 0); len(got) != 6 {
		t.Fatalf("stream holds %d events, want 6", len(got))
	}
}

func testConcurrentStreams(t *testing.T, s events.Store) {
	const writers, each = 16, 20
	streams := make([]string, writers)
	var wg sync.WaitGroup
	for w := range streams {
		streams[w] = stream()
		wg.Add(1)
		go func() {
			defer wg.Done()
			exp := events.NoStream
			for i := 0; i < each; i++ {
				res, err := s.Append(context.Background(), streams[w], exp, ev(fmt.Sprint(w, "-", i)))
				if err != nil {
					t.Errorf("writer %d append %d: %v", w, i, err)
					return
				}
				exp = events.Exactly(res.Version)
			}
		}()
	}
	wg.Wait()
	for w, st := range streams {
		got := mustRead(t, s, st, 0, 0)
		if len(got) != each {
			t.Fatalf("stream %d holds %d events, want %d", w, len(got), each)
		}
		for i, r := range got {
			if string(r.Data) != fmt.Sprintf(`{"label":"%d-%d"}`, w, i) {
				t.Fatalf("stream %d event %d = %s", w, i, r.Data)
			}
		}
	}
	all := readAllPaged(t, s, events.Start, 50)
	if len(all) != writers*each {
		t.Fatalf("global log holds %d events, want %d", len(all), writers*each)
	}
}

// collector gathers subscribed events and signals when it has n.
type collector struct {
	mu   sync.Mutex
	got  []events.Recorded
	want int
	full chan struct{}
}

func newCollector(want int) *collector {
	return &collector{want: want, full: make(chan struct{})}
}

func (c *collector) handle(r events.Recorded) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, r)
	if len(c.got) == c.want {
		close(c.full)
	}
	return nil
}

func (c *collector) wait(t *testing.T) []events.Recorded {
	t.Helper()
	select {
	case <-c.full:
	case <-time.After(20 * time.Second):
		c.mu.Lock()
		defer c.mu.Unlock()
		t.Fatalf("subscription delivered %d of %d events", len(c.got), c.want)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]events.Recorded(nil), c.got...)
}

func subscribe(t *testing.T, s events.Store, after events.Position, c *collector) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Subscribe(ctx, after, c.handle) }()
	return func() error {
		cancel()
		select {
		case err := <-errc:
			return err
		case <-time.After(20 * time.Second):
			return errors.New("storetest: Subscribe did not return after its context ended")
		}
	}
}

func testSubscribeCatchUpLive(t *testing.T, s events.Store) {
	st := stream()
	old := evs("old", 600) // more than one page of catch-up in common backends
	mustAppend(t, s, st, events.NoStream, old...)
	live := evs("live", 20)
	c := newCollector(len(old) + len(live))
	stop := subscribe(t, s, events.Start, c)
	exp := events.Exactly(uint64(len(old) - 1))
	for _, e := range live {
		res := mustAppend(t, s, st, exp, e)
		exp = events.Exactly(res.Version)
	}
	got := c.wait(t)
	wantLabels(t, got, append(append([]events.Proposed(nil), old...), live...))
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Subscribe returned %v after cancel, want context.Canceled", err)
	}
}

func testSubscribeFromPosition(t *testing.T, s events.Store) {
	st := stream()
	all := evs("e", 10)
	mustAppend(t, s, st, events.NoStream, all[:4]...)
	res := mustAppend(t, s, st, events.Exactly(3), all[4:6]...)
	mustAppend(t, s, st, events.Exactly(5), all[6:]...)
	c := newCollector(4)
	stop := subscribe(t, s, res.Position, c)
	wantLabels(t, c.wait(t), all[6:])
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Subscribe returned %v, want context.Canceled", err)
	}
}

func testSubscribeHandlerError(t *testing.T, s events.Store) {
	st := stream()
	mustAppend(t, s, st, events.NoStream, evs("h", 3)...)
	boom := errors.New("handler says no")
	n := 0
	err := s.Subscribe(ctxT(t), events.Start, func(events.Recorded) error {
		n++
		if n == 2 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Subscribe returned %v, want the handler's error", err)
	}
	if n != 2 {
		t.Fatalf("handler called %d times after failing on the 2nd", n)
	}
}

func testContextCancel(t *testing.T, s events.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st := stream()
	if _, err := s.Append(ctx, st, events.NoStream, ev("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append with a cancelled context: %v", err)
	}
	if _, err := s.ReadStream(ctx, st, 0, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadStream with a cancelled context: %v", err)
	}
	if _, err := s.ReadAll(ctx, events.Start, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadAll with a cancelled context: %v", err)
	}
	if err := s.Subscribe(ctx, events.Start, func(events.Recorded) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Subscribe with a cancelled context: %v", err)
	}
	// A subscription waiting for live events returns when its context ends.
	c := newCollector(1)
	stop := subscribe(t, s, events.Start, c)
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("idle Subscribe returned %v after cancel", err)
	}
}

func testMetadataRoundTrip(t *testing.T, s events.Store) {
	st := stream()
	e := ev("meta")
	e.CausationID = uuid.New()
	e.CorrelationID = uuid.New()
	e.Schema = 3
	res := mustAppend(t, s, st, events.NoStream, e)
	got := mustRead(t, s, st, 0, 0)[0]
	if got.ID != e.ID || got.Type != e.Type || got.Schema != 3 || !got.At.Equal(e.At) ||
		got.CausationID != e.CausationID || got.CorrelationID != e.CorrelationID ||
		got.Stream != st || got.Version != 0 || got.Position != res.Position {
		t.Fatalf("stored %+v\nproposed %+v", got, e)
	}
	// A zero ID gets one assigned.
	z := ev("zero-id")
	z.ID = uuid.Nil
	mustAppend(t, s, st, events.Exactly(0), z)
	if got := mustRead(t, s, st, 1, 0)[0]; got.ID == uuid.Nil {
		t.Fatal("a zero event ID was stored as zero")
	}
}

func testIdempotentRetryAny(t *testing.T, s events.Store) {
	st := stream()
	mustAppend(t, s, st, events.NoStream, ev("first"))
	batch := evs("any", 2)
	res1 := mustAppend(t, s, st, events.AnyVersion, batch...)
	res2, err := s.Append(ctxT(t), st, events.AnyVersion, batch...)
	if err != nil || res2 != res1 {
		t.Fatalf("retried AnyVersion append: %+v, %v; first %+v", res2, err, res1)
	}
	if got := mustRead(t, s, st, 0, 0); len(got) != 3 {
		t.Fatalf("stream holds %d events after an AnyVersion retry, want 3", len(got))
	}
}

func testSubscribeConcurrent(t *testing.T, s events.Store) {
	const writers, each = 8, 25
	c := newCollector(writers * each)
	stop := subscribe(t, s, events.Start, c)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := stream()
			exp := events.NoStream
			for i := 0; i < each; i++ {
				res, err := s.Append(context.Background(), st, exp, ev(fmt.Sprint(w, "-", i)))
				if err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
				exp = events.Exactly(res.Version)
			}
		}()
	}
	wg.Wait()
	got := c.wait(t)
	all := readAllPaged(t, s, events.Start, 64)
	if len(got) != len(all) {
		t.Fatalf("subscription saw %d events, the log holds %d", len(got), len(all))
	}
	for i := range all {
		if got[i].ID != all[i].ID || got[i].Position != all[i].Position {
			t.Fatalf("subscription event %d is %s@%v, the log has %s@%v", i, got[i].ID, got[i].Position, all[i].ID, all[i].Position)
		}
	}
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Subscribe returned %v, want context.Canceled", err)
	}
}

func testClosed(t *testing.T, s events.Store) {
	st := stream()
	mustAppend(t, s, st, events.NoStream, ev("before"))
	// A subscriber waiting for live events ends with ErrClosed.
	c := newCollector(1)
	errc := make(chan error, 1)
	go func() { errc <- s.Subscribe(ctxT(t), events.Start, c.handle) }()
	c.wait(t)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, events.ErrClosed) {
			t.Fatalf("live Subscribe ended with %v at Close, want ErrClosed", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Subscribe did not return after Close")
	}
	if _, err := s.Append(ctxT(t), st, events.AnyVersion, ev("after")); !errors.Is(err, events.ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
	if _, err := s.ReadStream(ctxT(t), st, 0, 0); !errors.Is(err, events.ErrClosed) {
		t.Fatalf("ReadStream after Close: %v, want ErrClosed", err)
	}
	if _, err := s.ReadAll(ctxT(t), events.Start, 0); !errors.Is(err, events.ErrClosed) {
		t.Fatalf("ReadAll after Close: %v, want ErrClosed", err)
	}
	if err := s.Subscribe(ctxT(t), events.Start, c.handle); !errors.Is(err, events.ErrClosed) {
		t.Fatalf("Subscribe after Close: %v, want ErrClosed", err)
	}
}

// testAsyncAppend: events.AppendAsync (the store's AsyncAppender, or the
// fallback) answers once with what Append would, conflicts and an ended
// context included.
func testAsyncAppend(t *testing.T, s events.Store) {
	ctx := ctxT(t)
	st := stream()
	type outcome struct {
		res events.AppendResult
		err error
	}
	async := func(ctx context.Context, expected events.ExpectedVersion) outcome {
		out := make(chan outcome, 2)
		events.AppendAsync(ctx, s, st, expected, []events.Proposed{ev("async")}, func(r events.AppendResult, err error) {
			out <- outcome{r, err}
		})
		o := <-out
		select {
		case again := <-out:
			t.Fatalf("answered twice: %v, then %v", o, again)
		default:
		}
		return o
	}
	if o := async(ctx, events.NoStream); o.err != nil || o.res.Version != 0 {
		t.Fatalf("first append: %+v", o)
	}
	if o := async(ctx, events.Exactly(0)); o.err != nil || o.res.Version != 1 {
		t.Fatalf("second append: %+v", o)
	}
	if o := async(ctx, events.Exactly(0)); !errors.Is(o.err, events.ErrVersionConflict) {
		t.Fatalf("stale expected version: %v, want a version conflict", o.err)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if o := async(ended, events.Exactly(1)); o.err == nil {
		t.Fatalf("ended context: appended %+v", o.res)
	}
	recs, err := s.ReadStream(ctx, st, 0, 0)
	if err != nil || len(recs) != 2 {
		t.Fatalf("stream holds %d events (%v), want 2", len(recs), err)
	}
}

// onlyStore hides every optional interface of a store: StreamVersion then
// takes its fallback of point reads.
type onlyStore struct{ events.Store }

// testStreamVersion: the version of a stream's last event, through the
// store's StreamVersioner when it has one and through the fallback, for
// streams of every length around the powers of two the fallback probes.
func testStreamVersion(t *testing.T, s events.Store) {
	ctx := ctxT(t)
	for _, via := range []struct {
		name string
		s    events.Store
	}{{"store", s}, {"fallback", onlyStore{s}}} {
		if _, err := events.StreamVersion(ctx, via.s, stream()); !errors.Is(err, events.ErrStreamNotFound) {
			t.Fatalf("%s: version of a missing stream: %v, want ErrStreamNotFound", via.name, err)
		}
	}
	st := stream()
	other := stream()
	n := 0
	for _, want := range []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33} {
		mustAppend(t, s, st, events.AnyVersion, evs(fmt.Sprintf("v%d-", want), want-n)...)
		mustAppend(t, s, other, events.AnyVersion, ev("other"))
		n = want
		for _, via := range []struct {
			name string
			s    events.Store
		}{{"store", s}, {"fallback", onlyStore{s}}} {
			got, err := events.StreamVersion(ctx, via.s, st)
			if err != nil || got != uint64(want-1) {
				t.Fatalf("%s: version of a stream of %d events: %d, %v; want %d", via.name, want, got, err, want-1)
			}
		}
	}
}

// testTruncateBefore: a store that implements events.Truncater removes the
// start of one stream and nothing else; versions, expected-version checks
// and appends go on as before. Stores without it skip the case.
func testTruncateBefore(t *testing.T, s events.Store) {
	tr, ok := s.(events.Truncater)
	if !ok {
		t.Skip("the store does not implement events.Truncater")
	}
	a, b := stream(), stream()
	as, bs := evs("a", 10), evs("b", 3)
	mustAppend(t, s, a, events.NoStream, as[:5]...)
	mustAppend(t, s, b, events.NoStream, bs...)
	mustAppend(t, s, a, events.Exactly(4), as[5:]...)
	ctx := ctxT(t)
	if err := tr.TruncateBefore(ctx, a, 4); err != nil {
		t.Fatalf("truncate before 4: %v", err)
	}
	got := mustRead(t, s, a, 0, 0)
	wantLabels(t, got, as[4:])
	if got[0].Version != 4 || got[5].Version != 9 {
		t.Fatalf("versions after truncation: %d..%d, want 4..9", got[0].Version, got[5].Version)
	}
	wantLabels(t, mustRead(t, s, a, 6, 2), as[6:8])
	wantLabels(t, mustRead(t, s, a, 2, 3), as[4:7])
	wantLabels(t, mustRead(t, s, b, 0, 0), bs)
	// Removing what is removed already is not an error and changes nothing.
	if err := tr.TruncateBefore(ctx, a, 2); err != nil {
		t.Fatalf("truncate before 2 after 4: %v", err)
	}
	wantLabels(t, mustRead(t, s, a, 0, 0), as[4:])
	// Versions and expected versions go on.
	var conflict *events.VersionConflictError
	if _, err := s.Append(ctx, a, events.Exactly(3), ev("late")); !errors.As(err, &conflict) || conflict.Actual != 9 {
		t.Fatalf("append at a removed version: %v", err)
	}
	if _, err := s.Append(ctx, a, events.NoStream, ev("new")); !errors.Is(err, events.ErrVersionConflict) {
		t.Fatalf("append with NoStream to a truncated stream: %v", err)
	}
	more := ev("a-10")
	if res := mustAppend(t, s, a, events.Exactly(9), more); res.Version != 10 {
		t.Fatalf("append after truncation landed at version %d, want 10", res.Version)
	}
	// The last event is never removed.
	if err := tr.TruncateBefore(ctx, a, 11); !errors.Is(err, events.ErrTruncateRange) {
		t.Fatalf("truncate past the last event: %v", err)
	}
	wantLabels(t, mustRead(t, s, a, 0, 0), append(as[4:10:10], more))
	if err := tr.TruncateBefore(ctx, a, 10); err != nil {
		t.Fatalf("truncate before the last event: %v", err)
	}
	wantLabels(t, mustRead(t, s, a, 0, 0), []events.Proposed{more})
	if got, err := s.ReadStream(ctx, a, 11, 0); err != nil || len(got) != 0 {
		t.Fatalf("read past the end of a truncated stream: %v, %v", labels(got), err)
	}
	if err := tr.TruncateBefore(ctx, stream(), 1); !errors.Is(err, events.ErrStreamNotFound) {
		t.Fatalf("truncate a missing stream: %v", err)
	}
	// The global log still reads, in order, everything the streams hold.
	all := readAllPaged(t, s, events.Start, 3)
	var ga, gb []events.Recorded
	for _, r := range all {
		switch {
		case r.Stream == b:
			gb = append(gb, r)
		case r.Stream == a && r.Version >= 10:
			ga = append(ga, r)
		}
	}
	wantLabels(t, gb, bs)
	wantLabels(t, ga, []events.Proposed{more})
	for i := 1; i < len(all); i++ {
		if !all[i-1].Position.Less(all[i].Position) {
			t.Fatalf("global log out of order at %d: %s then %s", i, all[i-1].Position, all[i].Position)
		}
	}
}
