package main

import (
	"context"
	"testing"
	"time"

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

// The wrapper passes history retention's removal through: without it
// every task on the daemon's store would keep its whole history.
func TestTimedStoreTruncates(t *testing.T) {
	ctx := context.Background()
	st, err := embedded.OpenMemory()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	stream := events.TaskStream([16]byte{1})
	for range 3 {
		p, err := events.Propose(events.TaskPaused{}, [16]byte{}, t0Serve)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Append(ctx, stream, events.AnyVersion, p); err != nil {
			t.Fatal(err)
		}
	}
	wrapped := (&timedStore{Store: st, observe: func(float64) {}, failed: func(error) {}}).withSnapshots()
	tr, ok := wrapped.(events.Truncater)
	if !ok {
		t.Fatal("the daemon's store hides events.Truncater")
	}
	if err := tr.TruncateBefore(ctx, stream, 2); err != nil {
		t.Fatal(err)
	}
	if recs, err := st.ReadStream(ctx, stream, 0, 0); err != nil || len(recs) != 1 || recs[0].Version != 2 {
		t.Fatalf("after truncation through the wrapper: %d events, %v", len(recs), err)
	}
}

var t0Serve = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
