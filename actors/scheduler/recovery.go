package scheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// aroundRecovery calls cfg.RecoveryGC, if set, and returns what undoes
// it: the scheduler itself sets no process-wide state (docs/embedding.md,
// "What the scheduler leaves to the process").
func (s *Scheduler) aroundRecovery() (restore func()) {
	if s.cfg.RecoveryGC == nil {
		return func() {}
	}
	if restore = s.cfg.RecoveryGC(); restore == nil {
		return func() {}
	}
	return restore
}

// recovery is what Start rebuilt of the tasks: the state of every task;
// from a snapshot, also the tasks whose state is not their snapshot's
// record (changed), and the records of the others, as read; from the whole
// log, changed and records are nil. readWhole counts the streams a
// recovery from a snapshot read whole (streams_read_whole in its log line).
type recovery struct {
	states    map[uuid.UUID]*task.Initial
	changed   map[uuid.UUID]struct{}
	records   map[uuid.UUID]string
	readWhole int
}

// recover rebuilds the state of every task: from the store's snapshot and
// the log after it when there is one to use, else from the whole log.
func (s *Scheduler) recover(ctx context.Context) (recovery, error) {
	s.snap = newSnapshots(s.cfg)
	if s.snap != nil {
		if err := s.claimSnapshots(); err != nil {
			s.snap = nil
			return recovery{}, err
		}
		r, err := s.recoverFromSnapshot(ctx)
		if err == nil {
			return r, nil
		}
		if !errors.Is(err, errNoSnapshot) {
			return recovery{}, err
		}
		s.cfg.Logger.Info("no snapshot to start from: reading the whole log", "reason", err)
	}
	states, err := s.recoverStates(ctx)
	if err != nil {
		return recovery{}, err
	}
	if s.snap != nil {
		// What the snapshot holds may be of tasks the log no longer has
		// in that state: start afresh.
		if err := s.snap.store.ClearSnapshot(ctx); err != nil {
			s.cfg.Logger.Warn("snapshots off: the snapshot table cannot be cleared", "err", err)
			s.releaseSnapshots()
			s.snap = nil
		}
	}
	return recovery{states: states}, nil
}

// recoverStates folds the global log into the state of every task.
func (s *Scheduler) recoverStates(ctx context.Context) (map[uuid.UUID]*task.Initial, error) {
	states := map[uuid.UUID]*task.Initial{}
	err := s.foldLog(ctx, events.Start, func(r *events.Recorded, id uuid.UUID, e events.Event) {
		st := states[id]
		if st == nil {
			st = &task.Initial{}
			states[id] = st
		}
		st.State.Apply(r.Metadata, e) // rules.Evolve in place
		st.Position = r.Position
	})
	if err != nil {
		return nil, err
	}
	return states, nil
}

// foldLog calls fold with every event of the task streams after the
// position after, in the log's order.
//
// Recovery reads every event of the log, so it is a pipeline: one
// goroutine reads the next page while this one decodes the current page
// in parallel (decoding is most of the work) and then folds it.
func (s *Scheduler) foldLog(ctx context.Context, after events.Position, fold func(r *events.Recorded, id uuid.UUID, e events.Event)) error {
	const pageSize = 4096
	type page struct {
		recs []events.Recorded
		err  error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pages := make(chan page, 2)
	go func() {
		defer close(pages)
		for {
			recs, err := s.cfg.Store.ReadAll(ctx, after, pageSize)
			select {
			case pages <- page{recs, err}:
			case <-ctx.Done():
				return
			}
			if err != nil || len(recs) < pageSize {
				return
			}
			after = recs[len(recs)-1].Position
		}
	}()
	decoded := make([]recovered, pageSize)
	for p := range pages {
		if p.err != nil {
			return fmt.Errorf("scheduler: recover: %w", p.err)
		}
		recs := p.recs
		if err := decodePage(recs, decoded[:len(recs)]); err != nil {
			return err
		}
		for i := range recs {
			d := &decoded[i]
			if d.e == nil {
				continue // not a task stream
			}
			fold(&recs[i], d.id, d.e)
			d.e = nil
		}
	}
	return nil
}

// parallelism is how many goroutines recovery splits CPU work over.
func parallelism() int { return runtime.GOMAXPROCS(0) }

// recovered is one event of the log as recovery decoded it: nil e for an
// event outside the task streams.
type recovered struct {
	id uuid.UUID
	e  events.Event
}

// decodePage decodes recs into out, split over the machine's processors.
func decodePage(recs []events.Recorded, out []recovered) error {
	return inParallel(len(recs), 256, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			r := &recs[i]
			id, err := events.TaskIDFromStream(r.Stream)
			if err != nil {
				out[i] = recovered{}
				continue
			}
			e, err := events.Decode(*r)
			if err != nil {
				return fmt.Errorf("scheduler: recover %s version %d: %w", r.Stream, r.Version, err)
			}
			out[i] = recovered{id: id, e: e}
		}
		return nil
	})
}

// inParallel splits [0, n) into one part per processor, of at least per
// items each, calls work with each part on a goroutine of its own, and
// returns their errors joined.
func inParallel(n, per int, work func(lo, hi int) error) error {
	parts := min(parallelism(), 1+n/per)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Go(func() { errs[p] = work(lo, hi) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
