package pebble

import (
	"bytes"

	"github.com/weirstream/weir/state"
)

// cleanupCursor is where incremental TTL cleanup resumes: a table of
// Backend.ttlTables, a group index, and the last key prefix examined there.
type cleanupCursor struct {
	table, group int
	after        []byte
}

// sweep is the write-driven cleanup of one state with a TTL (the
// analogue of Flink's RocksDB compaction filter; see
// state.TTLConfig.QueryTimeAfterNumEntries): pending counts the entries
// written to it since its last sweep; every chunk of them is swept as
// many keys from cursor on.
type sweep struct {
	chunk   int64 // QueryTimeAfterNumEntries; 0: off
	pending int64
	cursor  cleanupCursor // table unused: one state
}

// maxSweepChunks bounds the write-driven sweep of one state in one
// CleanupExpired call (one tick), so a burst of writes delays a tick by a
// bounded amount; writes beyond it are not carried over.
const maxSweepChunks = 16

// newSweep returns the write-driven sweep of a state registered with c.
func newSweep(c *state.TTLConfig) *sweep {
	n := c.QueryTimeAfterNumEntries
	if n == 0 {
		n = state.DefaultQueryTimeAfterNumEntries
	}
	return &sweep{chunk: max(n, 0)}
}

// wrote counts a write of Pebble key k for its state's sweep. The sweeps'
// own deletions are not counted.
func (b *Backend) wrote(k []byte) {
	if b.sweeping || len(k) < groupStateLen {
		return
	}
	if id := int(k[2])<<8 | int(k[3]); id < len(b.sweeps) && b.sweeps[id] != nil {
		b.sweeps[id].pending++
	}
}

// CleanupExpired examines up to maxEntries keys of the states with a TTL,
// resuming where the previous call stopped and wrapping around (at most
// once per call), and removes their expired entries (Flink's incremental
// cleanup); then it sweeps each state with a TTL in proportion to the
// entries written to it since (see sweep). It returns how many entries
// (values, list elements, map entries) it removed.
func (b *Backend) CleanupExpired(maxEntries int) int {
	b.sweeping = true
	defer func() { b.sweeping = false }()
	return b.roundRobin(maxEntries) + b.sweepWritten()
}

// roundRobin is Flink's incremental cleanup: maxEntries keys over every
// state with a TTL in turn.
func (b *Backend) roundRobin(maxEntries int) int {
	groups := b.opts.KeyGroupRange.Len()
	if len(b.ttlTables) == 0 || groups == 0 || maxEntries <= 0 {
		return 0
	}
	now := b.opts.Clock()
	c := &b.cursor
	removed, examined := 0, 0
	for moved := 0; examined < maxEntries && moved <= len(b.ttlTables)*groups; {
		t := b.ttlTables[c.table%len(b.ttlTables)]
		n, wrapped := b.cleanGroup(t, c, maxEntries-examined, now, &removed)
		examined += n
		if wrapped {
			if c.group == 0 {
				c.table = (c.table + 1) % len(b.ttlTables)
			}
			moved++
		}
	}
	return removed
}

// sweepWritten sweeps every state with a TTL by a chunk of keys for each
// chunk of entries written to it, reading the clock once per chunk.
func (b *Backend) sweepWritten() int {
	groups := b.opts.KeyGroupRange.Len()
	removed := 0
	for _, t := range b.ttlTables {
		s := b.sweeps[t.info().id]
		for chunks := 0; s.chunk > 0 && s.pending >= s.chunk && chunks < maxSweepChunks && groups > 0; chunks++ {
			s.pending -= s.chunk
			now := b.opts.Clock()
			for examined, moved := 0, 0; examined < int(s.chunk) && moved <= groups; {
				n, wrapped := b.cleanGroup(t, &s.cursor, int(s.chunk)-examined, now, &removed)
				examined += n
				if wrapped {
					moved++
				}
			}
		}
		if s.pending >= s.chunk {
			s.pending = 0
		}
	}
	return removed
}

// cleanGroup examines up to want keys of table t in the cursor's key
// group after its key, removing expired entries (counted into removed).
// It returns how many keys it examined and whether it finished the group,
// in which case the cursor moves to the next group (0 after the last).
func (b *Backend) cleanGroup(t table, c *cleanupCursor, want int, now int64, removed *int) (int, bool) {
	prefixes := b.keyPrefixes(t.info(), b.opts.KeyGroupRange.Start+c.group, c.after, want)
	for _, p := range prefixes {
		*removed += t.cleanup(p, now)
	}
	if len(prefixes) > 0 {
		c.after = prefixes[len(prefixes)-1]
	}
	if len(prefixes) < want {
		c.group = (c.group + 1) % b.opts.KeyGroupRange.Len()
		c.after = nil
		return len(prefixes), true
	}
	return len(prefixes), false
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
