package clock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestTimersFireInTimeThenCreationOrder(t *testing.T) {
	v := clock.NewVirtual(t0)
	var got []string
	add := func(d time.Duration, name string) {
		v.AfterFunc(d, func() { got = append(got, name+"@"+v.Now().Sub(t0).String()) })
	}
	add(2*time.Second, "c")
	add(time.Second, "a")
	add(time.Second, "b")
	stopped := v.AfterFunc(time.Second, func() { got = append(got, "stopped") })
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop should report true once")
	}
	add(5*time.Second, "late")
	v.RunUntil(t0.Add(3 * time.Second))
	want := []string{"a@1s", "b@1s", "c@2s"}
	if len(got) != len(want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("fired %v, want %v", got, want)
		}
	}
	if !v.Now().Equal(t0.Add(3*time.Second)) || v.Pending() != 1 {
		t.Fatalf("now %s pending %d", v.Now().Sub(t0), v.Pending())
	}
}

// TestTimeWaitsForWorkInFlight: the clock does not move while something is
// counted, and a counted goroutine sleeping on the clock lets it move.
func TestTimeWaitsForWorkInFlight(t *testing.T) {
	v := clock.NewVirtual(t0)
	v.Begin()
	release := make(chan struct{})
	var woke time.Time
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer v.End()
		<-release // busy: time must not move yet
		if err := clock.Sleep(context.Background(), v, 10*time.Second); err != nil {
			t.Error(err)
		}
		woke = v.Now()
	}()
	moved := make(chan struct{})
	go func() { v.RunUntil(t0.Add(time.Minute)); close(moved) }()
	select {
	case <-moved:
		t.Fatal("time moved while work was in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-moved
	wg.Wait()
	if !woke.Equal(t0.Add(10 * time.Second)) {
		t.Fatalf("sleeper woke at %s", woke.Sub(t0))
	}
}

func TestSleepEndsWithItsContext(t *testing.T) {
	v := clock.NewVirtual(t0)
	ctx, cancel := clock.WithDeadline(context.Background(), v, t0.Add(5*time.Second))
	defer cancel()
	v.Begin()
	errc := make(chan error, 1)
	go func() {
		defer v.End()
		errc <- clock.Sleep(ctx, v, time.Minute)
	}()
	v.RunUntil(t0.Add(2 * time.Minute))
	if err := <-errc; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Sleep returned %v", err)
	}
	if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
	v.Quiesce()
}

// TestWithDeadlineRealClock: under the wall clock the context reports its
// deadline and ends with DeadlineExceeded, as context.WithDeadline does.
func TestWithDeadlineRealClock(t *testing.T) {
	deadline := time.Now().Add(20 * time.Millisecond)
	ctx, cancel := clock.WithDeadline(context.Background(), clock.Real{}, deadline)
	defer cancel()
	if d, ok := ctx.Deadline(); !ok || !d.Equal(deadline) {
		t.Fatalf("Deadline() = %v, %v; want %v, true", d, ok, deadline)
	}
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err() = %v, want DeadlineExceeded", ctx.Err())
	}
}

// TestWithDeadlineVirtualClock: under the virtual clock the context reports
// the virtual deadline, ends with DeadlineExceeded when the clock reaches
// it, and so do contexts derived from it.
func TestWithDeadlineVirtualClock(t *testing.T) {
	v := clock.NewVirtual(t0)
	ctx, cancel := clock.WithDeadline(context.Background(), v, t0.Add(5*time.Second))
	defer cancel()
	child, cancelChild := context.WithCancel(ctx)
	defer cancelChild()
	if d, ok := ctx.Deadline(); !ok || !d.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("Deadline() = %v, %v", d, ok)
	}
	if d, ok := child.Deadline(); !ok || !d.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("child Deadline() = %v, %v", d, ok)
	}
	v.RunUntil(t0.Add(4 * time.Second))
	if ctx.Err() != nil {
		t.Fatalf("ended early: %v", ctx.Err())
	}
	v.RunUntil(t0.Add(5 * time.Second))
	<-ctx.Done()
	<-child.Done()
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err() = %v, child %v; want DeadlineExceeded", ctx.Err(), child.Err())
	}
	if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Fatalf("Cause = %v", context.Cause(ctx))
	}
}

// TestWithDeadlineVirtualClockCancel: cancel and the parent end it with
// Canceled, and stop its timer.
func TestWithDeadlineVirtualClockCancel(t *testing.T) {
	v := clock.NewVirtual(t0)
	parent, cancelParent := context.WithCancel(context.Background())
	ctx, cancel := clock.WithDeadline(parent, v, t0.Add(time.Hour))
	defer cancel()
	cancelParent()
	<-ctx.Done()
	if !errors.Is(ctx.Err(), context.Canceled) || v.Pending() != 0 {
		t.Fatalf("Err() = %v, pending %d", ctx.Err(), v.Pending())
	}
	ctx2, cancel2 := clock.WithDeadline(context.Background(), v, t0.Add(time.Hour))
	cancel2()
	if !errors.Is(ctx2.Err(), context.Canceled) || v.Pending() != 0 {
		t.Fatalf("Err() = %v, pending %d", ctx2.Err(), v.Pending())
	}
}
