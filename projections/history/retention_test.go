package history_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/taskstate"
	"github.com/cronactor/cronactor/projections/history"
)

// TestCompactedRows: a TaskCompacted is a row saying what it covers; once
// the events before it are removed, the audit trail begins with it, says
// they were removed, and the rows after it are those of the whole stream.
func TestCompactedRows(t *testing.T) {
	store := memStore(t)
	a := workedExample(t, store)
	st, err := taskstate.Replay(a.read())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := st.MarshalBinary()
	a.add("01:40", events.TaskCompacted{State: b, Events: 6, ToVersion: 5, FromAt: st.FirstAt, ToAt: st.UpdatedAt,
		Retention: events.Duration(time.Minute)})
	a.completed("01:45", 2)
	a.enqueued("02:30", 3, "02:30", "03:30", 0)
	whole, err := history.Rows(a.read())
	if err != nil {
		t.Fatal(err)
	}
	if err := store.(events.Truncater).TruncateBefore(context.Background(), events.TaskStream(a.id), 6); err != nil {
		t.Fatal(err)
	}
	kept, err := history.Rows(a.read())
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 3 || kept[0].Event != "TaskCompacted" {
		t.Fatalf("rows after removal: %d, first %q", len(kept), kept[0].Event)
	}
	text := kept[0].Text(history.TimeFormat{})
	for _, want := range []string{"6 events removed", "versions 0–5", "2026-01-05T02:00:00Z", "2026-01-05T02:01:32Z", "retention 60 s"} {
		if !strings.Contains(text, want) {
			t.Errorf("the row says %q, not %q", text, want)
		}
	}
	if !strings.Contains(whole[6].Detail, "6 events to be removed") {
		t.Errorf("before the removal the row says %q", whole[6].Detail)
	}
	// The rows from the TaskCompacted on are the same but for what it says.
	for i := range kept {
		w := whole[6+i]
		if i == 0 {
			w.Detail = kept[0].Detail
		}
		if !reflect.DeepEqual(kept[i], w) {
			t.Errorf("row %d after removal:\n got %+v\nwant %+v", i, kept[i], w)
		}
	}
}
