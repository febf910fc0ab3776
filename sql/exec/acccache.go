package exec

import "hash/maphash"

// accCache holds, for a few groups, the accumulator a GroupAggregate last
// stored, as fields. When the state keeps only encodings (the heap's
// placed values, Pebble), reading an accumulator decodes it, boxing each
// field: for a query of few groups and many aggregates (Nexmark q16, one
// group per channel and day) that cost more than the state saved. An
// entry is read only when the state holds a value for its group, which
// only the operator's update writes, putting the entry too; a cleared or
// expired group holds none, and a restore opens the operator anew. An
// entry's fields are never modified: readers copy them.
type accCache struct {
	seed  maphash.Seed
	slots []accSlot
}

// accSlot is one group's entry: its key and accumulator.
type accSlot struct {
	key string
	acc []any
}

// accCacheSlots is the entries an accCache holds, one per slot a key's
// hash picks.
const accCacheSlots = 64

// newAccCache returns an empty cache; a disabled one (on false) holds
// nothing.
func newAccCache(on bool) accCache {
	if !on {
		return accCache{}
	}
	return accCache{seed: maphash.MakeSeed(), slots: make([]accSlot, accCacheSlots)}
}

func (c *accCache) slot(key string) *accSlot {
	return &c.slots[maphash.String(c.seed, key)%accCacheSlots]
}

// get returns the accumulator last put for key, if the cache holds it.
func (c *accCache) get(key string) ([]any, bool) {
	if c.slots == nil {
		return nil, false
	}
	s := c.slot(key)
	if s.acc == nil || s.key != key {
		return nil, false
	}
	return s.acc, true
}

// put records acc as key's accumulator, which the caller no longer
// modifies.
func (c *accCache) put(key string, acc []any) {
	if c.slots != nil {
		*c.slot(key) = accSlot{key: key, acc: acc}
	}
}
