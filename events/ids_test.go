package events_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// The IDs derived before these functions were made cheaper: run IDs are in
// logs and goldens, event IDs make retried appends idempotent, so neither
// may change.
var (
	runIDNamespace = uuid.MustParse("0b5a3c8e-7f0e-4d8b-b1d4-2e61b7f1c9a0")
	idNamespace    = uuid.MustParse("6f1c2a52-2f4e-4d57-9a43-7d0f0c6f6e11")
)

func referenceRunID(task uuid.UUID, n int) uuid.UUID {
	return uuid.NewSHA1(runIDNamespace, fmt.Appendf(nil, "%s/%d", task, n))
}

func referenceContentID(stream string, expected events.ExpectedVersion, index int, typ string, data []byte) uuid.UUID {
	var b strings.Builder
	b.WriteString(stream)
	b.WriteByte(0)
	b.WriteString(expected.String())
	b.WriteByte(0)
	b.WriteString(strconv.Itoa(index))
	b.WriteByte(0)
	b.WriteString(typ)
	b.WriteByte(0)
	b.Write(data)
	return uuid.NewSHA1(idNamespace, []byte(b.String()))
}

// TestDerivedIDsStayTheSame pins known IDs and compares both derivations
// (and the stream names) with the reference ones on random inputs.
func TestDerivedIDsStayTheSame(t *testing.T) {
	task := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	for _, c := range []struct {
		got  uuid.UUID
		want string
	}{
		{events.RunID(task, 1), "28f3ac3b-cd9e-5c52-a1d7-31a9dedd83d5"},
		{events.RunID(task, -7), "6112031b-a52b-55d1-b369-0fa9e134114a"},
		{events.RunID(task, 1<<62), "c48473c7-219b-50c3-8057-f82ee7f37cc9"},
		{events.ContentID("task-x", events.Exactly(1), 0, "RunStarted", []byte(`{}`)), "6d401054-df22-5f20-9ec0-43b3324674c1"},
		{events.ContentID("s", events.NoStream, 3, "T", nil), "40b98b8e-958b-5163-b8fa-a6bf59fd06f7"},
		{events.ContentID("s", events.AnyVersion, 12, "T", []byte("x")), "c3edda42-c1e9-5a84-b453-48f95f3a2096"},
	} {
		if c.got.String() != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		var id uuid.UUID
		for j := range id {
			id[j] = byte(rng.Uint32())
		}
		n := int(rng.Int64()) >> rng.IntN(64)
		if i%3 == 0 {
			n = -n
		}
		if got, want := events.TaskStream(id), "task-"+id.String(); got != want {
			t.Fatalf("TaskStream(%s) = %q, want %q", id, got, want)
		}
		if got, want := events.RunID(id, n), referenceRunID(id, n); got != want {
			t.Fatalf("RunID(%s, %d) = %s, want %s", id, n, got, want)
		}
		data := make([]byte, rng.IntN(600))
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		stream := events.TaskStream(id) + strings.Repeat("\x00x", rng.IntN(3))
		exp := []events.ExpectedVersion{events.AnyVersion, events.NoStream, events.Exactly(rng.Uint64() >> rng.IntN(64))}[i%3]
		idx, typ := rng.IntN(1000), []string{"RunEnqueued", "", "TaskCreated"}[rng.IntN(3)]
		if got, want := events.ContentID(stream, exp, idx, typ, data), referenceContentID(stream, exp, idx, typ, data); got != want {
			t.Fatalf("ContentID(%q, %s, %d, %q, %d bytes) = %s, want %s", stream, exp, idx, typ, len(data), got, want)
		}
	}
}

func BenchmarkRunID(b *testing.B) {
	task := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	b.ReportAllocs()
	for i := range b.N {
		events.RunID(task, i)
	}
}

func BenchmarkContentID(b *testing.B) {
	task := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	stream := events.TaskStream(task) + "\x00" + uuid.NewString()
	data := []byte(`{"run_id":"28f3ac3b-cd9e-5c52-a1d7-31a9dedd83d5","run":1,"deadline":"2026-11-22T00:01:00Z"}`)
	b.ReportAllocs()
	for i := range b.N {
		events.ContentID(stream, events.Exactly(uint64(i)), 0, "RunStarted", data)
	}
}
