package rules

import (
	"testing"

	"github.com/cronactor/cronactor/events"
)

// TestCompiledCacheBounded: the process-wide cache of compiled schedules
// never holds more than cacheLimit forms, and a form first seen once it is
// full is still cached (compiled once, then the same schedule).
func TestCompiledCacheBounded(t *testing.T) {
	spec := func(n int) Spec {
		return Spec{Schedule: events.Schedule{Cron: []string{"0 9 * * *"}}, Window: events.Window{MaxRuns: n}}
	}
	for n := 1; n <= cacheLimit+10; n++ {
		if _, err := Compiled(spec(n)); err != nil {
			t.Fatal(err)
		}
		compiledCache.Lock()
		size := len(compiledCache.m)
		compiledCache.Unlock()
		if size > cacheLimit {
			t.Fatalf("after %d forms the cache holds %d, more than its bound %d", n, size, cacheLimit)
		}
	}
	late := spec(cacheLimit + 11)
	a, err := Compiled(late)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := Compiled(late); b != a {
		t.Fatal("a form first seen after the cache filled is compiled anew on every use")
	}
}
