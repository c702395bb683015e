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
	a := &Actor{incarnation: incarnation{cfg: Config{StoreTimeout: time.Millisecond}}}
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

// TestAppendCtxIsReusedAndFresh: a flight's append context is the same
// object on every use (no allocation), and each use starts live, whatever
// the last one did — cancelled, past its deadline, or with a timer that
// fires late.
func TestAppendCtxIsReusedAndFresh(t *testing.T) {
	a := &Actor{incarnation: incarnation{cfg: Config{StoreTimeout: -time.Second}}}
	f := flights.Get().(*flight)
	defer f.release()
	f.cctx = context.Background()

	ctx1, cancel1 := a.appendCtx(f)
	<-ctx1.Done() // past its deadline: Done is closed, its timer armed
	if !errors.Is(ctx1.Err(), context.DeadlineExceeded) {
		t.Fatalf("first use: Err() = %v", ctx1.Err())
	}
	old := f.sd.use
	cancel1()

	a.cfg.StoreTimeout = time.Hour
	ctx2, cancel2 := a.appendCtx(f)
	if ctx2 != ctx1 {
		t.Fatalf("second use got a new context %p, want the flight's %p", ctx2, ctx1)
	}
	if err := ctx2.Err(); err != nil {
		t.Fatalf("second use starts ended: %v", err)
	}
	done := ctx2.Done()
	f.sd.expire(old) // the first use's timer, late
	if err := ctx2.Err(); err != nil {
		t.Fatalf("an earlier use's timer ended the second use: %v", err)
	}
	cancel2()
	select {
	case <-done:
	default:
		t.Fatal("cancel did not close Done")
	}
	if !errors.Is(ctx2.Err(), context.Canceled) {
		t.Fatalf("after cancel: Err() = %v", ctx2.Err())
	}

	// A command with a context of its own gets a context of its own.
	cctx, stop := context.WithCancel(context.Background())
	defer stop()
	f.cctx = cctx
	ctx3, cancel3 := a.appendCtx(f)
	defer cancel3()
	if ctx3 == ctx1 {
		t.Fatal("a command's own context was replaced by the flight's")
	}
}
