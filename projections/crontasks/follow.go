package crontasks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cronactor/cronactor/events"
)

// Header is implemented by stores that know the position of their last
// event (the embedded store); the view uses it to report its lag in events.
type Header interface {
	Head() events.Position
}

// CatchUp applies the log from the checkpoint to its current end, in
// batches of Config.BatchSize.
func (v *View) CatchUp(ctx context.Context, store events.Store) error {
	for {
		page, err := store.ReadAll(ctx, v.Checkpoint(), v.cfg.BatchSize)
		if err != nil {
			return fmt.Errorf("crontasks: catch up from %s: %w", v.Checkpoint(), err)
		}
		if len(page) == 0 {
			return nil
		}
		if err := v.Apply(page); err != nil {
			return err
		}
	}
}

// Run catches up from the checkpoint, then follows the log live, applying
// what arrived since the previous batch as one batch. It returns when ctx
// ends (ctx.Err()), the store closes, the view closes (ErrClosed), or an
// event cannot be applied.
func (v *View) Run(ctx context.Context, store events.Store) error {
	if h, ok := store.(Header); ok {
		v.mu.Lock()
		v.head = h.Head
		v.mu.Unlock()
	}
	if err := v.CatchUp(ctx, store); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wake := make(chan struct{}, 1)
	space := make(chan struct{}, 1)
	signal := func(c chan struct{}) {
		select {
		case c <- struct{}{}:
		default:
		}
	}
	maxQueue := 4 * v.cfg.BatchSize
	receive := func(rec events.Recorded) error {
		for {
			v.mu.Lock()
			if len(v.queue) < maxQueue {
				v.queue = append(v.queue, pending{rec: rec, at: v.cfg.Now()})
				v.mu.Unlock()
				signal(wake)
				return nil
			}
			v.mu.Unlock()
			select {
			case <-space:
			case <-v.done:
				return ErrClosed
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	subDone := make(chan error, 1)
	go func() { subDone <- store.Subscribe(ctx, v.Checkpoint(), receive) }()
	var subErr error
	subscribed := true
	defer func() {
		cancel()
		if subscribed {
			<-subDone
		}
		v.mu.Lock()
		v.queue, v.inFlight = nil, time.Time{}
		v.mu.Unlock()
	}()
	recs := make([]events.Recorded, 0, v.cfg.BatchSize)
	for {
		v.mu.Lock()
		n := min(len(v.queue), v.cfg.BatchSize)
		recs = recs[:0]
		var first time.Time
		if n > 0 {
			first = v.queue[0].at
			for _, p := range v.queue[:n] {
				recs = append(recs, p.rec)
			}
			v.queue = v.queue[n:]
			v.inFlight = first
		}
		v.mu.Unlock()
		if n == 0 {
			if !subscribed {
				return subErr
			}
			select {
			case <-wake:
				continue
			case subErr = <-subDone:
				// Apply what was received, then report why the feed ended.
				subscribed = false
				if errors.Is(subErr, context.Canceled) && ctx.Err() != nil {
					return ctx.Err()
				}
				subErr = fmt.Errorf("crontasks: following the log: %w", subErr)
				continue
			case <-v.done:
				return ErrClosed
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		signal(space)
		if err := v.Apply(recs); err != nil {
			return err
		}
		v.mu.Lock()
		v.inFlight = time.Time{}
		v.lastBatch = v.cfg.Now().Sub(first)
		v.mu.Unlock()
	}
}

// Lag says how far the view trails the log.
type Lag struct {
	// Checkpoint is the position of the last applied event; Head the last
	// event of the log when the store reports it (zero otherwise).
	Checkpoint events.Position
	Head       events.Position
	// Events is how many events the view has not applied yet: Head minus
	// Checkpoint where the store numbers its log 1, 2, 3…, else the events
	// received and not yet applied.
	Events uint64
	// Behind is how long the oldest received, unapplied event has waited
	// (0 when the view is caught up).
	Behind time.Duration
	// LastBatch is how long the events of the latest applied batch waited
	// from receipt to being applied, at most.
	LastBatch time.Duration
}

// Lag reports how far the view trails the log now.
func (v *View) Lag() Lag {
	v.mu.Lock()
	defer v.mu.Unlock()
	l := Lag{Checkpoint: v.checkpoint, LastBatch: v.lastBatch, Events: uint64(len(v.queue))}
	oldest := v.inFlight
	if oldest.IsZero() && len(v.queue) > 0 {
		oldest = v.queue[0].at
	}
	if !oldest.IsZero() {
		l.Behind = v.cfg.Now().Sub(oldest)
	}
	if v.head != nil {
		l.Head = v.head()
		if l.Head.Commit == l.Head.Prepare && v.checkpoint.Commit <= l.Head.Commit {
			l.Events = l.Head.Commit - v.checkpoint.Commit
		}
	}
	return l
}
