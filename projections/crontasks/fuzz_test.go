package crontasks_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cronactor/cronactor/projections/crontasks"
)

// FuzzParsePoint: ParsePoint never panics, and what it accepts reads back
// the same from its canonical form.
func FuzzParsePoint(f *testing.F) {
	for _, s := range []string{"1234", "7/5", "2026-11-22T02:03:00Z", "2026-11-22T02:03:00.5+01:00", "0", "", "x", "1/", "/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := crontasks.ParsePoint(s)
		if err != nil {
			if !errors.Is(err, crontasks.ErrBadQuery) {
				t.Fatalf("%q: error %v is not ErrBadQuery", s, err)
			}
			return
		}
		if p.IsZero() {
			t.Fatalf("%q parsed to the zero point", s)
		}
		canon := p.Position.String()
		if !p.Time.IsZero() {
			canon = p.Time.Format(time.RFC3339Nano)
		}
		back, err := crontasks.ParsePoint(canon)
		if err != nil || back.Position != p.Position || !back.Time.Equal(p.Time) {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, p, canon, back, err)
		}
	})
}

// FuzzQueryCursor: a cursor the view did not hand out is refused with
// ErrBadQuery, never a panic or a wrong page.
func FuzzQueryCursor(f *testing.F) {
	store := memStore(f)
	exampleLog(store)
	v := openView(f, crontasks.Config{Store: store})
	if err := v.CatchUp(context.Background(), nil); err != nil {
		f.Fatal(err)
	}
	p, err := v.Query(context.Background(), crontasks.Query{Limit: 1})
	if err != nil || p.Next == "" {
		f.Fatalf("first page: %+v %v", p, err)
	}
	f.Add(p.Next, "", "")
	f.Add(p.Next, "channel/pop3/42", "")
	f.Add("", "", "active")
	f.Add("AAAA", "", "")
	f.Fuzz(func(t *testing.T, cursor, owner, status string) {
		q := crontasks.Query{Cursor: cursor, Owner: owner, Status: status, Limit: 1}
		page, err := v.Query(context.Background(), q)
		if err != nil {
			if !errors.Is(err, crontasks.ErrBadQuery) {
				t.Fatalf("%+v: error %v is not ErrBadQuery", q, err)
			}
			return
		}
		for _, task := range page.Tasks {
			if owner != "" && task.Owner != owner || status != "" && task.Status != status {
				t.Fatalf("%+v returned %+v", q, task)
			}
		}
	})
}
