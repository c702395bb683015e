package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cronactor/cronactor/events"
	"github.com/cronactor/cronactor/events/embedded"
	"github.com/cronactor/cronactor/events/postgres"
	"github.com/google/uuid"
)

// EventSize is the body size of every appended event.
const EventSize = 200

// StoreConfig says what `bench store` measures.
type StoreConfig struct {
	// Writers is the number of concurrent writers, one stream each, 1 to
	// 10000; 0 measures 1, then 64.
	Writers int
	// Duration is how long each measurement appends: 100ms to 1h.
	Duration time.Duration
	// Dir is where the measured files go; empty: a new temporary directory,
	// removed afterwards.
	Dir string
	// Postgres, when set, is the connection URL of a PostgreSQL database:
	// the Postgres store (events/postgres) is measured there instead of
	// the embedded store, next to the same raw file (the disk's limit when
	// the server runs on this machine). Its tables are created if missing;
	// the streams written are new ones, so the database may hold others.
	Postgres string
	Progress Progress
}

// Validate reports a field out of its limits.
func (c StoreConfig) Validate() error {
	if c.Writers < 0 || c.Writers > 10000 {
		return fmt.Errorf("bench: StoreConfig.Writers %d: want 0 to 10000", c.Writers)
	}
	if c.Duration < 100*time.Millisecond || c.Duration > time.Hour {
		return fmt.Errorf("bench: StoreConfig.Duration %s: want 100ms to 1h", c.Duration)
	}
	return nil
}

// StoreResult is one `bench store` measurement.
type StoreResult struct {
	Store          string  `json:"store"`
	Writers        int     `json:"writers"`
	DurationS      float64 `json:"duration_s"`
	Events         int64   `json:"events"`
	EventsPerS     float64 `json:"events_per_s"`
	P50us          float64 `json:"p50_us"`
	P99us          float64 `json:"p99_us"`
	RawEventsPerS  float64 `json:"raw_events_per_s"`
	RawP50us       float64 `json:"raw_p50_us"`
	RawP99us       float64 `json:"raw_p99_us"`
	Ratio          float64 `json:"ratio"`
	EventSizeBytes int     `json:"event_size_bytes"`

	// CPUusPerEvent is the process's CPU time (user + system) per appended
	// event: other load on the machine barely moves it, unlike the rates.
	// 0 where the platform does not say.
	CPUusPerEvent    float64 `json:"cpu_us_per_event"`
	RawCPUusPerEvent float64 `json:"raw_cpu_us_per_event"`
}

// Text is the result as one line for people.
func (r StoreResult) Text() string {
	return fmt.Sprintf("writers=%-3d %s %9.0f events/s  p50 %7.0fµs  p99 %7.0fµs | raw file %9.0f events/s  p50 %7.0fµs  p99 %7.0fµs | ratio %.2f",
		r.Writers, r.Store, r.EventsPerS, r.P50us, r.P99us, r.RawEventsPerS, r.RawP50us, r.RawP99us, r.Ratio)
}

// Store measures the embedded store's append rate (the Postgres store's,
// with cfg.Postgres) next to a raw group-committed file on the same disk,
// once per writer count, and hands each result to emit as soon as it is
// measured.
func Store(ctx context.Context, cfg StoreConfig, emit func(StoreResult) error) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	counts := []int{1, 64}
	if cfg.Writers > 0 {
		counts = []int{cfg.Writers}
	}
	base, cleanup, err := workDir(cfg.Dir)
	if err != nil {
		return err
	}
	defer cleanup()
	cfg.Progress.note("bench store: %d-byte events, %s per measurement, files under %s", EventSize, cfg.Duration, base)
	for _, n := range counts {
		run := filepath.Join(base, fmt.Sprintf("w%d", n))
		name := "embedded"
		if cfg.Postgres != "" {
			name = "postgres"
		}
		cfg.Progress.note("  %d writer(s): %s store...", n, name)
		var st measurement
		if cfg.Postgres != "" {
			st, err = benchPostgres(ctx, cfg.Postgres, n, cfg.Duration)
		} else {
			st, err = benchEmbedded(ctx, filepath.Join(run, "store"), n, cfg.Duration)
		}
		if err != nil {
			return err
		}
		cfg.Progress.note("  %d writer(s): raw append-only file...", n)
		raw, err := benchRawFile(ctx, filepath.Join(run, "raw"), n, cfg.Duration)
		if err != nil {
			return err
		}
		r := StoreResult{
			Store: name, Writers: n, DurationS: st.elapsed.Seconds(), Events: st.events,
			EventsPerS: st.rate(), P50us: st.pct(50), P99us: st.pct(99),
			RawEventsPerS: raw.rate(), RawP50us: raw.pct(50), RawP99us: raw.pct(99),
			EventSizeBytes: EventSize, CPUusPerEvent: st.cpuPerEvent(), RawCPUusPerEvent: raw.cpuPerEvent(),
		}
		if r.RawEventsPerS > 0 {
			r.Ratio = r.EventsPerS / r.RawEventsPerS
		}
		if err := emit(r); err != nil {
			return err
		}
		if err := os.RemoveAll(run); err != nil {
			return err
		}
	}
	return nil
}

