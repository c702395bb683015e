package crontasks

import (
	"testing"

	"github.com/cockroachdb/pebble"
)

// FailNextCommit makes the next batch fail just before it is committed, as
// a crash there would.
func FailNextCommit(v *View, err error) {
	v.beforeCommit = func() error {
		v.beforeCommit = nil
		return err
	}
}

// WriteMarker overwrites the format marker of the view in dir.
func WriteMarker(t *testing.T, dir, marker string) {
	t.Helper()
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Set([]byte{keyMeta}, []byte(marker), pebble.Sync); err != nil {
		t.Fatal(err)
	}
}
