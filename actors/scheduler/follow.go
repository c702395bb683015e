package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cronactor/cronactor/actors/task"
	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

// Following the log (docs/decisions/0026-insert-tx.md). On a store others
// append to (events.SharedLog: an embedder's transaction on PostgreSQL,
// later other nodes), a scheduler does not learn of every task through its
// own calls. It follows the global log from where its recovery began, and
// for every event of a task stream that it did not append itself it sends
// the task's actor a task.Refresh (starting the actor from the task's
// record, or loading the task, as any call does): an actor older than the
// event reads its stream's tail and tells the due-time index when the task
// is next due. A TaskCreated of another writer so gets the task scheduled,
// a TaskUpdated re-read, a TaskDeleted unscheduled, without a restart.
//
// Its own appends cost almost nothing on that path: the task actors append
// through ownStore, which notes their events' IDs before handing them to
// the store, and the follower skips an event whose ID it noted (and
// forgets it) without decoding it or asking any actor. The follower
// handles one event at a time, in log order, and moves on only once the
// refresh answered (it retries a failed one), so it skips nothing; the
// snapshot's mark never passes it (followHead), so a restart never relies
// on a record older than an event the follower has not taken in.

// Follow says whether a scheduler follows its store's global log.
type Follow int

const (
	// FollowAuto follows when the store says others append to its log
	// (events.SharedLog; the Postgres store does, the embedded store is not
	// one: its directory lock keeps it to one writer process).
	FollowAuto Follow = iota
	// FollowOn follows whatever the store. Without events.HeadReader the
	// follower starts at the beginning of the log (every event is a
	// Refresh once).
	FollowOn
	// FollowOff does not follow: tasks others create are scheduled from
	// the next Start.
	FollowOff
)

// ErrNotFollowing: WaitFollowed on a scheduler that does not follow its
// store's log.
var ErrNotFollowing = errors.New("scheduler: not following the store's log")

// follower is the Scheduler's follower of the log (see above).
type follower struct {
	s     *Scheduler
	from  events.Position
	store events.Store // the task actors' store: ownStore around Config.Store

	mu    sync.Mutex
	own   map[uuid.UUID]struct{} // IDs of events appended, not yet followed
	pos   events.Position        // every event up to it is taken in
	moved chan struct{}          // closed and replaced when pos moves

	runCtx context.Context // ends with stop
	cancel context.CancelFunc
	done   chan struct{}
}

// newFollower is s's follower when its configuration and store call for
// one, else nil; from is where it starts: the store's head before
// recovery, which recovery has folded.
func newFollower(s *Scheduler) *follower {
	shared, ok := s.cfg.Store.(events.SharedLog)
	switch s.cfg.Follow {
	case FollowOff:
		return nil
	case FollowAuto:
		if !ok || !shared.SharedLog() {
			return nil
		}
	}
	f := &follower{s: s, own: map[uuid.UUID]struct{}{}, moved: make(chan struct{}), done: make(chan struct{})}
	if hr, ok := s.cfg.Store.(events.HeadReader); ok {
		f.from = hr.Head()
	}
	f.pos = f.from
	if _, ok := s.cfg.Store.(events.Truncater); ok {
		f.store = ownTruncStore{ownStore{s.cfg.Store, f}}
	} else {
		f.store = ownStore{s.cfg.Store, f}
	}
	return f
}

// start runs the follower until stop.
func (f *follower) start() {
	f.runCtx, f.cancel = context.WithCancel(context.Background())
	go f.run(f.runCtx)
}

// finishWait bounds how long Stop waits for the follower to read the
// task actors' last appends.
const finishWait = 5 * time.Second

// finish is the follower's end in Stop, once the task actors have stopped:
// it reads on to the store's head — the actors' last appends, skipped as
// its own — so that the last snapshot's mark can be the head, then stops.
// An event of another writer ends it earlier (no actor can take it in any
// more: the mark stays before it, and the next Start reads from there),
// and so do ctx and finishWait.
func (f *follower) finish(ctx context.Context) {
	if hr, ok := f.s.cfg.Store.(events.HeadReader); ok && f.cancel != nil {
		wctx, cancel := context.WithTimeout(ctx, finishWait)
		_ = f.s.WaitFollowed(wctx, hr.Head())
		cancel()
	}
	f.stop()
}

// stop ends the follower and waits for it.
func (f *follower) stop() {
	if f.cancel == nil {
		return
	}
	f.cancel()
	<-f.done
}

