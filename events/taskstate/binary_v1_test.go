package taskstate_test

import (
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/cronactor/cronactor/events/taskstate"
)

// TestBinaryReadsVersion1 reads states written by the build before
// schedule exclusions (version 1 of the binary form; testdata made with
// that build's AppendBinary from random states): snapshot records of an
// earlier build must be read at the next start. Written again, each is
// the same bytes but for the version and the one byte of its (absent)
// exclusions, so every other field was read as it was written.
func TestBinaryReadsVersion1(t *testing.T) {
	data, err := os.ReadFile("testdata/state_v1.hex")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(data))
	if len(lines) == 0 {
		t.Fatal("no states in testdata/state_v1.hex")
	}
	for i, line := range lines {
		v1, err := hex.DecodeString(line)
		if err != nil {
			t.Fatal(err)
		}
		var s taskstate.State
		if err := s.UnmarshalBinary(v1); err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		if s.Spec.Schedule.Exclude != nil {
			t.Fatalf("state %d: exclusions %q read from version 1", i, s.Spec.Schedule.Exclude)
		}
		v2, err := s.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(v2) < 1+len(retentionTail) || v2[0] != 3 || !bytes.HasSuffix(v2, retentionTail) ||
			!sameButOneZero(v1[1:], v2[1:len(v2)-len(retentionTail)]) {
			t.Fatalf("state %d: written again it is not the version 1 bytes with one empty exclusion list", i)
		}
	}
}

// retentionTail is what version 3 writes after the fields of version 2 for
// a state without history retention: a zero retention, no compaction.
var retentionTail = []byte{0, 0, 0, 0, 0, 0, 0}

// TestBinaryReadsVersion2 reads states written by the build before history
// retention (version 2 of the binary form; testdata made with that build's
// AppendBinary from random states). Written again, each is the same bytes
// but for the version and retentionTail.
func TestBinaryReadsVersion2(t *testing.T) {
	data, err := os.ReadFile("testdata/state_v2.hex")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(data))
	if len(lines) == 0 {
		t.Fatal("no states in testdata/state_v2.hex")
	}
	for i, line := range lines {
		v2, err := hex.DecodeString(line)
		if err != nil {
			t.Fatal(err)
		}
		var s taskstate.State
		if err := s.UnmarshalBinary(v2); err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		if s.Spec.HistoryRetention != 0 || s.Compacted != 0 || !s.CompactedAt.IsZero() || !s.CompactedThrough.IsZero() || !s.FirstAt.IsZero() ||
			!s.DeletedAt.IsZero() || s.DeleteReason != "" {
			t.Fatalf("state %d: retention fields read from version 2: %+v", i, s)
		}
		v3, err := s.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		if v3[0] != 3 || !bytes.Equal(v3[1:], append(append([]byte(nil), v2[1:]...), retentionTail...)) {
			t.Fatalf("state %d: written again it is not the version 2 bytes and a retention tail", i)
		}
	}
}

// sameButOneZero reports whether b is a with one zero byte inserted.
func sameButOneZero(a, b []byte) bool {
	if len(b) != len(a)+1 {
		return false
	}
	for i := 0; i <= len(a); i++ {
		if b[i] == 0 && bytes.Equal(a[:i], b[:i]) && bytes.Equal(a[i:], b[i+1:]) {
			return true
		}
	}
	return false
}
