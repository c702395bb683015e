package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/internal/httpapi"
	"github.com/cronactor/cronactor/projections/audit"
	"github.com/cronactor/cronactor/projections/history"
)

// countingStore counts the events its stream reads return.
type countingStore struct {
	events.Store
	read atomic.Int64
}

func (c *countingStore) ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error) {
	recs, err := c.Store.ReadStream(ctx, stream, from, limit)
	c.read.Add(int64(len(recs)))
	return recs, err
}

// The audit endpoints page a long stream from its end: the first page
// folds the stream once and leaves its marks; every later answer reads its
// page and at most a mark interval more, never the whole stream, and the
// pages say what the whole fold says.
func TestAuditPagesFromTheEnd(t *testing.T) {
	const n = 5001
	st, id := storeWithEvents(t, n)
	c := &countingStore{Store: st}
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: c}))
	t.Cleanup(srv.Close)
	all, err := st.ReadStream(context.Background(), events.TaskStream(id), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := history.Rows(all)
	if err != nil {
		t.Fatal(err)
	}
	bounded := func(what string, most int) {
		t.Helper()
		if got := c.read.Swap(0); got > int64(most) {
			t.Fatalf("%s read %d events of a stream of %d (at most %d)", what, got, n, most)
		}
	}
	base := "/v1/tasks/" + id.String()

	// Events: the latest page, then the one before it.
	c.read.Store(0)
	var page history.EventList
	a := call(t, srv, "GET", base+"/events?before=end&limit=4", "")
	if err := json.Unmarshal([]byte(a.body), &page); err != nil || a.code != 200 {
		t.Fatalf("events before=end: %d %s", a.code, a.body)
	}
	bounded("events?before=end", 4+64)
	if len(page.Events) != 4 || page.Events[0].Version != n-4 || page.Events[3].Version != n-1 || page.Prev != strconv.Itoa(n-4) || page.Next != "" {
		t.Fatalf("latest page: %d events from %d, prev %q next %q", len(page.Events), page.Events[0].Version, page.Prev, page.Next)
	}
	a = call(t, srv, "GET", base+"/events?limit=4&before="+page.Prev, "")
	page = history.EventList{}
	if err := json.Unmarshal([]byte(a.body), &page); err != nil || a.code != 200 {
		t.Fatalf("events before=%d: %d %s", n-4, a.code, a.body)
	}
	bounded("events?before", 4+64)
	if len(page.Events) != 4 || page.Events[0].Version != n-8 || page.Next != strconv.Itoa(n-5) || page.Prev != strconv.Itoa(n-8) {
		t.Fatalf("page before: %+v", page)
	}
	if a := call(t, srv, "GET", base+"/events?before=1&after=1", ""); a.code != 400 || a.field != "before" {
		t.Fatalf("before and after: %d %s", a.code, a.body)
	}
	c.read.Store(0)

	// History: the latest rows, then the page before, as the whole fold.
	var got []httpapi.HistoryRow
	before := ""
	for i := range 3 {
		path := base + "/history?limit=5"
		if before != "" {
			path += "&before=" + before
		}
		var h httpapi.HistoryBody
		a := call(t, srv, "GET", path, "")
		if err := json.Unmarshal([]byte(a.body), &h); err != nil || a.code != 200 {
			t.Fatalf("%s: %d %s", path, a.code, a.body)
		}
		if i == 0 {
			bounded(path, n+64)
		} else {
			bounded(path, audit.DefaultMarkEvery+5+64)
		}
		if !h.Truncated || h.Prev == "" || h.Head != n-1 || len(h.Rows) != 5 {
			t.Fatalf("%s: truncated %v prev %q head %d, %d rows", path, h.Truncated, h.Prev, h.Head, len(h.Rows))
		}
		got = append(append([]httpapi.HistoryRow(nil), h.Rows...), got...)
		before = h.Prev
	}
	tf := history.Absolute()
	for i, r := range got {
		w := whole[n-len(got)+i]
		if r.Text != w.Text(tf) || r.Status != w.Status || r.Version != w.Version || !r.At.Equal(w.At) {
			t.Fatalf("row %d: %+v, want %s %s [%s] version %d", i, r, w.Event, w.Text(tf), w.Status, w.Version)
		}
	}

	// Explain: a time in the middle of the stream, read around it.
	at := all[n/2].At.Add(500 * time.Millisecond)
	a = call(t, srv, "GET", base+"/explain?at="+at.Format(time.RFC3339Nano), "")
	var ex httpapi.ExplainBody
	if err := json.Unmarshal([]byte(a.body), &ex); err != nil || a.code != 200 {
		t.Fatalf("explain: %d %s", a.code, a.body)
	}
	bounded("explain", 2*audit.DefaultMarkEvery+200)
	want, err := history.Explain(all, at, 0)
	if err != nil {
		t.Fatal(err)
	}
	var wt strings.Builder
	if err := want.Write(&wt, tf); err != nil {
		t.Fatal(err)
	}
	if ex.Text != wt.String() || ex.Status != want.Status {
		t.Fatalf("explain:\n%s\nwant\n%s", ex.Text, wt.String())
	}
}

// A first request deep in a stream longer than Config.AuditMaxFold folds
// a look-back, not the whole stream, and says so; with no bound it folds
// from the stream's start and is exact.
func TestAuditMaxFoldBoundsAFirstRead(t *testing.T) {
	const n = 3001
	st, id := storeWithEvents(t, n)
	base := "/v1/tasks/" + id.String()
	at := time.Time{}
	if all, err := st.ReadStream(context.Background(), events.TaskStream(id), n-10, 1); err != nil || len(all) != 1 {
		t.Fatalf("read: %v", err)
	} else {
		at = all[0].At
	}
	for _, tc := range []struct {
		maxFold int
		exact   bool
		most    int64
	}{{1000, false, history.Lookback + 5 + 64 + 64}, {-1, true, n + 64}} {
		c := &countingStore{Store: st}
		srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: c, AuditMaxFold: tc.maxFold}))
		var h httpapi.HistoryBody
		a := call(t, srv, "GET", base+"/history?limit=5", "")
		if err := json.Unmarshal([]byte(a.body), &h); err != nil || a.code != 200 {
			t.Fatalf("history: %d %s", a.code, a.body)
		}
		if h.Exact != tc.exact || len(h.Rows) != 5 {
			t.Fatalf("max fold %d: exact %v (want %v), %d rows", tc.maxFold, h.Exact, tc.exact, len(h.Rows))
		}
		if got := c.read.Swap(0); got > tc.most {
			t.Fatalf("max fold %d: the first page read %d events (at most %d)", tc.maxFold, got, tc.most)
		}
		var ex httpapi.ExplainBody
		a = call(t, srv, "GET", base+"/explain?at="+at.Format(time.RFC3339Nano), "")
		if err := json.Unmarshal([]byte(a.body), &ex); err != nil || a.code != 200 {
			t.Fatalf("explain: %d %s", a.code, a.body)
		}
		if ex.Exact != tc.exact {
			t.Fatalf("max fold %d: explain exact %v, want %v", tc.maxFold, ex.Exact, tc.exact)
		}
		srv.Close()
	}
}