func (f *follower) run(ctx context.Context) {
	defer close(f.done)
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		err := f.s.cfg.Store.Subscribe(ctx, f.position(), f.handle)
		if ctx.Err() != nil || errors.Is(err, events.ErrClosed) || errors.Is(err, ErrNotStarted) {
			return
		}
		f.s.cfg.Logger.Warn("following the log failed; following again", "err", err, "position", f.position(), "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

// handle takes in one event of the log.
func (f *follower) handle(r events.Recorded) error {
	if f.mine(r.ID) {
		f.advance(r.Position)
		return nil
	}
	id, err := events.TaskIDFromStream(r.Stream)
	if err != nil {
		f.advance(r.Position) // not a task's
		return nil
	}
	ctx := f.runCtx
	backoff := 50 * time.Millisecond
	for {
		err := f.refresh(ctx, id, r.Version)
		if err == nil || errors.Is(err, ErrTaskNotFound) {
			break
		}
		if ctx.Err() != nil || errors.Is(err, ErrNotStarted) {
			return err
		}
		f.s.cfg.Logger.Warn("task refresh from the log failed; retrying", "task_id", id, "version", r.Version,
			"position", r.Position, "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
	f.advance(r.Position)
	return nil
}

// refresh has task id's actor take in its stream up to version. The actor
// keeps the owners' index (R6) as the task then stands (task.Lister), in
// the order of its own decisions: were the follower to write the Refresh's
// answer there, a delete the actor decided meanwhile would be undone.
func (f *follower) refresh(ctx context.Context, id uuid.UUID, version uint64) error {
	reply, err := f.s.send(ctx, id, task.Refresh{Version: version})
	if err == nil {
		err = reply.Err
	}
	return err
}

// mine reports whether the event with that ID was appended by this
// scheduler's task actors, and forgets it.
func (f *follower) mine(id uuid.UUID) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.own[id]; ok {
		delete(f.own, id)
		return true
	}
	return false
}

func (f *follower) note(evs []events.Proposed) {
	f.mu.Lock()
	for _, e := range evs {
		if e.ID != uuid.Nil {
			f.own[e.ID] = struct{}{}
		}
	}
	f.mu.Unlock()
}

func (f *follower) forget(evs []events.Proposed) {
	f.mu.Lock()
	for _, e := range evs {
		delete(f.own, e.ID)
	}
	f.mu.Unlock()
}

func (f *follower) advance(p events.Position) {
	f.mu.Lock()
	if f.pos.Less(p) {
		f.pos = p
		close(f.moved)
		f.moved = make(chan struct{})
	}
	f.mu.Unlock()
}

func (f *follower) position() events.Position {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pos
}

// Followed is the position up to which the scheduler has taken in the log
// (every task event of other writers up to it is in its tasks' state and
// the due-time index), and false when it does not follow the log.
func (s *Scheduler) Followed() (events.Position, bool) {
	if s.follow == nil {
		return events.Position{}, false
	}
	return s.follow.position(), true
}

// WaitFollowed returns once the scheduler has taken in the log up to pos
// (see Followed) — say the position an embedder's transaction committed
// its task at (pgtx) — or ctx ends; ErrNotFollowing when it does not
// follow the log.
func (s *Scheduler) WaitFollowed(ctx context.Context, pos events.Position) error {
	f := s.follow
	if f == nil {
		return ErrNotFollowing
	}
	for {
		f.mu.Lock()
		if !f.pos.Less(pos) {
			f.mu.Unlock()
			return nil
		}
		moved := f.moved
		f.mu.Unlock()
		select {
		case <-moved:
		case <-f.done:
			return fmt.Errorf("scheduler: wait for position %s: %w", pos, ErrNotStarted)
		case <-ctx.Done():
			return fmt.Errorf("scheduler: wait for position %s (followed up to %s): %w", pos, f.position(), ctx.Err())
		}
	}
}

// ownStore is the task actors' store while the scheduler follows the log:
// it notes the IDs of the events they append (follower.note) before the
// store can make them visible, and forgets those of an append that failed.
type ownStore struct {
	events.Store
	f *follower
}

func (o ownStore) Append(ctx context.Context, stream string, expected events.ExpectedVersion, evs ...events.Proposed) (events.AppendResult, error) {
	o.f.note(evs)
	res, err := o.Store.Append(ctx, stream, expected, evs...)
	if err != nil {
		o.f.forget(evs)
	}
	return res, err
}

// AppendAsync implements events.AsyncAppender (through the store's own,
// or Append on a goroutine: events.AppendAsync).
func (o ownStore) AppendAsync(ctx context.Context, stream string, expected events.ExpectedVersion, evs []events.Proposed, done func(events.AppendResult, error)) {
	o.f.note(evs)
	events.AppendAsync(ctx, o.Store, stream, expected, evs, func(res events.AppendResult, err error) {
		if err != nil {
			o.f.forget(evs)
		}
		done(res, err)
	})
}

// ownTruncStore is ownStore for a store that removes events
// (events.Truncater), which the task actors look for.
type ownTruncStore struct{ ownStore }

func (o ownTruncStore) TruncateBefore(ctx context.Context, stream string, before uint64) error {
	return o.Store.(events.Truncater).TruncateBefore(ctx, stream, before)
}

// followHead is the snapshots' head while the scheduler follows the log:
// the store's head, but never past the follower, so that a snapshot's
// mark never covers an event of another writer that a record lacks.
type followHead struct {
	store events.HeadReader
	f     *follower
}

func (h followHead) Head() events.Position {
	p, q := h.store.Head(), h.f.position()
	if q.Less(p) {
		return q
	}
	return p
}
