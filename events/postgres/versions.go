package postgres

import "sync"

// versionCache remembers the last version of the streams this process's
// committer wrote or read, so that a group whose streams it knows skips
// reading them: the group is then one round trip (BEGIN, the check, the
// writes, COMMIT in one pipeline).
//
// A remembered version is never trusted alone: the group's transaction
// checks it under the head row (cronactor_check_versions) before it
// writes, and a version another transaction moved fails the check, which
// decides nothing; the committer forgets the group's streams and decides
// it again, reading them. An append refused against a remembered version
// is decided again against a read one before its conflict is reported.
//
// Bounded: at maxVersions streams an arbitrary one is forgotten for each
// new one. Safe for concurrent use.
type versionCache struct {
	mu sync.Mutex
	m  map[string]int64
}

// maxVersions bounds the streams a versionCache remembers (about 100 bytes
// each).
const maxVersions = 1 << 16

func newVersionCache() *versionCache { return &versionCache{m: make(map[string]int64)} }

func (c *versionCache) get(stream string) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[stream]
	return v, ok
}

func (c *versionCache) put(stream string, version int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[stream]; !ok && len(c.m) >= maxVersions {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[stream] = version
}

func (c *versionCache) forget(streams []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range streams {
		delete(c.m, s)
	}
}

func (c *versionCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
}
