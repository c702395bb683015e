package schedulertest

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/cronactor/cronactor/actors/worker"
)

// Scripted is a worker.Handler that returns scripted results in turn and
// remembers every run it was handed. Safe for concurrent runs.
type Scripted struct {
	mu      sync.Mutex
	results []Result
	runs    []worker.Run
}

// Script is a handler that returns results in turn, one per run it is
// handed, the last one again for every run after (none: every run
// completes with no checkpoint).
func Script(results ...Result) *Scripted { return &Scripted{results: results} }

// Handle implements worker.Handler.
func (s *Scripted) Handle(_ context.Context, r *worker.Run) (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = append(s.runs, *r)
	if len(s.results) == 0 {
		return nil, nil
	}
	i := min(len(s.runs), len(s.results)) - 1
	return s.results[i].Checkpoint, s.results[i].Err
}

// Runs are the runs the handler was handed, in the order it was.
func (s *Scripted) Runs() []worker.Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]worker.Run(nil), s.runs...)
}
