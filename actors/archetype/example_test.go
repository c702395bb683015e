package archetype_test

import (
	"fmt"
	"time"

	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
)

// A test builds one Archetype on a virtual clock and hands it to every
// component; they all read the same time.
func Example() {
	v := clock.NewVirtual(time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC))
	arch := archetype.Archetype{Clock: v}.WithDefaults()
	arch.Logger.Info("nothing is written: the default logger discards")
	v.RunUntil(v.Now().Add(90 * time.Second))
	fmt.Println(arch.Now().Format(time.RFC3339))
	// Output: 2026-03-08T07:01:30Z
}
