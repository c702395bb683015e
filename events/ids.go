package events

import (
	"crypto/sha1"
	"encoding/hex"
	"strconv"

	"github.com/google/uuid"
)

// The IDs this package derives are name-based UUIDs (version 5, as
// uuid.NewSHA1): the SHA-1 of a namespace and a name. They are built here
// in one buffer on the stack and hashed with sha1.Sum, without fmt, string
// building or a heap-allocated hash: they are computed for every run and
// every event appended. The results are exactly uuid.NewSHA1's.

// contentBuf is the room on the stack for what ContentID hashes: the
// namespace, an actor's scope (~80 bytes) and an event's body. At 256
// bytes a run's RunEnqueued and RunStarted went to the heap (1.5
// allocations per run in a wave); a body longer than this still does.
const contentBuf = 1024

// AppendUUID appends id's text form (36 bytes, lowercase, as id.String()),
// with no allocation of its own.
func AppendUUID(b []byte, id uuid.UUID) []byte {
	var t [36]byte
	hex.Encode(t[0:8], id[0:4])
	t[8] = '-'
	hex.Encode(t[9:13], id[4:6])
	t[13] = '-'
	hex.Encode(t[14:18], id[6:8])
	t[18] = '-'
	hex.Encode(t[19:23], id[8:10])
	t[23] = '-'
	hex.Encode(t[24:], id[10:])
	return append(b, t[:]...)
}

// sha1UUID is uuid.NewSHA1(space, name) for b = space's 16 bytes followed
// by name.
func sha1UUID(b []byte) uuid.UUID {
	sum := sha1.Sum(b)
	var id uuid.UUID
	copy(id[:], sum[:])
	id[6] = (id[6] & 0x0f) | 0x50 // version 5
	id[8] = (id[8] & 0x3f) | 0x80 // RFC 4122 variant
	return id
}

// appendExpected appends e.String().
func appendExpected(b []byte, e ExpectedVersion) []byte {
	switch e.kind {
	case expectAny, expectNoStream:
		return append(b, e.String()...)
	default:
		return strconv.AppendUint(b, e.version, 10)
	}
}
