package crontasks

import (
	"errors"

	"github.com/cockroachdb/pebble"
)

// ErrSimulatedCrash is what a commit returns after CrashNextCommit.
var ErrSimulatedCrash = errors.New("crontasks: simulated crash before the batch was written")

// CrashNextCommit makes the next batch commit fail without writing, as if
// the process died while committing.
func CrashNextCommit() {
	commitHook = func(*pebble.Batch, *pebble.WriteOptions) error {
		commitHook = nil
		return ErrSimulatedCrash
	}
}

// DBClosed is closed once the view's database has been closed, also when
// a failed one is closed in the background.
func (v *View) DBClosed() <-chan struct{} { return v.dbClosed }
