package scheduler_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/cronactor/cronactor/actors/scheduler/schedulertest"
	"github.com/cronactor/cronactor/actors/worker"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/google/uuid"
)

// reportArgs is a typed payload.
type reportArgs struct {
	Ledger string `json:"ledger"`
	Days   int    `json:"days"`
}

func (a reportArgs) Validate() error {
	if a.Ledger == "" {
		return &scheduler.FieldError{Field: "payload.ledger", Message: "is required"}
	}
	return nil
}

// seen is a middleware that remembers every run it wrapped.
type seen struct {
	mu   sync.Mutex
	runs []int
}

func (s *seen) middleware(next worker.Handler) worker.Handler {
	return worker.HandlerFunc(func(ctx context.Context, r *worker.Run) (json.RawMessage, error) {
		s.mu.Lock()
		s.runs = append(s.runs, r.Number)
		s.mu.Unlock()
		return next.Handle(ctx, r)
	})
}

// A weekday cron task runs five times over a virtual week, at 09:00 each
// weekday, with its payload decoded into a Go type and a middleware around
// every run.
func TestWeekdayCronTypedWithMiddleware(t *testing.T) {
	monday := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	var mw seen
	var mu sync.Mutex
	var args []reportArgs
	report := worker.Typed(func(ctx context.Context, r *worker.Run, a reportArgs) (json.RawMessage, error) {
		mu.Lock()
		args = append(args, a)
		mu.Unlock()
		return nil, nil
	})
	h := schedulertest.New(t, schedulertest.WithStart(monday), schedulertest.WithHandler("report", report),
		schedulertest.WithConfig(scheduler.Config{Tick: time.Minute, Middleware: []worker.Middleware{mw.middleware}}))
	task := h.Create(scheduler.TaskSpec{Owner: "team/finance", Name: "daily", Kind: "report",
		Cron: []string{"0 9 * * MON-FRI"}, Payload: json.RawMessage(`{"ledger":"eu","days":1}`)})

	h.Advance(7 * 24 * time.Hour)

	runs := h.Runs(task.ID)
	if len(runs) != 5 {
		t.Fatalf("%d runs over a week, want 5: %+v", len(runs), runs)
	}
	for i, r := range runs {
		slot := monday.AddDate(0, 0, i).Add(9 * time.Hour)
		if r.Number != i+1 || r.Attempt != 1 || !r.Slot.Equal(slot) || !r.StartedAt.Equal(slot) || r.Outcome != worker.OutcomeCompleted {
			t.Errorf("run %d: %+v, want completed at its slot %s", i+1, r, slot.Format("Mon 15:04"))
		}
	}
	if len(mw.runs) != 5 || mw.runs[0] != 1 || mw.runs[4] != 5 {
		t.Errorf("the middleware saw runs %v, want 1…5", mw.runs)
	}
	if len(args) != 5 || args[4] != (reportArgs{Ledger: "eu", Days: 1}) {
		t.Errorf("the handler got %+v", args)
	}
}

// A typed handler's payload check refuses, at create, a payload it could
// not run, naming the field.
func TestTypedPayloadRefusedAtCreate(t *testing.T) {
	report := worker.Typed(func(ctx context.Context, r *worker.Run, a reportArgs) (json.RawMessage, error) { return nil, nil })
	h := schedulertest.New(t, schedulertest.WithHandler("report", report))
	for payload, field := range map[string]string{`{"ledger":"eu","days":"one"}`: "payload.days", `{"days":1}`: "payload.ledger"} {
		_, _, err := h.Scheduler().CreateTask(context.Background(), scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "report",
			Interval: time.Minute, Payload: json.RawMessage(payload)})
		var fe *scheduler.FieldError
		if !errors.As(err, &fe) || fe.Field != field || !errors.Is(err, scheduler.ErrInvalidSpec) {
			t.Errorf("create with %s: %v, want a FieldError for %s", payload, err, field)
		}
	}
	if len(h.Events(scheduler.TaskID("o", "n"))) != 0 {
		t.Error("a refused task was recorded")
	}
}

// A task recorded before its kind's handler was typed (a payload the new
// handler cannot decode) fails once, permanently, and is not retried,
// though its retry policy allows three attempts.
func TestUndecodableTypedPayloadFailsOnce(t *testing.T) {
	store, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	var id uuid.UUID
	t.Run("old version", func(t *testing.T) {
		h := schedulertest.New(t, schedulertest.WithStore(store), schedulertest.WithHandler("report", schedulertest.Script()))
		id = h.Create(scheduler.TaskSpec{Owner: "o", Name: "n", Kind: "report", Interval: time.Hour,
			Payload: json.RawMessage(`{"ledger":"eu","days":"one"}`),
			Retry:   &scheduler.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second, MaxBackoff: time.Minute, Multiplier: 2}}).ID
	})
	calls := 0
	report := worker.Typed(func(ctx context.Context, r *worker.Run, a reportArgs) (json.RawMessage, error) {
		calls++
		return nil, nil
	})
	h := schedulertest.New(t, schedulertest.WithStore(store), schedulertest.WithHandler("report", report))
	h.Advance(2 * time.Hour)
	runs := h.Runs(id)
	if len(runs) != 2 || runs[1].Attempt != 1 {
		t.Fatalf("runs: %+v, want two scheduled first attempts and no retry", runs)
	}
	for _, r := range runs {
		if r.Outcome != worker.OutcomeFailed || !r.Fatal || !strings.Contains(r.Reason, "payload.days: a JSON string cannot be read as int") {
			t.Errorf("run %d: %+v, want a permanent failure naming payload.days", r.Number, r)
		}
	}
	if calls != 0 {
		t.Errorf("the typed function ran %d times", calls)
	}
}
