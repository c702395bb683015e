package clock

import (
	"container/heap"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrStalled: work stayed in flight on a Virtual clock, with nothing begun
// or ended, for longer than its stall limit (see Virtual.StallAfter).
var ErrStalled = errors.New("clock: stalled")

// Virtual is a clock that moves only when told to, and only when nothing is
// in flight. See the package doc.
type Virtual struct {
	mu     sync.Mutex
	idle   *sync.Cond
	now    time.Time
	busy   int
	seq    uint64
	timers timerHeap

	stallAfter time.Duration
	moves      uint64 // Begin and End calls: progress, when waiting
	err        error  // ErrStalled, once stalled
}

// NewVirtual returns a virtual clock reading start.
func NewVirtual(start time.Time) *Virtual {
	v := &Virtual{now: start.UTC()}
	v.idle = sync.NewCond(&v.mu)
	return v
}

// Now implements Clock.
func (v *Virtual) Now() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.now
}

// StallAfter sets the stall limit: once work has stayed in flight for d
// of real time with nothing begun or ended meanwhile, the clock gives up
// waiting for quiescence and stops — Step and RunUntil return at once,
// firing nothing — and Err reports ErrStalled. Work counted with Begin and
// never ended (a bug) otherwise hangs the driver silently. Zero, the
// default, waits forever. Call it before driving the clock.
func (v *Virtual) StallAfter(d time.Duration) {
	v.mu.Lock()
	v.stallAfter = d
	v.mu.Unlock()
}

// Err reports whether the clock stalled (see StallAfter).
func (v *Virtual) Err() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.err
}

// Begin implements Clock.
func (v *Virtual) Begin() {
	v.mu.Lock()
	v.busy++
	v.moves++
	v.mu.Unlock()
}

// End implements Clock.
func (v *Virtual) End() {
	v.mu.Lock()
	v.busy--
	v.moves++
	if v.busy < 0 {
		v.mu.Unlock()
		panic("clock: Virtual.End without Begin")
	}
	if v.busy == 0 {
		v.idle.Broadcast()
	}
	v.mu.Unlock()
}

type vtimer struct {
	v     *Virtual
	at    time.Time
	seq   uint64
	f     func()
	index int // in the heap; -1 once fired or stopped
}

// Stop implements Timer.
func (t *vtimer) Stop() bool {
	t.v.mu.Lock()
	defer t.v.mu.Unlock()
	if t.index < 0 {
		return false
	}
	heap.Remove(&t.v.timers, t.index)
	t.index = -1
	return true
}

// AfterFunc implements Clock. Timers fire in due-time order, ties in the
// order they were set.
func (v *Virtual) AfterFunc(d time.Duration, f func()) Timer {
	v.mu.Lock()
	defer v.mu.Unlock()
	if d < 0 {
		d = 0
	}
	v.seq++
	t := &vtimer{v: v, at: v.now.Add(d), seq: v.seq, f: f}
	heap.Push(&v.timers, t)
	return t
}

// Quiesce waits until nothing is in flight (or the clock stalls).
func (v *Virtual) Quiesce() {
	v.mu.Lock()
	v.waitIdle()
	v.mu.Unlock()
}

// waitIdle waits, v.mu held, until nothing is in flight; it reports false
// if the clock has stalled instead.
func (v *Virtual) waitIdle() bool {
	if v.busy > 0 && v.err == nil && v.stallAfter > 0 {
		// Wake up now and then to look for progress.
		done := make(chan struct{})
		defer close(done)
		go func() {
			t := time.NewTicker(max(v.stallAfter/4, time.Millisecond))
			defer t.Stop()
			for {
				select {
				case <-done:
					return
				case <-t.C:
					v.mu.Lock()
					v.idle.Broadcast()
					v.mu.Unlock()
				}
			}
		}()
	}
	moves, since := v.moves, time.Now()
	for v.busy > 0 && v.err == nil {
		v.idle.Wait()
		switch {
		case v.moves != moves:
			moves, since = v.moves, time.Now()
		case v.stallAfter > 0 && time.Since(since) >= v.stallAfter:
			v.err = fmt.Errorf("%w: %d unit(s) of work in flight at %s, none begun or ended for %s",
				ErrStalled, v.busy, v.now.Format(time.RFC3339Nano), v.stallAfter)
		}
	}
	return v.err == nil
}

// RunUntil fires, one at a time and each after the system is quiescent,
// every timer due at or before t, then sets the clock to t.
func (v *Virtual) RunUntil(t time.Time) {
	for v.Step(t) {
	}
}

// Step waits for quiescence and fires the earliest timer due at or before
// limit, moving the clock to its time. It reports whether it fired one; if
// not, the clock is set to limit (if that is later) — unless it stalled
// (see StallAfter).
func (v *Virtual) Step(limit time.Time) bool {
	v.mu.Lock()
	if !v.waitIdle() {
		v.mu.Unlock()
		return false
	}
	if len(v.timers) == 0 || v.timers[0].at.After(limit) {
		if limit.After(v.now) {
			v.now = limit
		}
		v.mu.Unlock()
		return false
	}
	t := heap.Pop(&v.timers).(*vtimer)
	t.index = -1
	if t.at.After(v.now) {
		v.now = t.at
	}
	v.busy++ // the timer's function is in flight
	v.mu.Unlock()
	t.f()
	v.End()
	return true
}

// Freeze moves the clock on by d as a process frozen for that long (a
// SIGSTOP, a paused VM, a swap storm) sees its clock move: once nothing is
// in flight, the time jumps by d and no timer fires on the way. The
// timers that fell due meanwhile fire late, at the next Step or RunUntil,
// in their order, each with the clock reading the later time — as the wall
// clock's timers fire when such a process runs again. It reports false,
// moving nothing, if the clock has stalled (see StallAfter).
func (v *Virtual) Freeze(d time.Duration) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.waitIdle() {
		return false
	}
	if d > 0 {
		v.now = v.now.Add(d)
	}
	return true
}

// Pending reports the number of timers set and not fired.
func (v *Virtual) Pending() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.timers)
}

type timerHeap []*vtimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*vtimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}
