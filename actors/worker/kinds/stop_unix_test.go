//go:build unix

package kinds_test

import (
	"testing"

	"github.com/cronactor/cronactor/actors/worker/kinds"
)

// The exec kind names the cause of its context's end: a command stopped
// because its run was forced to end fails with the forced end in the
// error, retryably.
func TestExecNamesWhyItsContextEnded(t *testing.T) {
	checkForcedEnd(t, kinds.Exec(), `{"command":["sleep","60"]}`)
}
