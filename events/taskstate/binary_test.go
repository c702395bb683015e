package taskstate_test

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/taskstate"
	"github.com/google/uuid"
)

// fill sets v (settable) to a random value, field by field through every
// struct, slice and pointer: a field added to State (or to a type State
// holds) gets random values here without anyone touching this test, so a
// binary form that forgets it fails TestBinaryRoundTrip.
func fill(rng *rand.Rand, v reflect.Value, depth int) {
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		if rng.IntN(5) == 0 {
			v.Set(reflect.ValueOf(time.Time{}))
			return
		}
		// Between 1970 and 9999 (rules.MinTime, MaxTime), any nanosecond.
		sec := rng.Int64N(253402300799)
		v.Set(reflect.ValueOf(time.Unix(sec, rng.Int64N(1e9)).UTC()))
		return
	case reflect.TypeFor[json.RawMessage]():
		switch rng.IntN(4) {
		case 0:
			v.Set(reflect.ValueOf(json.RawMessage(nil)))
		case 1:
			v.Set(reflect.ValueOf(json.RawMessage{}))
		default:
			b := make([]byte, rng.IntN(40))
			for i := range b {
				b[i] = byte(rng.UintN(256))
			}
			v.Set(reflect.ValueOf(json.RawMessage(b)))
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if !v.Type().Field(i).IsExported() {
				panic("fill: unexported field " + v.Type().Field(i).Name + " of " + v.Type().String())
			}
			fill(rng, v.Field(i), depth)
		}
	case reflect.Array: // uuid.UUID
		for i := 0; i < v.Len(); i++ {
			fill(rng, v.Index(i), depth)
		}
	case reflect.Slice:
		switch rng.IntN(4) {
		case 0:
			v.Set(reflect.Zero(v.Type()))
			return
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		n := 1 + rng.IntN(4)
		if depth > 2 {
			n = 1
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			fill(rng, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Pointer:
		if rng.IntN(3) == 0 {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.String:
		b := make([]rune, rng.IntN(12))
		for i := range b {
			b[i] = rune(0x20 + rng.IntN(0x3000))
		}
		v.SetString(string(b))
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Int, reflect.Int64:
		switch rng.IntN(4) {
		case 0:
			v.SetInt(0)
		case 1:
			v.SetInt(rng.Int64() - rng.Int64())
		default:
			v.SetInt(rng.Int64N(2000) - 1000)
		}
	case reflect.Uint8:
		v.SetUint(uint64(rng.UintN(256)))
	case reflect.Uint64:
		v.SetUint(rng.Uint64() >> rng.UintN(64))
	case reflect.Float64:
		v.SetFloat(rng.NormFloat64() * 1e3)
	default:
		panic("fill: no random values for " + v.Type().String() + " (kind " + v.Kind().String() + "): teach fill and the binary form")
	}
}

// TestBinaryRoundTrip: every State, its binary form read back, is the same
// State, field for field, nil-ness of slices and pointers included.
func TestBinaryRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 1))
	for i := 0; i < 5000; i++ {
		var s taskstate.State
		fill(rng, reflect.ValueOf(&s).Elem(), 0)
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var got taskstate.State
		if err := got.UnmarshalBinary(b); err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Fatalf("state %d: round trip\n got %+v\nwant %+v", i, got, s)
		}
		// Appending to a buffer with bytes in it leaves them alone.
		pre := []byte("prefix")
		b2, _ := s.AppendBinary(pre)
		if string(b2[:len(pre)]) != "prefix" || string(b2[len(pre):]) != string(b) {
			t.Fatalf("state %d: AppendBinary differs from MarshalBinary", i)
		}
	}
}

// TestBinaryFields pins the fields the binary form writes: a field added to
// one of these types must be added to binary.go (and here).
func TestBinaryFields(t *testing.T) {
	want := map[reflect.Type]string{
		reflect.TypeFor[taskstate.State](): "ID Spec Status NextRun NextSlot NextSpacing Scheduled LastRun Runs Checkpoint Open " +
			"Incarnation Version Backlog Retries Failures PauseReason CreatedAt UpdatedAt Compacted CompactedAt CompactedThrough FirstAt DeletedAt DeleteReason Backfill",
		reflect.TypeFor[taskstate.Spec](): "Name Owner Kind Payload Schedule Window Tolerance Timebox Priority MaxWaiting Policy ToleranceSet HistoryRetention",
		reflect.TypeFor[taskstate.Run](): "ID Number Due EnqueuedAt Priority Incarnation Slot Spacing Started StartedAt Deadline " +
			"Checkpoint Attempt RetryOf Trigger Origin",
		reflect.TypeFor[taskstate.PendingRetry](): "Of Run Attempt Slot Spacing At Origin",
		reflect.TypeFor[events.Schedule]():        "Interval Cron At Timezone DSTGap DSTOverlap Exclude",
		reflect.TypeFor[events.Window]():          "StartAt EndAt MaxRuns Jitter",
		reflect.TypeFor[events.Policy]():          "Queue Retry MissedRunPolicy MissedAfter StartDeadline HeartbeatTimeout Overlap PauseAfterFailures",
		reflect.TypeFor[events.Retry]():           "MaxAttempts InitialBackoff MaxBackoff Multiplier",
	}
	for typ, names := range want {
		got := ""
		for i := 0; i < typ.NumField(); i++ {
			if i > 0 {
				got += " "
			}
			got += typ.Field(i).Name
		}
		if got != names {
			t.Errorf("%s has fields %q; the binary form (binary.go) writes %q: encode the new field, then update this list", typ, got, names)
		}
	}
}

// A real state (from its events) survives the round trip, and bytes that
// are cut short or of another version are refused, not misread.
func TestBinaryRefusesBadInput(t *testing.T) {
	id := uuid.MustParse("11111111-2222-3333-4444-555555555555")
	t0 := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	s := taskstate.Evolve(taskstate.State{}, events.Metadata{Version: 0, At: t0}, events.TaskCreated{TaskID: id, Name: "poll",
		Owner: "o", Kind: "noop", Schedule: events.Schedule{Interval: events.Duration(time.Minute)}, NextRun: t0.Add(time.Minute)})
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got taskstate.State
	if err := got.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip: %v\n got %+v\nwant %+v", err, got, s)
	}
	for n := 0; n < len(b); n++ {
		if err := got.UnmarshalBinary(b[:n]); !errors.Is(err, taskstate.ErrBinary) {
			t.Fatalf("%d of %d bytes: err %v, want ErrBinary", n, len(b), err)
		}
	}
	if err := got.UnmarshalBinary(append(b, 0)); !errors.Is(err, taskstate.ErrBinary) {
		t.Fatalf("a byte too many: err %v, want ErrBinary", err)
	}
	bad := append([]byte{}, b...)
	bad[0] = 99
	if err := got.UnmarshalBinary(bad); !errors.Is(err, taskstate.ErrBinary) {
		t.Fatalf("version 99: err %v, want ErrBinary", err)
	}
	t.Logf("an interval task: %d bytes", len(b))
}
