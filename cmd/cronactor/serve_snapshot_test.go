package main

import (
	"context"
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
)

// The daemon's measuring wrapper passes the snapshot table through whole,
// its point read included: without it a task's load would read its whole
// stream (issue 32).
func TestTimedStoreKeepsTheSnapshotPointRead(t *testing.T) {
	ctx := context.Background()
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.WriteSnapshot(ctx, []events.SnapshotEntry{{Key: []byte("k"), Value: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	wrapped := (&timedStore{Store: st, observe: func(float64) {}, failed: func(error) {}}).withSnapshots()
	r, ok := wrapped.(events.SnapshotReader)
	if !ok {
		t.Fatal("the daemon's store hides events.SnapshotReader")
	}
	v, found, err := r.ReadSnapshotKey(ctx, []byte("k"))
	if err != nil || !found || string(v) != "v" {
		t.Fatalf("read through the wrapper: %q, found %v, err %v", v, found, err)
	}
}
