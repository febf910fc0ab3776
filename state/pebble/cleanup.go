package pebble

import (
	"bytes"
)

// cleanupCursor is where incremental TTL cleanup resumes: a table of
// Backend.ttlTables, a group index, and the last key prefix examined there.
type cleanupCursor struct {
	table, group int
	after        []byte
}

// CleanupExpired examines up to maxEntries keys of the states with a TTL,
// resuming where the previous call stopped and wrapping around (at most
// once per call), and removes their expired entries (Flink's incremental
// cleanup). It returns how many entries (values, list elements, map
// entries) it removed. Pebble v2 has no compaction filter, so this and
// reads are what remove expired entries.
func (b *Backend) CleanupExpired(maxEntries int) int {
	groups := b.opts.KeyGroupRange.Len()
	if len(b.ttlTables) == 0 || groups == 0 || maxEntries <= 0 {
		return 0
	}
	now := b.opts.Clock()
	c := &b.cursor
	removed, examined := 0, 0
	for moved := 0; examined < maxEntries && moved <= len(b.ttlTables)*groups; {
		t := b.ttlTables[c.table%len(b.ttlTables)]
		want := maxEntries - examined
		prefixes := b.keyPrefixes(t.info(), b.opts.KeyGroupRange.Start+c.group, c.after, want)
		for _, p := range prefixes {
			removed += t.cleanup(p, now)
		}
		examined += len(prefixes)
		if len(prefixes) > 0 {
			c.after = prefixes[len(prefixes)-1]
		}
		if len(prefixes) < want {
			if c.group++; c.group >= groups {
				c.group, c.table = 0, (c.table+1)%len(b.ttlTables)
			}
			c.after = nil
			moved++
		}
	}
	return removed
}

// keyPrefixes returns up to limit key prefixes of si in group kg after
// after (all of them when after is nil), copied.
func (b *Backend) keyPrefixes(si *stateInfo, kg int, after []byte, limit int) [][]byte {
	lo := appendGroupState(nil, kg, si.id)
	hi := succ(lo)
	if after != nil {
		lo = succ(after)
	}
	var out [][]byte
	scan(b.db, lo, hi, func(k, _ []byte) bool {
		_, _, prefix, _, ok := splitKey(k)
		if !ok || len(out) > 0 && bytes.Equal(out[len(out)-1], prefix) {
			return true
		}
		if len(out) == limit {
			return false
		}
		out = append(out, bytes.Clone(prefix))
		return true
	})
	return out
}
