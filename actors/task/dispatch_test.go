package task_test

import (
	"sync"
	"testing"

	"github.com/cronactor/cronactor/actors/task"
)

// TestDispatcherRunsEverythingWithinItsBound: every scheduled run runs,
// never more than max at once,
// scheduling never waits for a run.
func TestDispatcherRunsEverythingWithinItsBound(t *testing.T) {
	d := task.NewDispatcher(2)
	block := make(chan struct{})
	var mu sync.Mutex
	var order []int
	running, most := 0, 0
	var wg sync.WaitGroup
	run := func(i int) func() {
		return func() {
			defer wg.Done()
			mu.Lock()
			running++
			most = max(most, running)
			order = append(order, i)
			mu.Unlock()
			if i < 2 {
				<-block // the first two hold both goroutines
			}
			mu.Lock()
			running--
			mu.Unlock()
		}
	}
	const n = 50
	wg.Add(n)
	for i := range n {
		d.Schedule(run(i)) // returns at once although both goroutines are held
	}
	close(block)
	wg.Wait()
	if most > 2 {
		t.Fatalf("%d runs at once, bound 2", most)
	}
	if len(order) != n {
		t.Fatalf("%d runs, want %d", len(order), n)
	}
}

// TestDispatcherKeepsOrderWithOneGoroutine: with a bound of 1, queued runs
// run in the order they were scheduled.
func TestDispatcherKeepsOrderWithOneGoroutine(t *testing.T) {
	d := task.NewDispatcher(1)
	block := make(chan struct{})
	var order []int // written by one goroutine at a time, read after wg.Wait
	var wg sync.WaitGroup
	const n = 20
	wg.Add(n)
	for i := range n {
		d.Schedule(func() {
			defer wg.Done()
			if i == 0 {
				<-block
			}
			order = append(order, i)
		})
	}
	close(block)
	wg.Wait()
	for k, i := range order {
		if i != k {
			t.Fatalf("runs out of order: %v", order)
		}
	}
}
