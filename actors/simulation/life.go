package simulation

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cronactor/cronactor/actors/clock"
	"github.com/cronactor/cronactor/events"
)

// errKilled is what a killed process's store answers.
var errKilled = errors.New("simulation: the process was stopped")

// life is one life of the scheduler process in a simulation: its view of
// the shared virtual clock and of the shared store. Killing it models the
// process dying at an instant (kill -9) inside one test process: its timers
// never fire, its work in flight no longer holds the clock back, and its
// appends fail, so nothing it does afterwards is recorded. The real crash
// tests (a child process killed with SIGKILL) live with the store; this is
// the simulated form, named as such.
type life struct {
	v     *clock.Virtual
	store events.Store

	mu    sync.Mutex
	dead  bool
	count int // Begin not yet matched by End
}

func newLife(v *clock.Virtual, store events.Store) *life {
	l := &life{v: v}
	l.store = &lifeStore{Store: store, l: l}
	return l
}

func (l *life) Now() time.Time { return l.v.Now() }

func (l *life) AfterFunc(d time.Duration, f func()) clock.Timer {
	return l.v.AfterFunc(d, func() {
		if !l.isDead() {
			f()
		}
	})
}

func (l *life) Begin() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dead {
		return
	}
	l.count++
	l.v.Begin()
}

func (l *life) End() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dead {
		return
	}
	l.count--
	l.v.End()
}

func (l *life) isDead() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dead
}

// kill ends the life: what it still counts as in flight is released.
func (l *life) kill() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dead {
		return
	}
	l.dead = true
	for ; l.count > 0; l.count-- {
		l.v.End()
	}
}

// lifeStore refuses appends once its life is killed.
type lifeStore struct {
	events.Store
	l *life
}

func (s *lifeStore) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	if s.l.isDead() {
		return events.AppendResult{}, errKilled
	}
	return s.Store.Append(ctx, stream, expected, evs...)
}

// AppendAsync passes the shared store's asynchronous appends through
// (events.AsyncAppender), refused as Append is once the life is killed.
func (s *lifeStore) AppendAsync(ctx context.Context, stream string, expected events.ExpectedVersion, evs []events.Proposed, done func(events.AppendResult, error)) {
	if s.l.isDead() {
		done(events.AppendResult{}, errKilled)
		return
	}
	events.AppendAsync(ctx, s.Store, stream, expected, evs, done)
}

// Close leaves the shared store open: it outlives every life.
func (s *lifeStore) Close() error { return nil }
