package exec

import (
	"encoding/binary"
	"unsafe"

	"github.com/weirstream/weir/sql/binrow"
)

// rowArena places the binary rows of an insert-only list state (a join's
// side kept in arrival order) one after another in large chunks, instead
// of one allocation each. The collector then follows each stored row to
// one of a few chunks, whose spans stay in the caches, rather than to a
// span of its own among millions (Nexmark q7 at 10 M events keeps 9.2 M
// rows; a quarter of its CPU went to the collector, 18 % to finding the
// spans of what it marks, 9 % with rows in chunks). A chunk lives while
// any row in it, or any string read from one, does, so the join uses an
// arena only for a side without a TTL, whose rows are never removed
// (Join.listRow). The arena belongs to one subtask's operator; a chunk
// is never moved or rewritten below its length, so a snapshot encoding
// earlier rows on another goroutine reads bytes no later row writes.
type rowArena struct{ chunk []byte }

const (
	// arenaChunk is a chunk's size: large enough that a span is shared by
	// a thousand rows of Nexmark's size, small enough that the last
	// chunk's unused tail is nothing beside the state.
	arenaChunk = 256 << 10
	// arenaMaxRow is the largest row (with its 5-byte head) placed in a
	// chunk; a larger one gets an allocation of its own, so that no chunk
	// is mostly one row.
	arenaMaxRow = arenaChunk / 16
)

// row is a stateRow holding a copy of bin, as binaryRow's; a nil arena's
// is binaryRow's.
func (a *rowArena) row(bin binrow.Row) stateRow {
	n := 5 + len(bin)
	if a == nil || n > arenaMaxRow {
		return binaryRow(bin)
	}
	if cap(a.chunk)-len(a.chunk) < n {
		a.chunk = make([]byte, 0, arenaChunk)
	}
	start := len(a.chunk)
	a.chunk = append(a.chunk, binaryRowTag, 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(a.chunk[start+1:], uint32(len(bin)))
	a.chunk = append(a.chunk, bin...) // within cap: the chunk stays put
	return stateRow{unsafe.Pointer(&a.chunk[start])}
}
