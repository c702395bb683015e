package scheduler_test

import (
	"crypto/sha1"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/actors/scheduler"
	"github.com/google/uuid"
)

// recordedTaskID is the derivation every task ID in existing logs was made
// with: SHA-1 of owner ‖ 0x00 ‖ name, as a name-based UUID.
func recordedTaskID(owner, name string) uuid.UUID {
	h := sha1.New()
	h.Write([]byte(owner))
	h.Write([]byte{0})
	h.Write([]byte(name))
	return uuid.NewSHA1(uuid.MustParse("5d0c7f1e-3b8a-4e62-9f0d-2a7c4b9e1d33"), h.Sum(nil))
}

// Every pair without a NUL — every pair the rules accept, and every pair
// recorded in a log that did not exploit the collision — keeps the ID it
// was recorded under.
func TestTaskIDKeepsRecordedIDs(t *testing.T) {
	// IDs as they are written in existing logs.
	for _, c := range []struct{ owner, name, id string }{
		{"channel/pop3/42", "poll", "58772c0c-fea1-5c4f-ae60-4c0f191c3786"},
		{"", "", "bc4b1ca1-785c-5bbd-8273-6b289ea463ca"},
	} {
		if got := scheduler.TaskID(c.owner, c.name); got.String() != c.id {
			t.Errorf("TaskID(%q, %q) = %s, recorded as %s", c.owner, c.name, got, c.id)
		}
	}
	// Many pairs drawn from printable ASCII, other scripts, emoji and every
	// control character but NUL.
	pieces := []string{"a", "b", "Z", "0", "/", " ", ":", "-", ".", "é", "名", "й", "\U0001F600", "\u200d",
		"\x01", "\n", "\t", "\x1b[31m", "\x7f", "\u0085", "\u202e", "\u2066", "\xff"}
	rng := rand.New(rand.NewPCG(1, 2))
	str := func() string {
		var b strings.Builder
		for n := rng.IntN(12); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	for i := 0; i < 100_000; i++ {
		owner, name := str(), str()
		if got, want := scheduler.TaskID(owner, name), recordedTaskID(owner, name); got != want {
			t.Fatalf("TaskID(%q, %q) = %s, recorded as %s", owner, name, got, want)
		}
	}
}

// Issue: owner "victim" with name "b\x00c" was the task of owner
// "victim\x00b" with name "c".
func TestTaskIDIsInjective(t *testing.T) {
	if a, b := scheduler.TaskID("victim", "b\x00c"), scheduler.TaskID("victim\x00b", "c"); a == b {
		t.Fatalf("owner victim, name b\\0c and owner victim\\0b, name c share ID %s", a)
	}
	// Every pair of strings over {NUL, a, b} up to three bytes long: all
	// IDs differ, and a pair's ID differs from the one every NUL-free pair
	// was recorded under unless it is that pair.
	var all []string
	var grow func(s string)
	grow = func(s string) {
		all = append(all, s)
		if len(s) < 3 {
			for _, c := range []string{"\x00", "a", "b"} {
				grow(s + c)
			}
		}
	}
	grow("")
	type pair struct{ owner, name string }
	seen := map[uuid.UUID]pair{}
	recorded := map[uuid.UUID]pair{}
	for _, o := range all {
		for _, n := range all {
			if !strings.Contains(o+n, "\x00") {
				recorded[recordedTaskID(o, n)] = pair{o, n}
			}
		}
	}
	for _, o := range all {
		for _, n := range all {
			id := scheduler.TaskID(o, n)
			if p, ok := seen[id]; ok {
				t.Fatalf("(%q, %q) and (%q, %q) share ID %s", o, n, p.owner, p.name, id)
			}
			seen[id] = pair{o, n}
			if p, ok := recorded[id]; ok && p != (pair{o, n}) {
				t.Fatalf("(%q, %q) has the recorded ID of (%q, %q)", o, n, p.owner, p.name)
			}
		}
	}
	if len(seen) != len(all)*len(all) {
		t.Fatalf("%d IDs for %d pairs", len(seen), len(all)*len(all))
	}
}
