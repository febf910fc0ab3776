package heap

// cleanupCursor is where incremental TTL cleanup resumes: a table of
// Backend.ttlTables, a group index, and the keys of that group still to
// examine (taken when the group was reached; keys added later wait for the
// next round).
type cleanupCursor struct {
	table, group int
	keys         []any
}

// CleanupExpired examines up to maxEntries keys of the states with a TTL,
// resuming where the previous call stopped and wrapping around, and removes
// their expired entries (Flink's incremental cleanup). It returns how many
// entries (values, list elements, map entries) it removed.
func (b *Backend) CleanupExpired(maxEntries int) int {
	if len(b.ttlTables) == 0 || b.groupCount() == 0 {
		return 0
	}
	now := b.opts.Clock()
	removed := 0
	for range maxEntries {
		t, i, k, ok := b.nextCleanupKey()
		if !ok {
			break
		}
		removed += t.cleanup(i, k, now)
	}
	return removed
}

// nextCleanupKey returns the next key to examine, refilling the cursor from
// the following groups; false after one full round found no key at all.
func (b *Backend) nextCleanupKey() (table, int, any, bool) {
	c := &b.cursor
	groups := b.groupCount()
	for tries := 0; len(c.keys) == 0; tries++ {
		if tries > len(b.ttlTables)*groups {
			return nil, 0, nil, false
		}
		if c.group++; c.group >= groups {
			c.group, c.table = 0, c.table+1
		}
		c.table %= len(b.ttlTables)
		c.keys = b.ttlTables[c.table].groupKeys(c.group)
	}
	k := c.keys[0]
	c.keys[0], c.keys = nil, c.keys[1:]
	return b.ttlTables[c.table], c.group, k, true
}
