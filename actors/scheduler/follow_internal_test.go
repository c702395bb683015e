package scheduler

import (
	"testing"

	"github.com/cronactor/cronactor/events"
	"github.com/google/uuid"
)

type fixedHead events.Position

func (h fixedHead) Head() events.Position { return events.Position(h) }

// While following, a snapshot's mark never passes the follower: a record
// may lack an event of another writer the follower has not taken in.
func TestFollowHeadNeverPassesTheFollower(t *testing.T) {
	f := &follower{moved: make(chan struct{}), own: map[uuid.UUID]struct{}{}}
	h := followHead{store: fixedHead{Commit: 10, Prepare: 10}, f: f}
	f.advance(events.Position{Commit: 7, Prepare: 7})
	if got := h.Head(); got.Commit != 7 {
		t.Fatalf("head with the follower behind: %s", got)
	}
	f.advance(events.Position{Commit: 12, Prepare: 12})
	if got := h.Head(); got.Commit != 10 {
		t.Fatalf("head with the follower ahead: %s", got)
	}
}

// Own events are skipped once, by ID; an append that failed is forgotten.
func TestFollowerKnowsItsOwnEvents(t *testing.T) {
	f := &follower{moved: make(chan struct{}), own: map[uuid.UUID]struct{}{}}
	a, b := events.Proposed{ID: uuid.New()}, events.Proposed{ID: uuid.New()}
	f.note([]events.Proposed{a, b})
	f.forget([]events.Proposed{b})
	if !f.mine(a.ID) || f.mine(a.ID) || f.mine(b.ID) || len(f.own) != 0 {
		t.Fatalf("own IDs: %v", f.own)
	}
}
