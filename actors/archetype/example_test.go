package archetype_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/cronactor/cronactor/actors/archetype"
	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/events"
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

// An actor reports a failure through Failed: logged, unless it is the
// store refusing appends, which the store reports itself once.
func ExampleArchetype_Failed() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	arch := archetype.Archetype{Logger: logger}
	arch.Failed(slog.LevelError, "tick failed", errors.New("task stream unreadable"), "task_id", "t1")
	arch.Failed(slog.LevelError, "tick failed", fmt.Errorf("%w: /data", events.ErrReadOnly), "task_id", "t1")
	// Output: level=ERROR msg="tick failed" task_id=t1 err="task stream unreadable"
}
