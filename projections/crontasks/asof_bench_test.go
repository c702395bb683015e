package crontasks_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cronactor/cronactor/projections/crontasks"
)

// BenchmarkAsOf compares an as-of query folded from the start of the log
// (crontasks.AsOf, what every query did before the view kept snapshots)
// with one folded from the live view's nearest snapshot (View.AsOf, the
// default Config), on logs of two lengths, as of a position and a time in
// the middle of the log and near its end. events_read/op is how much of the
// log one query reads.
//
//	go test -run '^$' -bench AsOf -benchtime 20x ./projections/crontasks
func BenchmarkAsOf(b *testing.B) {
	for _, steps := range []int{10000, 40000} {
		mem := memStore(b)
		store := &countingStore{Store: mem}
		newHistory(b, mem, 11, 200).run(steps)
		recs := readAll(b, mem)
		live := openView(b, crontasks.Config{Store: store})
		if err := live.CatchUp(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		for _, where := range []struct {
			name string
			n    int
		}{{"middle", len(recs) / 2}, {"end", len(recs) - 1}} {
			r := recs[where.n-1]
			for _, p := range []struct {
				name  string
				point crontasks.Point
			}{{"position", crontasks.Point{Position: r.Position}}, {"time", crontasks.Point{Time: r.At}}} {
				for _, how := range []struct {
					name string
					asOf func(context.Context, crontasks.Point) (*crontasks.View, error)
				}{
					{"from_zero", func(ctx context.Context, p crontasks.Point) (*crontasks.View, error) {
						return crontasks.AsOf(ctx, crontasks.Config{Store: store}, p)
					}},
					{"snapshots", live.AsOf},
				} {
					b.Run(fmt.Sprintf("log=%d/%s/%s/%s", len(recs), where.name, p.name, how.name), func(b *testing.B) {
						store.read.Store(0)
						for b.Loop() {
							v, err := how.asOf(context.Background(), p.point)
							if err != nil {
								b.Fatal(err)
							}
							if _, err := v.Query(context.Background(), crontasks.Query{Status: crontasks.StatusActive}); err != nil {
								b.Fatal(err)
							}
							v.Close()
						}
						b.ReportMetric(float64(store.read.Load())/float64(b.N), "events_read/op")
					})
				}
			}
		}
	}
}
