package crontasks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/cronactor/cronactor/events"
)

// Progress reports a long fold (rebuild, as-of) after each batch.
type Progress struct {
	// Events counts the events read so far.
	Events uint64
	// Position is the last position read.
	Position events.Position
	// Head is the log's last position when the store reports it.
	Head    events.Position
	Elapsed time.Duration
}

// Point is a past point of the log: a global position, or a time (events
// decided at or before it). Exactly one is set.
type Point struct {
	Position events.Position
	Time     time.Time
}

// Validate reports a Point that is not exactly one of its fields.
func (p Point) Validate() error {
	if p.Position.IsZero() == p.Time.IsZero() {
		return errors.New("crontasks: Point needs exactly one of Position and Time")
	}
	return nil
}

// replay folds the log from the start into v, which must be empty. keep
// says whether to apply an event and whether to stop before it.
func replay(ctx context.Context, store events.Store, v *View, keep func(events.Recorded) (apply, stop bool), progress func(Progress)) error {
	start := time.Now()
	var head events.Position
	if h, ok := store.(Header); ok {
		head = h.Head()
	}
	var p Progress
	after := events.Start
	batch := make([]events.Recorded, 0, v.cfg.BatchSize)
	for {
		page, err := store.ReadAll(ctx, after, v.cfg.BatchSize)
		if err != nil {
			return fmt.Errorf("crontasks: read log after %s: %w", after, err)
		}
		if len(page) == 0 {
			return nil
		}
		batch = batch[:0]
		stop := false
		for _, rec := range page {
			apply, s := keep(rec)
			if s {
				stop = true
				break
			}
			if apply {
				batch = append(batch, rec)
			}
			p.Events++
			p.Position = rec.Position
		}
		if err := v.Apply(batch); err != nil {
			return err
		}
		if progress != nil {
			p.Head, p.Elapsed = head, time.Since(start)
			progress(p)
		}
		if stop {
			return nil
		}
		after = page[len(page)-1].Position
	}
}

// Rebuild folds the whole log from zero into a fresh view at cfg.Dir,
// replacing the view there only once the fold is complete (a failed
// rebuild leaves the old view in place). No View may be open on cfg.Dir.
// progress, if set, is called after each batch.
func Rebuild(ctx context.Context, store events.Store, cfg Config, progress func(Progress)) error {
	if cfg.Dir == "" {
		return errors.New("crontasks: Rebuild needs Config.Dir")
	}
	tmp := cfg.Dir + ".rebuild"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("crontasks: clear %s: %w", tmp, err)
	}
	fresh := cfg
	fresh.Dir = tmp
	v, err := Open(fresh)
	if err != nil {
		return err
	}
	err = replay(ctx, store, v, func(events.Recorded) (bool, bool) { return true, false }, progress)
	if cerr := v.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	old := cfg.Dir + ".old"
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("crontasks: clear %s: %w", old, err)
	}
	if err := os.Rename(cfg.Dir, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("crontasks: move old view aside: %w", err)
	}
	if err := os.Rename(tmp, cfg.Dir); err != nil {
		return fmt.Errorf("crontasks: install rebuilt view: %w", err)
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("crontasks: remove old view: %w", err)
	}
	return nil
}

// Replay folds the whole log from zero into a new in-memory view (the same
// result Rebuild writes to disk). The caller closes it.
func Replay(ctx context.Context, store events.Store, progress func(Progress)) (*View, error) {
	v, err := Open(Config{})
	if err != nil {
		return nil, err
	}
	if err := replay(ctx, store, v, func(events.Recorded) (bool, bool) { return true, false }, progress); err != nil {
		v.Close()
		return nil, err
	}
	return v, nil
}

// AsOf folds the log up to p into a new in-memory view: the view as it was
// at that position, or with every event decided at or before that time.
// The live view is not touched. The caller closes the result.
//
// Events carry the time they were decided; appends of different tasks may
// interleave slightly out of time order, so an as-of time reads the whole
// log and keeps the events decided by then.
func AsOf(ctx context.Context, store events.Store, p Point) (*View, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	v, err := Open(Config{})
	if err != nil {
		return nil, err
	}
	keep := func(rec events.Recorded) (bool, bool) {
		if !p.Time.IsZero() {
			return !rec.At.After(p.Time), false
		}
		if p.Position.Less(rec.Position) {
			return false, true
		}
		return true, false
	}
	if err := replay(ctx, store, v, keep, nil); err != nil {
		v.Close()
		return nil, err
	}
	return v, nil
}
