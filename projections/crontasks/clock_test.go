package crontasks_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/projections/crontasks"
)

// signalling is a virtual clock that tells when a timer is set.
type signalling struct {
	*clock.Virtual
	set chan time.Duration
}

func (s signalling) AfterFunc(d time.Duration, f func()) clock.Timer {
	t := s.Virtual.AfterFunc(d, f)
	s.set <- d
	return t
}

// TestCoalescingFollowsTheArchetypesClock: the live applier's wait for more
// events is a timer on the injected clock, not the wall clock — under a
// virtual clock the batch is applied when that clock reaches it.
func TestCoalescingFollowsTheArchetypesClock(t *testing.T) {
	store := memStore(t)
	clk := signalling{Virtual: clock.NewVirtual(t0), set: make(chan time.Duration, 16)}
	live := make(chan struct{})
	logger := slog.New(onMessage{msg: "cron_tasks view caught up", do: sync.OnceFunc(func() { close(live) })})
	v := openView(t, crontasks.Config{Store: store, Coalesce: 500 * time.Millisecond, Archetype: archetype.Archetype{Clock: clk, Logger: logger}})
	follow(t, v)
	// Once caught up, the view follows the log from there: the event below
	// reaches it live. (Written earlier, the catch-up could read it, with no
	// coalescing wait, and the test waited for a timer forever.)
	<-live
	h := newHistory(t, store, 1, 1)
	h.step()
	if d := <-clk.set; d != 500*time.Millisecond {
		t.Fatalf("timer of %s, want the coalescing wait", d)
	}
	clk.RunUntil(t0.Add(time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := v.WaitFor(ctx, store.Head()); err != nil {
		t.Fatal(err)
	}
}

// onMessage is a slog handler that calls do for each record whose message
// is msg, and drops every record.
type onMessage struct {
	msg string
	do  func()
}

func (h onMessage) Enabled(context.Context, slog.Level) bool { return true }
func (h onMessage) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.do()
	}
	return nil
}
func (h onMessage) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h onMessage) WithGroup(string) slog.Handler      { return h }
