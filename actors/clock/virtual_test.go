package clock_test

import (
	"context"
	"errors"
	"strings"
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

// lateDone is a context derived from parent whose Done closes a while
// (of real time) after parent's: a goroutine slow to wake.
type lateDone struct {
	context.Context
	done chan struct{}
}

func newLateDone(parent context.Context, delay time.Duration) *lateDone {
	l := &lateDone{Context: parent, done: make(chan struct{})}
	go func() {
		<-parent.Done()
		time.Sleep(delay)
		close(l.done)
	}()
	return l
}

func (l *lateDone) Done() <-chan struct{} { return l.done }

// TestSleepEndedByTheClockHoldsTheClock: a sleeper whose context ends at an
// instant of the clock is counted in flight from that instant, so the
// clock waits for it to wake (however slowly) rather than running on.
func TestSleepEndedByTheClockHoldsTheClock(t *testing.T) {
	v := clock.NewVirtual(t0)
	ctx, cancel := clock.WithDeadline(context.Background(), v, t0.Add(5*time.Second))
	defer cancel()
	v.AfterFunc(time.Minute, func() {}) // something later for the clock to run to
	v.Begin()
	woke := make(chan time.Time, 1)
	go func() {
		defer v.End()
		_ = clock.Sleep(newLateDone(ctx, 100*time.Millisecond), v, time.Hour)
		woke <- v.Now()
	}()
	v.RunUntil(t0.Add(2 * time.Minute))
	if at := <-woke; !at.Equal(t0.Add(5 * time.Second)) {
		t.Fatalf("the sleeper woke at %s, want 5s", at.Sub(t0))
	}
	v.Quiesce()
}

// TestSleepEndedByTheClockAtItsOwnTime: the context and the sleep end at
// one instant; the sleeper is counted once, not twice.
func TestSleepEndedByTheClockAtItsOwnTime(t *testing.T) {
	v := clock.NewVirtual(t0)
	ctx, cancel := clock.WithDeadline(context.Background(), v, t0.Add(5*time.Second))
	defer cancel()
	inner, cancelInner := context.WithCancel(ctx)
	defer cancelInner()
	v.Begin()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer v.End()
		_ = clock.Sleep(inner, v, 5*time.Second)
	}()
	v.RunUntil(t0.Add(time.Minute))
	<-done
	quiet := make(chan struct{})
	go func() { v.Quiesce(); close(quiet) }()
	select {
	case <-quiet:
	case <-time.After(5 * time.Second):
		t.Fatal("the sleeper is still counted in flight")
	}
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

// TestStallAfter: work left in flight with no progress stops the clock
// with ErrStalled instead of hanging its driver; work that keeps
// progressing, however long it takes, does not.
func TestStallAfter(t *testing.T) {
	v := clock.NewVirtual(t0)
	v.StallAfter(100 * time.Millisecond)
	fired := false
	v.AfterFunc(time.Second, func() { fired = true })
	v.Begin() // never ended
	done := make(chan struct{})
	go func() { v.RunUntil(t0.Add(time.Minute)); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("RunUntil still waits")
	}
	if err := v.Err(); !errors.Is(err, clock.ErrStalled) || !strings.Contains(err.Error(), "1 unit(s) of work in flight") {
		t.Fatalf("Err() = %v", err)
	}
	if fired || !v.Now().Equal(t0) {
		t.Fatalf("a stalled clock moved: fired %v, now %s", fired, v.Now().Sub(t0))
	}
	v.End()
	v.RunUntil(t0.Add(time.Minute)) // stays stopped
	if fired || !v.Now().Equal(t0) {
		t.Fatalf("a stalled clock moved: fired %v, now %s", fired, v.Now().Sub(t0))
	}

	v = clock.NewVirtual(t0)
	v.StallAfter(time.Second)
	v.Begin()
	go func() {
		defer v.End()
		for range 75 { // 1.5s in all, longer than the limit, progressing every 20ms
			time.Sleep(20 * time.Millisecond)
			v.Begin()
			v.End()
		}
	}()
	v.RunUntil(t0.Add(time.Minute))
	if err := v.Err(); err != nil || !v.Now().Equal(t0.Add(time.Minute)) {
		t.Fatalf("Err() = %v, now %s", err, v.Now().Sub(t0))
	}
}

// TestFreezeFiresOverdueTimersLate: a freeze moves the time on and fires
// nothing; the timers that fell due meanwhile fire at the next step, in
// their order, at the later time; those still ahead fire on time.
func TestFreezeFiresOverdueTimersLate(t *testing.T) {
	v := clock.NewVirtual(t0)
	var got []string
	add := func(d time.Duration, name string) {
		v.AfterFunc(d, func() { got = append(got, name+"@"+v.Now().Sub(t0).String()) })
	}
	add(2*time.Second, "b")
	add(time.Second, "a")
	add(20*time.Second, "c")
	if !v.Freeze(10*time.Second) || !v.Now().Equal(t0.Add(10*time.Second)) {
		t.Fatalf("after the freeze the clock reads %s, want 10s", v.Now().Sub(t0))
	}
	if len(got) != 0 {
		t.Fatalf("fired %v during the freeze", got)
	}
	v.RunUntil(t0.Add(30 * time.Second))
	want := []string{"a@10s", "b@10s", "c@20s"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("fired %v, want %v", got, want)
	}
}
