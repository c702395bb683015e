package crontasks_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cronactor/cronactor/projections/crontasks"
)

// FuzzQueryCursor: any cursor string is either rejected as ErrBadQuery or
// yields a page; never a panic.
func FuzzQueryCursor(f *testing.F) {
	store := memStore(f)
	h := newHistory(f, store, 11, 10)
	h.run(200)
	v := openView(f, crontasks.Config{Store: store})
	if err := v.CatchUp(context.Background(), nil); err != nil {
		f.Fatal(err)
	}
	p, err := v.Query(context.Background(), crontasks.Query{Limit: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(p.Next, "", "", int64(0))
	f.Add(p.Next, "channel/pop3/1", "active", int64(1))
	f.Add("", "", "", t0.UnixNano())
	f.Add("RA", "", "", t0.UnixNano())
	f.Fuzz(func(t *testing.T, cursor, owner, status string, due int64) {
		q := crontasks.Query{Cursor: cursor, Owner: owner, Status: status, Limit: 3}
		if due != 0 {
			q.DueBefore = time.Unix(0, due)
		}
		_, err := v.Query(context.Background(), q)
		if err != nil && !errors.Is(err, crontasks.ErrBadQuery) {
			t.Fatalf("query %+v: %v", q, err)
		}
	})
}

func FuzzParsePoint(f *testing.F) {
	for _, s := range []string{"12", "3/4", "2026-03-01T00:10:00Z", "2026-03-01T00:10:00.5+02:00", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := crontasks.ParsePoint(s)
		if err != nil {
			if !errors.Is(err, crontasks.ErrBadQuery) {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if p.IsZero() {
			t.Fatalf("%q parsed to no point", s)
		}
	})
}
