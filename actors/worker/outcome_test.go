package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"
)

// A handler's error marked Permanent fails its run as fatal (R13: no
// retry); any other error, and a panic, fails it as retryable.
func TestFailIsFatalOnlyWhenMarkedPermanent(t *testing.T) {
	boom := errors.New("boom")
	handlers := map[string]Handler{
		"plain":     sleeps(nil, 0, boom),
		"permanent": sleeps(nil, 0, Permanent(boom)),
		"wrapped":   sleeps(nil, 0, fmt.Errorf("context: %w", Permanent(boom))),
		"panics": HandlerFunc(func(context.Context, *Run) (json.RawMessage, error) {
			panic(Permanent(boom)) // a panic is a bug, not a verdict: retryable
		}),
		"ok": sleeps(nil, 0, nil),
	}
	p := newPool(t, PoolConfig{Workers: 1, Handlers: handlers})
	for _, name := range []string{"plain", "permanent", "wrapped", "panics", "ok"} {
		p.enqueue(Enqueued{TaskID: taskID(name), Run: 1})
	}
	want := []string{
		"00:00 start plain1", "00:00 fail plain1",
		"00:00 start permanent1", "00:00 fail permanent1 fatal",
		"00:00 start wrapped1", "00:00 fail wrapped1 fatal",
		"00:00 start panics1", "00:00 fail panics1",
		"00:00 start ok1", "00:00 complete ok1",
	}
	if got := p.lines(); !slices.Equal(got, want) {
		t.Fatalf("log:\n%q\nwant\n%q", got, want)
	}
}

// The handler sees the run's attempt, the run it retries and how it came
// to be, as the task recorded them.
func TestRunCarriesAttemptRetryOfAndTrigger(t *testing.T) {
	got := make(chan Run, 2)
	h := HandlerFunc(func(_ context.Context, r *Run) (json.RawMessage, error) {
		got <- *r
		return nil, nil
	})
	p := newPool(t, PoolConfig{Workers: 1, Handlers: map[string]Handler{"A": h}})
	first := p.enqueue(Enqueued{TaskID: taskID("A"), Run: 1, Trigger: "manual"})
	p.enqueue(Enqueued{TaskID: taskID("A"), Run: 2, Attempt: 2, RetryOf: first.RunID})
	r1, r2 := <-got, <-got
	if r1.Attempt != 1 || r1.RetryOf != uuid.Nil || r1.Trigger != "manual" || r1.Number != 1 {
		t.Errorf("first run: attempt %d, retry_of %s, trigger %q, number %d", r1.Attempt, r1.RetryOf, r1.Trigger, r1.Number)
	}
	if r2.Attempt != 2 || r2.RetryOf != first.RunID || r2.Trigger != "" || r2.Number != 2 {
		t.Errorf("retry: attempt %d, retry_of %s, trigger %q, number %d", r2.Attempt, r2.RetryOf, r2.Trigger, r2.Number)
	}
	if !r1.Deadline.Equal(h0.Add(timebox)) {
		t.Errorf("deadline %s", r1.Deadline)
	}
}
