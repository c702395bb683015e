package scheduler_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/worker/kinds"
	"github.com/cronactor/cronactor/events"
)

// failingStore refuses every append with fail's error while it is set,
// counting the refusals.
type failingStore struct {
	events.Store
	fail    atomic.Pointer[error]
	refused atomic.Int64
}

func (s *failingStore) Append(ctx context.Context, stream string, exp events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	if err := s.fail.Load(); err != nil {
		s.refused.Add(1)
		return events.AppendResult{}, *err
	}
	return s.Store.Append(ctx, stream, exp, evs...)
}

// lockedBuffer is a log buffer safe for the actors' goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// take returns what was written since the last take.
func (b *lockedBuffer) take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	b.buf.Reset()
	return s
}

// TestStoreRefusalIsNotLoggedPerTick: while the store refuses appends for
// a condition of its own (events.ErrUnwritable: here a read-only data
// directory), the task actors log nothing per task and per tick (the store
// logs the condition once); any other append failure is still logged by
// the task it failed.
func TestStoreRefusalIsNotLoggedPerTick(t *testing.T) {
	clk := clock.NewVirtual(t0)
	st := &failingStore{Store: memStore(t)}
	logs := &lockedBuffer{}
	s, err := scheduler.New(scheduler.Config{Store: st, Clock: clk, Tick: 10 * time.Second, Workers: 2,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Register("noop", kinds.Noop()); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer stopNow(s)
	const tasks = 6
	for i := range tasks {
		if _, _, err := s.CreateTask(context.Background(), scheduler.TaskSpec{Name: fmt.Sprintf("t%d", i), Owner: "o", Kind: "noop",
			Interval: 10 * time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	clk.RunUntil(t0.Add(35 * time.Second))
	if l := logs.take(); strings.Contains(l, "level=ERROR") {
		t.Fatalf("errors while the store accepts appends:\n%s", l)
	}

	for _, tc := range []struct {
		name    string
		err     error
		perTick bool
	}{
		{"read-only", fmt.Errorf("%w: /data: appends refused: read-only file system", events.ErrReadOnly), false},
		{"disk full", fmt.Errorf("%w: /data: appends refused", events.ErrNoSpace), false},
		{"write failed", fmt.Errorf("%w: /data: appends refused: input/output error", events.ErrWriteFailed), false},
		{"another error", errors.New("store: the network is down"), true},
	} {
		st.fail.Store(&tc.err)
		st.refused.Store(0)
		start := clk.Now()
		clk.RunUntil(start.Add(60 * time.Second)) // 6 ticks
		st.fail.Store(nil)
		clk.RunUntil(clk.Now().Add(30 * time.Second))
		l := logs.take()
		if st.refused.Load() < tasks*3 {
			t.Fatalf("%s: %d appends refused in 6 ticks of %d tasks", tc.name, st.refused.Load(), tasks)
		}
		n := strings.Count(l, "level=ERROR")
		if tc.perTick && n < tasks {
			t.Fatalf("%s: %d ERROR lines for %d refused appends, want one per failed decision:\n%s", tc.name, n, st.refused.Load(), l)
		}
		if !tc.perTick && n != 0 {
			t.Fatalf("%s: %d ERROR lines for %d refused appends, want none (the store logs its condition):\n%s", tc.name, n, st.refused.Load(), l)
		}
	}
}