type measurement struct {
	events    int64
	elapsed   time.Duration
	cpu       time.Duration   // the process's CPU time over elapsed
	latencies []time.Duration // sorted
}

func (m measurement) rate() float64 { return float64(m.events) / m.elapsed.Seconds() }

// cpuPerEvent is the process's CPU time per event, in µs.
func (m measurement) cpuPerEvent() float64 {
	if m.events == 0 {
		return 0
	}
	return float64(m.cpu) / float64(time.Microsecond) / float64(m.events)
}
func (m measurement) pct(p float64) float64 {
	return float64(percentile(m.latencies, p)) / float64(time.Microsecond)
}

// drive runs writers goroutines calling appendOne until d has passed and
// collects every call's latency.
func drive(ctx context.Context, writers int, d time.Duration, appendOne func(w int, seq uint64) error) (measurement, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		all      []time.Duration
		firstErr error
		total    atomic.Int64
	)
	start, cpu0 := time.Now(), cpuTime()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 4096)
			for seq := uint64(0); ctx.Err() == nil; seq++ {
				t0 := time.Now()
				if err := appendOne(w, seq); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					return
				}
				lat = append(lat, time.Since(t0))
				total.Add(1)
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), cpuTime()-cpu0
	if firstErr != nil {
		return measurement{}, firstErr
	}
	slices.Sort(all)
	return measurement{events: total.Load(), elapsed: elapsed, cpu: cpu, latencies: all}, nil
}

func benchEmbedded(ctx context.Context, dir string, writers int, d time.Duration) (measurement, error) {
	s, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		return measurement{}, err
	}
	defer s.Close()
	return benchAppends(ctx, s, "task-bench", writers, d)
}

// benchPostgres measures the Postgres store at url, on streams of this
// run's own.
func benchPostgres(ctx context.Context, url string, writers int, d time.Duration) (measurement, error) {
	s, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 4})
	if err != nil {
		return measurement{}, err
	}
	defer s.Close()
	return benchAppends(ctx, s, "task-bench-"+uuid.NewString()[:8], writers, d)
}

// benchAppends has writers append one event at a time, each to its own
// stream, with the expected version.
func benchAppends(ctx context.Context, s events.Store, prefix string, writers int, d time.Duration) (measurement, error) {
	body := make([]byte, EventSize)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	at := time.Now().UTC()
	streams := make([]string, writers)
	for w := range streams {
		streams[w] = fmt.Sprintf("%s-%04d", prefix, w)
	}
	return drive(ctx, writers, d, func(w int, seq uint64) error {
		exp := events.NoStream
		if seq > 0 {
			exp = events.Exactly(seq - 1)
		}
		_, err := s.Append(context.Background(), streams[w], exp,
			events.Proposed{Type: "BenchAppended", Schema: 1, At: at, Data: body})
		return err
	})
}

// rawLog is the baseline: an append-only file whose writers are
// group-committed with one write and one fdatasync per group, the least
// work a durable append can cost on this disk.
type rawLog struct {
	f    *os.File
	reqs chan rawReq
	done chan struct{}
}

type rawReq struct {
	rec []byte
	ack chan error
}

func benchRawFile(ctx context.Context, dir string, writers int, d time.Duration) (measurement, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return measurement{}, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "raw.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return measurement{}, err
	}
	l := &rawLog{f: f, reqs: make(chan rawReq, 1024), done: make(chan struct{})}
	go l.commitLoop()
	rec := make([]byte, EventSize)
	m, err := drive(ctx, writers, d, func(int, uint64) error {
		ack := make(chan error, 1)
		l.reqs <- rawReq{rec: rec, ack: ack}
		return <-ack
	})
	close(l.done)
	return m, errors.Join(err, f.Close())
}

func (l *rawLog) commitLoop() {
	var buf []byte
	var acks []chan error
	answered := 0 // the writers the last group answered
	for {
		select {
		case r := <-l.reqs:
			buf, acks = append(buf[:0], r.rec...), append(acks[:0], r.ack)
		case <-l.done:
			return
		}
		// Yield until the writers answered last have queued again, as the
		// embedded store does (no longer once as many wait as it answered);
		// without it 64 writers split into two cohorts and the baseline
		// understates what the disk can do.
		for range 32 {
			n := len(l.reqs)
			if 1+n >= answered {
				break
			}
			runtime.Gosched()
			if len(l.reqs) == n {
				break
			}
		}
	drain:
		for {
			select {
			case r := <-l.reqs:
				buf = append(buf, r.rec...)
				acks = append(acks, r.ack)
			default:
				break drain
			}
		}
		answered = len(acks)
		_, err := l.f.Write(buf)
		if err == nil {
			err = fdatasync(l.f)
		}
		for _, a := range acks {
			a <- err
		}
	}
}
