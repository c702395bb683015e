package scheduler

import (
	"crypto/sha1"
	"encoding/binary"
	"strings"

	"github.com/google/uuid"
)

var taskNamespace = uuid.MustParse("5d0c7f1e-3b8a-4e62-9f0d-2a7c4b9e1d33")

// TaskID is the ID a task of that owner and name has: IDs derive from
// owner and name so that creating the same task twice, concurrently or
// after a crash, lands on the same stream (R6).
//
// Distinct owner/name pairs have distinct IDs (up to SHA-1 collisions):
// the bytes hashed are an injective encoding of the pair. A pair without a
// NUL is hashed as owner ‖ 0x00 ‖ name, as every ID ever recorded was, so
// those IDs stay what they are; that text holds exactly one NUL, which
// tells where the owner ends. A pair with a NUL in it (refused by
// rules.Validate, so only a task recorded before that check has one) is
// hashed as 0x00 0x00 ‖ uvarint(len(owner)) ‖ owner ‖ name: it holds two
// NULs or more, so it never equals the first form, and the length says
// where the owner ends. Hashing owner ‖ 0x00 ‖ name for every pair made
// owner "victim" with name "b\x00c" the task of owner "victim\x00b" with
// name "c".
func TaskID(owner, name string) uuid.UUID {
	h := sha1.New()
	if strings.IndexByte(owner, 0) < 0 && strings.IndexByte(name, 0) < 0 {
		h.Write([]byte(owner))
		h.Write([]byte{0})
		h.Write([]byte(name))
	} else {
		h.Write(binary.AppendUvarint([]byte{0, 0}, uint64(len(owner))))
		h.Write([]byte(owner))
		h.Write([]byte(name))
	}
	return uuid.NewSHA1(taskNamespace, h.Sum(nil))
}
