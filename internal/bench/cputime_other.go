//go:build !unix

package bench

import "time"

// cpuTime is not measured here: the CPU figures read 0.
func cpuTime() time.Duration { return 0 }
