package heap

import (
	"bytes"
	"reflect"
	"sync/atomic"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// encCell keeps the encoding of one stored value once a snapshot made it,
// so that later snapshots copy the bytes instead of encoding the value
// again (Flink's heap backend keeps rows serialized; its snapshot is
// mostly a copy). An elem gets a new, empty cell whenever a new value is
// stored (Put, Add, Update, a restore); the cell follows the elem when
// only its TTL timestamp or its version changes and when its value is
// replaced by a deep copy (see private), whose encoding is the same.
//
// The encoding is the codec's of the value as the snapshot captured it.
// Copy-on-read (private) keeps a captured value from changing while a
// snapshot is in flight, and a value read and modified in place is stored
// again (Update, Put, Add), which gives its elem a new cell: Flink's
// contract, under which a change not written back is not state. A value
// modified in place and never written back keeps its old encoding here,
// as on the Pebble backend, where such a change is lost too.
//
// Only snapshot writers touch a cell's contents after it is made: the
// owner allocates it and copies its pointer. Two snapshots written at once
// may both encode the value (the same bytes); the first to claim the cell
// keeps them, and the other reads them only once they are complete. The
// bytes' slice lives in the cell (one object less to allocate and to reach
// than a pointer to a slice).
type encCell struct {
	// state is cellEmpty, cellFilling (a writer claimed the cell and is
	// setting b) or cellFull (b is set and never changes again).
	state atomic.Uint32
	b     []byte
}

const (
	cellEmpty = iota
	cellFilling
	cellFull
)

// bytes returns the kept encoding, if any.
func (c *encCell) bytes() ([]byte, bool) {
	if c == nil || c.state.Load() != cellFull {
		return nil, false
	}
	return c.b, true
}

// keep stores a copy of encoding b, made by a snapshot at, unless another
// writer keeps one.
//
// It keeps the first encoding of every value, also of those that the
// owner replaces before the next snapshot (an aggregate updated at every
// record): their bytes are garbage then, a copy of what the snapshot
// encoded anyway. Keeping only values stored before the previous snapshot
// would spare that copy, but encode twice every value of a state that
// only grows (Nexmark q20's join rows).
func (c *encCell) keep(b []byte, at snapAt) {
	if c == nil || !at.keep {
		return
	}
	if c.state.CompareAndSwap(cellEmpty, cellFilling) {
		c.b = bytes.Clone(b)
		c.state.Store(cellFull)
	}
}

// cellFor returns a new cell for a value v being stored, or nil when v's
// type is immutable (a number, a string, a struct of them: see immutable),
// whose encoding costs little more than copying the bytes would. The
// answer is kept for the last type seen, as a state stores one type.
func (c *core[E]) cellFor(v any) *encCell {
	if v == nil {
		return nil
	}
	if t := reflect.TypeOf(v); t != c.cellType {
		c.cellType, c.cellWorth = t, !immutable(v)
	}
	if !c.cellWorth {
		return nil
	}
	return new(encCell)
}

// snapAt is what a snapshot's encoding depends on besides the entries.
type snapAt struct {
	// now (ms) decides which entries expired.
	now int64
	// keep is set to keep encodings in cells (a snapshot, not
	// EstimatedSize).
	keep bool
}

// appendValue appends codec's encoding of e.v: the bytes in e's cell, or
// an encoding, which the cell keeps.
func appendValue(buf []byte, codec state.Codec[any], e elem, at snapAt) []byte {
	if b, ok := e.enc.bytes(); ok {
		return append(buf, b...)
	}
	start := len(buf)
	buf = codec.Encode(buf, e.v)
	e.enc.keep(buf[start:], at)
	return buf
}

// appendPrefixedValue is appendValue behind the encoding's uvarint length.
func appendPrefixedValue(buf []byte, codec state.Codec[any], e elem, at snapAt) []byte {
	if b, ok := e.enc.bytes(); ok {
		return wire.AppendBytes(buf, b)
	}
	start := len(buf)
	return prefixLength(appendValue(buf, codec, e, at), start)
}
