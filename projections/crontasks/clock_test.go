package crontasks_test

import (
	"context"
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
	v := openView(t, crontasks.Config{Store: store, Coalesce: 500 * time.Millisecond, Archetype: archetype.Archetype{Clock: clk}})
	follow(t, v)
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
