package embedded_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/google/uuid"
)

// TestStreamsThatNameOneTaskDifferentlyAreApart appends to a task's stream
// and to streams whose names differ from it only in how they write the ID
// (uppercase, braces, a hyphen moved) or in the prefix, before and after a
// reopen (when the heads are read from the log again), and checks that
// each keeps versions of its own: the committer keys task streams by their
// ID, and only the canonical name is one.
func TestStreamsThatNameOneTaskDifferentlyAreApart(t *testing.T) {
	id := uuid.MustParse("0a1b2c3d-4e5f-4a6b-8c9d-0e1f2a3b4c5d")
	canon := events.TaskStream(id)
	streams := []string{
		canon,
		strings.ToUpper(canon[:5]) + canon[5:],
		canon[:5] + strings.ToUpper(canon[5:]),
		canon[:5] + "{" + canon[5:] + "}",
		canon[:13] + canon[14:18] + "-" + canon[18:],
		"tasks" + canon[5:],
		canon[:40] + "g",
		canon + "0",
	}
	dir := t.TempDir()
	ctx := context.Background()
	version := make([]int64, len(streams)) // each stream's last version, -1: none
	for i := range version {
		version[i] = -1
	}
	for round := range 3 {
		s, err := embedded.Open(dir, embedded.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for pass := range 2 { // the second pass finds the heads the first left
			for i, stream := range streams {
				// Stream i gets i+1 events an append, so the versions differ.
				exp := events.NoStream
				if version[i] >= 0 {
					exp = events.Exactly(uint64(version[i]))
				}
				evs := make([]events.Proposed, i+1)
				for j := range evs {
					evs[j] = events.Proposed{Type: "Tested", Schema: 1, At: testTime, Data: []byte(`{}`)}
				}
				res, err := s.Append(ctx, stream, exp, evs...)
				if err != nil {
					t.Fatalf("round %d pass %d: append %d events to %q, expecting %v: %v", round, pass, i+1, stream, exp, err)
				}
				version[i] += int64(i + 1)
				if res.Version != uint64(version[i]) {
					t.Fatalf("round %d pass %d: %q at version %d, want %d", round, pass, stream, res.Version, version[i])
				}
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
