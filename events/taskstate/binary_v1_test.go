package taskstate_test

import (
	"encoding/hex"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/events/taskstate"
	"github.com/google/uuid"
)

// TestBinaryReadsVersion1 reads states written by the build before
// schedule exclusions (version 1 of the binary form; testdata made with
// that build's AppendBinary from random states): snapshot records of an
// earlier build must be read at the next start. Written again, each is
// read back as the same state, with no exclusions, no overlap or
// pause_after_failures, no failures counted and no pause reason.
func TestBinaryReadsVersion1(t *testing.T) { readOlder(t, "testdata/state_v1.hex", 1) }

// TestBinaryReadsVersion2 does the same for states written by the build
// before overlap and pause_after_failures (version 2, with exclusions;
// testdata made with that build's AppendBinary from random states).
func TestBinaryReadsVersion2(t *testing.T) { readOlder(t, "testdata/state_v2.hex", 2) }

// TestBinaryReadsVersion3 does the same for states of the build before
// history retention (version 3). testdata/state_v3.hex was made from
// random states with no retention fields, written by this build's
// AppendBinary, cut of the retention fields (seven zero bytes at the end)
// and marked version 3: the layout of version 3 is version 4's without
// that tail.
func TestBinaryReadsVersion3(t *testing.T) { readOlder(t, "testdata/state_v3.hex", 3) }

// TestBinaryReadsVersion4 does the same for states of the build before
// backfill (version 4): testdata/state_v4.hex holds random states written
// by that build's AppendBinary (the commit before version 5), which
// version 5 reads with no backfill slots waiting.
func TestBinaryReadsVersion4(t *testing.T) { readOlder(t, "testdata/state_v4.hex", 4) }

// TestBinaryReadsVersion5 does the same for states of the build before
// Run.Origin and PendingRetry.Origin (version 5): testdata/state_v5.hex
// holds random states written by that build's AppendBinary (the commit
// before version 6). A first attempt's origin is read as its trigger; a
// retry's, and a pending retry's, as none.
func TestBinaryReadsVersion5(t *testing.T) { readOlder(t, "testdata/state_v5.hex", 5) }

func readOlder(t *testing.T, path string, version byte) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(data))
	if len(lines) == 0 {
		t.Fatalf("no states in %s", path)
	}
	for i, line := range lines {
		old, err := hex.DecodeString(line)
		if err != nil {
			t.Fatal(err)
		}
		if old[0] != version {
			t.Fatalf("state %d of %s is of version %d", i, path, old[0])
		}
		var s taskstate.State
		if err := s.UnmarshalBinary(old); err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		if version == 1 && s.Spec.Schedule.Exclude != nil {
			t.Fatalf("state %d: exclusions %q read from version 1", i, s.Spec.Schedule.Exclude)
		}
		if p := s.Spec.Policy; version < 3 && (p.Overlap != "" || p.PauseAfterFailures != 0 || s.Failures != 0 || s.PauseReason != "") {
			t.Fatalf("state %d: fields of version 3 read from version %d: %+v", i, version, s)
		}
		if version < 5 && s.Backfill != nil {
			t.Fatalf("state %d: backfill slots %v read from version %d", i, s.Backfill, version)
		}
		if version < 4 && (s.Spec.HistoryRetention != 0 || s.Compacted != 0 || !s.CompactedAt.IsZero() || !s.CompactedThrough.IsZero() ||
			!s.FirstAt.IsZero() || !s.DeletedAt.IsZero() || s.DeleteReason != "") {
			t.Fatalf("state %d: fields of version 4 read from version %d: %+v", i, version, s)
		}
		for _, r := range s.Open {
			if want := map[bool]string{true: r.Trigger, false: ""}[r.RetryOf == uuid.Nil]; version < 6 && r.Origin != want {
				t.Fatalf("state %d: run %d (retry of %v, trigger %q) read from version %d with origin %q, want %q", i, r.Number, r.RetryOf, r.Trigger, version, r.Origin, want)
			}
		}
		for _, p := range s.Retries {
			if version < 6 && p.Origin != "" {
				t.Fatalf("state %d: pending retry read from version %d with origin %q", i, version, p.Origin)
			}
		}
		now, err := s.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		var again taskstate.State
		if err := again.UnmarshalBinary(now); err != nil || now[0] != 6 {
			t.Fatalf("state %d: written again (version %d): %v", i, now[0], err)
		}
		if !reflect.DeepEqual(again, s) {
			t.Fatalf("state %d: written again and read it is\n%+v\nnot\n%+v", i, again, s)
		}
	}
}
