package rules_test

import (
	"fmt"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
)

// R13's backoff: the wait before retrying a run that failed at attempt n.
func ExampleBackoff() {
	p := events.Retry{MaxAttempts: 5, InitialBackoff: events.Duration(time.Second), MaxBackoff: events.Duration(10 * time.Second), Multiplier: 3}
	for n := 1; n < p.MaxAttempts; n++ {
		fmt.Printf("attempt %d failed: retry after %s\n", n, rules.Backoff(p, n))
	}
	// Output:
	// attempt 1 failed: retry after 1s
	// attempt 2 failed: retry after 3s
	// attempt 3 failed: retry after 9s
	// attempt 4 failed: retry after 10s
}
