package crontasks

import (
	"container/list"

	"github.com/google/uuid"
)

// rowCache is a least-recently-used cache of rows as last written. Rows in
// it are never modified (Evolve returns a new row), so they are shared
// without copying. Not safe for concurrent use: the applier owns it.
type rowCache struct {
	max   int
	order *list.List // front: most recent; values are *cacheEntry
	byID  map[uuid.UUID]*list.Element
}

type cacheEntry struct {
	id   uuid.UUID
	task *Task
}

// newRowCache returns a cache of at most max rows; max < 1 disables it.
func newRowCache(max int) *rowCache {
	return &rowCache{max: max, order: list.New(), byID: map[uuid.UUID]*list.Element{}}
}

func (c *rowCache) get(id uuid.UUID) (*Task, bool) {
	e, ok := c.byID[id]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cacheEntry).task, true
}

func (c *rowCache) put(id uuid.UUID, t *Task) {
	if c.max < 1 {
		return
	}
	if e, ok := c.byID[id]; ok {
		e.Value.(*cacheEntry).task = t
		c.order.MoveToFront(e)
		return
	}
	c.byID[id] = c.order.PushFront(&cacheEntry{id: id, task: t})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byID, last.Value.(*cacheEntry).id)
	}
}
