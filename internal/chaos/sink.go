package chaos

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
)

// SinkConfig shapes the http tasks' endpoint.
type SinkConfig struct {
	// Sleep is the usual time an answer takes, drawn in [SleepMin, SleepMax].
	SleepMin, SleepMax time.Duration
	// SlowRatio of the calls take Slow instead (past the timebox, so the run
	// is forced to end).
	SlowRatio float64
	Slow      time.Duration
	// FailRatio of the calls answer 500 (the run fails).
	FailRatio float64
	Seed      uint64
	// Hold, if set, keeps every call open until Release (for the signal
	// cases: a run that cannot end by itself).
	Hold bool
}

// Sink is the local HTTP endpoint the http tasks POST to. It records every
// run ID it receives, and survives the daemon's kills.
type Sink struct {
	cfg SinkConfig
	srv *http.Server
	ln  net.Listener

	mu   sync.Mutex
	rnd  *rand.Rand
	seen map[uuid.UUID]int
	bad  int

	held     chan struct{} // closed by Release
	arrived  chan struct{} // closed at the first call
	inFlight int
	answered int
	deadline time.Time // of the latest call
}

// StartSink listens on a free loopback port.
func StartSink(cfg SinkConfig) (*Sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Sink{cfg: cfg, ln: ln, seen: map[uuid.UUID]int{}, rnd: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)),
		held: make(chan struct{}), arrived: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is where tasks POST.
func (s *Sink) URL() string { return "http://" + s.ln.Addr().String() + "/run" }

func (s *Sink) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req struct {
		RunID    uuid.UUID `json:"run_id"`
		Deadline time.Time `json:"deadline"`
	}
	s.mu.Lock()
	if json.Unmarshal(b, &req) != nil || req.RunID == uuid.Nil {
		s.bad++
		s.mu.Unlock()
		http.Error(w, "no run_id", http.StatusBadRequest)
		return
	}
	s.seen[req.RunID]++
	s.deadline = req.Deadline
	if len(s.seen) == 1 && s.seen[req.RunID] == 1 {
		close(s.arrived)
	}
	s.inFlight++
	defer func() { s.mu.Lock(); s.inFlight--; s.mu.Unlock() }()
	sleep := s.cfg.SleepMin
	if s.cfg.SleepMax > s.cfg.SleepMin {
		sleep += time.Duration(s.rnd.Int64N(int64(s.cfg.SleepMax - s.cfg.SleepMin)))
	}
	if s.rnd.Float64() < s.cfg.SlowRatio {
		sleep = s.cfg.Slow
	}
	fail := s.rnd.Float64() < s.cfg.FailRatio
	s.mu.Unlock()
	if s.cfg.Hold {
		select {
		case <-s.held:
		case <-r.Context().Done():
			return
		}
	}
	select {
	case <-time.After(sleep):
	case <-r.Context().Done():
		return
	}
	s.mu.Lock()
	s.answered++
	s.mu.Unlock()
	if fail {
		http.Error(w, "chaos sink: planned failure", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"checkpoint":{"seen":true}}`)
}

// Seen returns a copy of the deliveries per run ID.
func (s *Sink) Seen() map[uuid.UUID]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[uuid.UUID]int, len(s.seen))
	for k, v := range s.seen {
		out[k] = v
	}
	return out
}

// Arrived is closed when the first call has come in.
func (s *Sink) Arrived() <-chan struct{} { return s.arrived }

// InFlight is the number of calls the sink is answering now.
func (s *Sink) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// Answered is the number of calls the sink has answered (a call whose
// caller went away is not answered).
func (s *Sink) Answered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.answered
}

// Deadline is the run deadline the latest call carried.
func (s *Sink) Deadline() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deadline
}

// Release lets held calls answer.
func (s *Sink) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.held:
	default:
		close(s.held)
	}
}

// Close stops the sink.
func (s *Sink) Close() error {
	s.Release()
	return s.srv.Close()
}
