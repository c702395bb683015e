package task

import (
	"context"
	"errors"
	"testing"
	"time"
)

type ctxKey struct{}

// TestStoreCtxEndsLikeWithTimeout checks the store call's context of a
// message without a context of its own against what context.WithTimeout
// promises: it ends at its deadline (seen by Err alone, by Done, and by a
// context derived from it) or when cancelled, and answers its parent's
// values.
func TestStoreCtxEndsLikeWithTimeout(t *testing.T) {
	a := &Actor{cfg: Config{StoreTimeout: time.Millisecond}}
	parent := context.WithValue(context.Background(), ctxKey{}, "v")

	ctx, cancel := a.storeCtx(parent)
	if _, ok := ctx.(*storeDeadline); !ok {
		t.Fatalf("storeCtx(a context that never ends) = %T, want *storeDeadline", ctx)
	}
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > time.Millisecond {
		t.Errorf("Deadline() = %v, %v", d, ok)
	}
	if ctx.Value(ctxKey{}) != "v" {
		t.Errorf("Value does not reach the parent's")
	}
	child, stopChild := context.WithCancel(ctx)
	defer stopChild()
	<-ctx.Done()
	<-child.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Errorf("after the deadline: Err() = %v, child's %v; want deadline exceeded", ctx.Err(), child.Err())
	}
	cancel()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Errorf("cancel after the deadline changed Err() to %v", ctx.Err())
	}

	// Err alone sees the deadline pass, with no Done asked for.
	a.cfg.StoreTimeout = -time.Second
	ctx, cancel = a.storeCtx(context.Background())
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Errorf("Err() past the deadline = %v", ctx.Err())
	}
	cancel()
	select {
	case <-ctx.Done():
	default:
		t.Errorf("Done of an ended context is not closed")
	}

	// Cancelled before the deadline, before and after Done was asked for.
	a.cfg.StoreTimeout = time.Hour
	for _, askDone := range []bool{false, true} {
		ctx, cancel = a.storeCtx(context.Background())
		if askDone {
			_ = ctx.Done()
		}
		if ctx.Err() != nil {
			t.Fatalf("Err() before the deadline = %v", ctx.Err())
		}
		cancel()
		<-ctx.Done()
		if !errors.Is(ctx.Err(), context.Canceled) {
			t.Errorf("Done asked %v: Err() after cancel = %v", askDone, ctx.Err())
		}
	}

	// A parent that can end keeps context.WithTimeout: it ends with it.
	p, stop := context.WithCancel(context.Background())
	ctx, cancel = a.storeCtx(p)
	defer cancel()
	if _, ok := ctx.(*storeDeadline); ok {
		t.Fatalf("storeCtx(a context that can end) is a *storeDeadline")
	}
	stop()
	<-ctx.Done()
}
