package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/counted"
	"github.com/google/uuid"
)

// A StopRun for the run a worker executes cancels the handler's context
// with the forced end as its cause; one for another run changes nothing.
// The worker reports nothing for the stopped run, and its slot stays taken
// until the handler returns, however long it takes to: the next run waits
// for it, and its context, on the same worker, is not cancelled.
func TestStopRunCancelsTheHandlerAndHoldsTheSlotUntilItReturns(t *testing.T) {
	stopped, release := make(chan error, 1), make(chan struct{})
	var p *pool
	h := HandlerFunc(func(ctx context.Context, r *Run) (json.RawMessage, error) {
		if r.Number > 1 {
			if ctx.Err() != nil {
				p.note("A%d's context ended before it began: %v", r.Number, context.Cause(ctx))
			}
			return nil, nil
		}
		_ = clock.Sleep(ctx, p.clk, 24*time.Hour) // waits for its context
		stopped <- context.Cause(ctx)
		<-release // winds down, taking its time
		p.note("A1 returns")
		return nil, context.Cause(ctx)
	})
	p = newPool(t, PoolConfig{Workers: 1, Handlers: map[string]Handler{"A": h}})
	a1 := p.enqueue(Enqueued{TaskID: taskID("A"), Run: 1})
	p.enqueue(Enqueued{TaskID: taskID("A"), Run: 2})

	p.mu.Lock()
	w := p.runners[a1.RunID]
	p.mu.Unlock()
	counted.Send(p.clk, p.sys.Root, w, StopRun{RunID: uuid.New(), Reason: events.ForcedHeartbeat})
	p.clk.Quiesce()
	select {
	case c := <-stopped:
		t.Fatalf("a StopRun for another run stopped the handler: %v", c)
	default:
	}

	p.forceEnd(a1.RunID, events.ForcedHeartbeat)
	cause := <-stopped
	var fe *ForcedEndError
	if !errors.As(cause, &fe) || fe.Reason != events.ForcedHeartbeat || cause.Error() != "worker: forced to end: heartbeat_timeout" {
		t.Errorf("cause %v (%T), want the forced end for heartbeat_timeout", cause, cause)
	}
	if b, q := p.stats.Busy.Load(), p.stats.Queued.Load(); b != 1 || q != 1 {
		t.Errorf("while the stopped handler winds down: %d busy, %d queued; want 1 and 1 (A2 waits for the slot)", b, q)
	}
	close(release)
	p.clk.Quiesce()
	want := []string{
		"00:00 start A1",
		"00:00 forced A1 heartbeat_timeout (by the task)",
		"00:00 A1 returns",
		"00:00 start A2",
		"00:00 complete A2",
	}
	if got := p.lines(); !slices.Equal(got, want) {
		t.Errorf("log:\n%q\nwant\n%q", got, want)
	}
	if b := p.stats.Busy.Load(); b != 0 {
		t.Errorf("%d busy at the end", b)
	}
}

// logBuffer is a log destination safe for concurrent writers.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(b)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// An outcome that reaches the task actor after it forced the run to end
// (its StopRun not yet received) is refused with rules.ErrUnknownRun, and
// that is no failure to log: the run has its one outcome.
func TestLateOutcomeIsDroppedQuietly(t *testing.T) {
	var logs logBuffer
	var p *pool
	h := HandlerFunc(func(_ context.Context, r *Run) (json.RawMessage, error) {
		p.mu.Lock()
		p.ended[r.RunID] = true // forced to end meanwhile
		p.mu.Unlock()
		if r.Number == 1 {
			return nil, errors.New("boom")
		}
		return nil, nil
	})
	p = newPool(t, PoolConfig{Workers: 1, Handlers: map[string]Handler{"B": h},
		Archetype: archetype.Archetype{Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
	p.enqueue(Enqueued{TaskID: taskID("B"), Run: 1})
	p.enqueue(Enqueued{TaskID: taskID("B"), Run: 2})
	want := []string{"00:00 start B1", "00:00 late rules.Fail B1", "00:00 start B2", "00:00 late rules.Complete B2"}
	if got := p.lines(); !slices.Equal(got, want) {
		t.Errorf("log:\n%q\nwant\n%q", got, want)
	}
	if l := logs.String(); l != "" {
		t.Errorf("logged:\n%s", l)
	}
}

// A start decided without the run in its decision (an AskFunc that does
// not answer with StartDecision) is logged and leaves the worker free for
// the next run, with nothing counted busy: the task forces the run to end
// at its deadline.
func TestStartWithoutItsRunIsLoggedAndFreesTheWorker(t *testing.T) {
	var logs logBuffer
	var p *pool
	h := HandlerFunc(func(_ context.Context, r *Run) (json.RawMessage, error) {
		p.note("C%d runs", r.Number)
		return nil, nil
	})
	p = newPool(t, PoolConfig{Workers: 1, Handlers: map[string]Handler{"C": h},
		Archetype: archetype.Archetype{Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
	p.bareStarts = 1
	p.enqueue(Enqueued{TaskID: taskID("C"), Run: 1})
	p.enqueue(Enqueued{TaskID: taskID("C"), Run: 2})
	want := []string{"00:00 start C1", "00:00 start C2", "00:00 C2 runs", "00:00 complete C2"}
	if got := p.lines(); !slices.Equal(got, want) {
		t.Errorf("log:\n%q\nwant\n%q", got, want)
	}
	if l := logs.String(); !strings.Contains(l, "start decision without its run") {
		t.Errorf("logged:\n%s\nwant the start without its run", l)
	}
	if b := p.stats.Busy.Load(); b != 0 {
		t.Errorf("%d busy at the end", b)
	}
}
