package jdbc

import (
	"container/list"
	"time"
)

// CacheOptions is Flink's PARTIAL lookup cache (lookup.cache = PARTIAL):
// the rows of recently looked-up keys, kept in memory by each lookup-join
// subtask, never checkpointed.
type CacheOptions struct {
	// MaxRows is lookup.partial-cache.max-rows: the keys the cache holds
	// at most (Flink's cache counts entries, one per key, whatever the
	// rows of each); the least recently used key goes first. 0: unbounded.
	MaxRows int
	// ExpireAfterWrite is lookup.partial-cache.expire-after-write: a key's
	// rows are dropped this long after they were read from the table.
	// 0: never.
	ExpireAfterWrite time.Duration
	// ExpireAfterAccess is lookup.partial-cache.expire-after-access: a
	// key's rows are dropped this long after they were last used. 0: never.
	ExpireAfterAccess time.Duration
	// CacheMissingKey is lookup.partial-cache.cache-missing-key: a key
	// without rows is cached as such, so it is not asked for again until
	// it expires. Default true.
	CacheMissingKey bool
}

// lookupCache is an LRU map from an encoded key to its rows. It does no
// I/O and reads no clock: the caller passes the time. One subtask owns it.
type lookupCache struct {
	opts  CacheOptions
	order *list.List // of *cacheEntry, most recently used first
	byKey map[string]*list.Element
}

type cacheEntry struct {
	key             string
	rows            [][]any
	written, access time.Time
}

func newLookupCache(o CacheOptions) *lookupCache {
	return &lookupCache{opts: o, order: list.New(), byKey: map[string]*list.Element{}}
}

// get returns the cached rows of key, if they have not expired at now.
func (c *lookupCache) get(key string, now time.Time) ([][]any, bool) {
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if c.expired(e, now) {
		c.remove(el)
		return nil, false
	}
	e.access = now
	c.order.MoveToFront(el)
	return e.rows, true
}

func (c *lookupCache) expired(e *cacheEntry, now time.Time) bool {
	w, a := c.opts.ExpireAfterWrite, c.opts.ExpireAfterAccess
	return w > 0 && !now.Before(e.written.Add(w)) || a > 0 && !now.Before(e.access.Add(a))
}

// put caches the rows of key read at now (no rows: only with
// CacheMissingKey), evicting the least recently used key beyond MaxRows.
func (c *lookupCache) put(key string, rows [][]any, now time.Time) {
	if len(rows) == 0 && !c.opts.CacheMissingKey {
		return
	}
	if el, ok := c.byKey[key]; ok {
		c.remove(el)
	}
	c.byKey[key] = c.order.PushFront(&cacheEntry{key: key, rows: rows, written: now, access: now})
	for c.opts.MaxRows > 0 && c.order.Len() > c.opts.MaxRows {
		c.remove(c.order.Back())
	}
}

func (c *lookupCache) remove(el *list.Element) {
	delete(c.byKey, el.Value.(*cacheEntry).key)
	c.order.Remove(el)
}

// len is the number of cached keys.
func (c *lookupCache) len() int { return c.order.Len() }
