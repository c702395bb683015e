package scheduler

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/cronactor/cronactor/actors/task/rules"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// BenchmarkDecodeRecords is the restart's decoding of snapshot records
// (decodeRecords): records of resting interval tasks, as `bench scheduler`
// leaves them, per record.
//
//	go test ./actors/scheduler -run '^$' -bench DecodeRecords
func BenchmarkDecodeRecords(b *testing.B) {
	const n = 4096
	t0 := time.Date(2026, 11, 28, 2, 0, 0, 123456789, time.UTC)
	read := make([]snapshotRecord, n)
	for i := range read {
		id := uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "t%07d", i))
		st := rules.State{ID: id, Status: rules.StatusActive, NextRun: t0.Add(time.Hour), NextSlot: t0.Add(time.Hour),
			Scheduled: 1, LastRun: t0, Runs: 1, Incarnation: 1, Version: 3, CreatedAt: t0, UpdatedAt: t0, FirstAt: t0}
		st.Spec.Name, st.Spec.Owner, st.Spec.Kind = fmt.Sprintf("t%07d", i), "bench", "noop"
		st.Spec.Schedule.Interval = events.Duration(time.Hour)
		st.Spec.Tolerance, st.Spec.Timebox = 5*time.Second, 30*time.Minute
		read[i] = snapshotRecord{id, recordOf(&st, events.Position{Commit: uint64(3 * i), Prepare: uint64(3 * i)})}
	}
	head := events.Position{Commit: 3 * n, Prepare: 3 * n}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for b.Loop() {
		recs, err := decodeRecords(read, head)
		if err != nil {
			b.Fatal(err)
		}
		if !recs[0].at.due {
			b.Fatal("an active task with a next run is not due")
		}
	}
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/record")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(b.N*n), "allocs/record")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(b.N*n), "B/record")
}
