package clock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
)

// A context that ends at an instant of the virtual clock reports that
// instant as its deadline and ends with DeadlineExceeded once the clock
// reaches it — as context.WithDeadline does on the wall clock.
func ExampleWithDeadline() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	v := clock.NewVirtual(start)
	ctx, cancel := clock.WithDeadline(context.Background(), v, start.Add(30*time.Second))
	defer cancel()
	d, _ := ctx.Deadline()
	fmt.Println("deadline", d.Sub(start), "err", ctx.Err())
	v.RunUntil(start.Add(time.Minute))
	<-ctx.Done()
	fmt.Println("at", v.Now().Sub(start), "err", ctx.Err())
	// Output:
	// deadline 30s err <nil>
	// at 1m0s err context deadline exceeded
}
