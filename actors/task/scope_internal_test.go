package task

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestNewScope: an actor's scope is its stream, a NUL and a random version
// 4 UUID, different for every actor, made in one allocation.
func TestNewScope(t *testing.T) {
	const stream = "task-0f8e2a6c-3b1d-4e5f-8a9b-0c1d2e3f4a5b"
	a, b := newScope(stream), newScope(stream)
	if a == b {
		t.Fatalf("two scopes alike: %q", a)
	}
	head, rest, ok := strings.Cut(a, "\x00")
	if !ok || head != stream {
		t.Fatalf("scope %q: want the stream, then a NUL", a)
	}
	id, err := uuid.Parse(rest)
	if err != nil || id.String() != rest || id.Version() != 4 || id.Variant() != uuid.RFC4122 {
		t.Fatalf("scope's ID %q: %v (version %d, variant %s)", rest, err, id.Version(), id.Variant())
	}
	if n := testing.AllocsPerRun(100, func() { _ = newScope(stream) }); n != 1 {
		t.Fatalf("%v allocations per scope, want 1", n)
	}
}
