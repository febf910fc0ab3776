package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/weirstream/weir/sql/binrow"
	"github.com/weirstream/weir/state"
)

// stateRow is one row that a keyed state keeps (a group's accumulator):
// fields as the operator computed them, or bin, the row's bytes as a
// state backend that stores bytes (Pebble) read them; the operator reads
// fields, decoding bin when they are nil. On the heap a row keeps its
// fields and is encoded only at a snapshot. A stateRow is never modified:
// the operator copies fields before changing them, so the codec's Copy
// is the row itself.
type stateRow struct {
	bin    binrow.Row
	fields []any
}

// binaryRowTag starts one row in the binary row format. RowCodec's
// encoding of a row (the format before it) starts with tagArray or
// tagNil, so a row of an older checkpoint is told apart and read.
const binaryRowTag = 0x82

// stateRowCodec is the codec of a stateRow. With a layout a row is
// binaryRowTag, its length and its bytes (package binrow), which Pebble
// keeps as they are: reading a row copies its bytes once instead of
// decoding each field. Without a layout it is RowCodec's encoding of the
// fields, the format before binary rows, which Decode with a layout also
// reads (a checkpoint of an older Weir). what names the state in errors.
type stateRowCodec struct {
	layout *binrow.Layout
	what   string
}

var (
	_ state.Codec[stateRow]  = stateRowCodec{}
	_ state.Copier[stateRow] = stateRowCodec{}
)

// Encode appends r's encoding. A field that does not fit the layout
// panics, which the backends turn into the error of the write or
// checkpoint; the layouts come from the planner's types, which the
// values follow.
func (c stateRowCodec) Encode(buf []byte, r stateRow) []byte {
	if c.layout == nil {
		return RowCodec{}.Encode(buf, r.fields)
	}
	buf = append(buf, binaryRowTag)
	if r.fields == nil {
		return append(binary.AppendUvarint(buf, uint64(len(r.bin))), r.bin...)
	}
	return appendSized(buf, func(b []byte) []byte {
		b, err := c.layout.Append(b, r.fields)
		if err != nil {
			panic(fmt.Sprintf("sql/exec: %s state: %v", c.what, err))
		}
		return b
	})
}

// appendSized appends a uvarint length and what add appends, whose
// length is known only after: it leaves room for the longest length,
// then moves the bytes down behind the length (a binary row's offsets
// are from its own start, so it may move).
func appendSized(buf []byte, add func([]byte) []byte) []byte {
	start := len(buf)
	buf = add(append(buf, make([]byte, binary.MaxVarintLen64)...))
	n := len(buf) - start - binary.MaxVarintLen64
	k := binary.PutUvarint(buf[start:], uint64(n))
	copy(buf[start+k:], buf[start+binary.MaxVarintLen64:])
	return buf[:start+k+n]
}

// Decode decodes one row: its bytes copied out of b, or, in the format
// before binary rows, its fields.
func (c stateRowCodec) Decode(b []byte) (stateRow, []byte, error) {
	if c.layout == nil || len(b) == 0 || b[0] != binaryRowTag {
		fields, rest, err := RowCodec{}.Decode(b)
		return stateRow{fields: fields}, rest, err
	}
	size, k := binary.Uvarint(b[1:])
	if k <= 0 || size > uint64(len(b)-1-k) {
		return stateRow{}, b, fmt.Errorf("%w: sql/exec: %s state: a binary row's length is cut", state.ErrCorrupt, c.what)
	}
	end := 1 + k + int(size)
	bin := binrow.Row(bytes.Clone(b[1+k : end]))
	if err := c.layout.Validate(bin); err != nil {
		return stateRow{}, b, fmt.Errorf("%w: sql/exec: %s state: %v", state.ErrCorrupt, c.what, err)
	}
	return stateRow{bin: bin}, b[end:], nil
}

// Copy returns r itself: state rows are never modified, only replaced.
func (stateRowCodec) Copy(r stateRow) stateRow { return r }

// fieldsCopy is r's fields, for the caller to modify: a copy of fields,
// or bin decoded (a new slice).
func (c stateRowCodec) fieldsCopy(r stateRow) []any {
	if r.fields != nil || c.layout == nil {
		return append([]any(nil), r.fields...)
	}
	return c.layout.Fields(r.bin)
}

// fieldsOf is r's fields, to read, not to modify: fields, or bin decoded.
func (c stateRowCodec) fieldsOf(r stateRow) []any {
	if r.fields != nil || c.layout == nil {
		return r.fields
	}
	return c.layout.Fields(r.bin)
}
