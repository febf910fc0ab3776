package pebble

import "github.com/weirstream/weir/state"

var _ state.SizeEstimator = (*Backend)(nil)

// memEstimate follows the bytes written into the memtables, which
// Pebble's metrics do not give (only the memtables' allocated arenas).
type memEstimate struct {
	// written is the bytes of keys and values written since the flush
	// count last moved (an upper bound of the memtables' contents:
	// overwritten and deleted entries count too).
	written int64
	// flushes is Pebble's flush count when written was last reset.
	flushes int64
	// last is the last estimate, which a closed backend keeps answering.
	last int64
}

// EstimatedSize estimates the bytes the live keyed state takes: the live
// SSTs' bytes on disk (as RocksDB's total-sst-files-size) plus the bytes
// written since the last flush this subtask saw, which still sit in the
// memtables (the WAL, which holds them too, is not counted). Once a flush
// completes, the bytes written so far are taken as being in SSTs: those
// written while the flush ran are missed until the next one. A closed
// backend answers its last estimate.
func (b *Backend) EstimatedSize() int64 {
	if b.closed {
		return b.mem.last
	}
	m := b.db.Metrics()
	if n := m.Flush.Count; n != b.mem.flushes {
		b.mem.flushes, b.mem.written = n, 0
	}
	b.mem.last = m.Total().TablesSize + b.mem.written
	return b.mem.last
}
