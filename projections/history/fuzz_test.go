package history_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cronactor/cronactor/projections/history"
)

func FuzzParseClock(f *testing.F) {
	for _, s := range []string{"00:00", "01:30", "59:59", "01:00:00", "26:03:04", "1:2", "00:60", ":", "99999:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := history.ParseClock(s)
		if err != nil {
			return
		}
		if d < 0 || d%time.Second != 0 {
			t.Fatalf("%q parsed to %v", s, d)
		}
		back, err := history.ParseClock(history.Clock(d))
		if err != nil || back != d {
			t.Fatalf("%q → %v → %q → %v, %v", s, d, history.Clock(d), back, err)
		}
	})
}

// FuzzEventListJSON: any response body either fails to decode or converts
// to recorded events that convert back to the same wire form.
func FuzzEventListJSON(f *testing.F) {
	f.Add([]byte(`{"task_id":"8482b9be-7643-5b1c-9a02-8fc4a9cec74f","events":[{"id":"8482b9be-7643-5b1c-9a02-8fc4a9cec74f","stream":"task-8482b9be-7643-5b1c-9a02-8fc4a9cec74f","version":0,"position":"1","type":"TaskPaused","schema":1,"at":"2026-01-05T02:00:00Z","data":{}}]}`))
	f.Add([]byte(`{"events":[{"stream":"s","type":"T","position":"2/3","data":[1,2]}]}`))
	f.Add([]byte(`{"events":[{"stream":"s","type":"T","position":"x","data":null}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var l history.EventList
		if json.Unmarshal(body, &l) != nil {
			return
		}
		recs, err := l.Recorded()
		if err != nil {
			if !errors.Is(err, history.ErrBadEventJSON) {
				t.Fatalf("error not ErrBadEventJSON: %v", err)
			}
			return
		}
		again, err := history.ListJSON(l.TaskID, recs)
		if err != nil {
			t.Fatalf("recorded events do not convert back: %v", err)
		}
		recs2, err := again.Recorded()
		if err != nil || len(recs2) != len(recs) {
			t.Fatalf("second round trip: %v", err)
		}
		for i := range recs {
			if recs[i].Position != recs2[i].Position || recs[i].Type != recs2[i].Type || !recs[i].At.Equal(recs2[i].At) {
				t.Fatalf("event %d changed: %+v → %+v", i, recs[i], recs2[i])
			}
		}
	})
}
