package embedded

import (
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// TestTaskStreamIDReadsWhatTaskStreamWrites checks that taskStreamID reads
// back the ID of every task stream's name, and that a name changed in any
// one character is either not a task stream's or is the name of the ID it
// reads: two names never share a head.
func TestTaskStreamIDReadsWhatTaskStreamWrites(t *testing.T) {
	for i := range 500 {
		id := uuid.New()
		if i == 0 {
			id = uuid.Nil
		}
		name := events.TaskStream(id)
		if got, ok := taskStreamID(name); !ok || got != id {
			t.Fatalf("taskStreamID(%q) = %v, %v; want %v, true", name, got, ok, id)
		}
		for j := range len(name) {
			for _, c := range []byte("0179afAFg-{ x") {
				if c == name[j] {
					continue
				}
				changed := name[:j] + string(c) + name[j+1:]
				if got, ok := taskStreamID(changed); ok && events.TaskStream(got) != changed {
					t.Fatalf("taskStreamID(%q) = %v, the ID of %q", changed, got, events.TaskStream(got))
				}
			}
		}
	}
}
