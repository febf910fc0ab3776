package exec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/weirstream/weir/sql/binrow"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/types"
)

// stateRow is one row that a keyed state keeps (a group's accumulator):
// fields as the operator computed them, or a binary row (package binrow)
// as the operator stored it or a state backend that stores bytes
// (Pebble) read it; the operator reads fields, decoding a binary row when
// it has no fields. On the heap a row of fields is encoded only at a
// snapshot. A stateRow is never modified: the operator copies fields
// before changing them, so the codec's Copy is the row itself.
//
// A stateRow is one pointer, so that a state backend keeping values as
// `any` (the heap) stores it without an allocation of its own: p points to
// a rowFields, or to a binary row's encoding in state (binaryRowTag, its
// length, its bytes; see stateRowCodec) — one allocation without pointers,
// which the collector does not scan and a snapshot copies as it is. A
// nil p is a row without fields.
type stateRow struct{ p unsafe.Pointer }

// rowFields is a stateRow of fields. Its first byte is 0, never
// binaryRowTag, which starts a binary row.
type rowFields struct {
	tag    uint64
	fields []any
}

// fieldsRow is a stateRow of fields f.
func fieldsRow(f []any) stateRow { return stateRow{unsafe.Pointer(&rowFields{fields: f})} }

// binaryRow is a stateRow of a copy of bin.
func binaryRow(bin binrow.Row) stateRow {
	enc := make([]byte, 5, 5+len(bin))
	enc[0] = binaryRowTag
	binary.LittleEndian.PutUint32(enc[1:], uint32(len(bin)))
	return stateRow{unsafe.Pointer(unsafe.SliceData(append(enc, bin...)))}
}

func (r stateRow) binary() bool { return r.p != nil && *(*byte)(r.p) == binaryRowTag }

// fields is r's fields, nil for a binary row.
func (r stateRow) fields() []any {
	if r.p == nil || r.binary() {
		return nil
	}
	return (*rowFields)(r.p).fields
}

// encoded is a binary row's encoding in state, nil for a row of fields.
func (r stateRow) encoded() []byte {
	if !r.binary() {
		return nil
	}
	n := binary.LittleEndian.Uint32(unsafe.Slice((*byte)(unsafe.Add(r.p, 1)), 4))
	return unsafe.Slice((*byte)(r.p), 5+int(n))
}

// bin is a binary row's bytes, nil for a row of fields.
func (r stateRow) bin() binrow.Row {
	if enc := r.encoded(); enc != nil {
		return binrow.Row(enc[5:])
	}
	return nil
}

// binaryRowTag starts one row in the binary row format. RowCodec's
// encoding of a row (the format before it) starts with tagArray or
// tagNil, so a row of an older checkpoint is told apart and read.
const binaryRowTag = 0x82

// stateRowCodec is the codec of a stateRow. With a layout a row is
// binaryRowTag, its length (uint32, little-endian) and its bytes (package
// binrow), which Pebble keeps as they are: reading a row copies its bytes
// once instead of decoding each field. Without a layout it is RowCodec's encoding of the
// fields, the format before binary rows, which Decode with a layout also
// reads (a checkpoint of an older Weir). what names the state in errors.
type stateRowCodec struct {
	layout *binrow.Layout
	what   string
}

var (
	_ state.Codec[stateRow]   = stateRowCodec{}
	_ state.Copier[stateRow]  = stateRowCodec{}
	_ state.InPlace[stateRow] = stateRowCodec{}
)

// Encode appends r's encoding. Fields that do not fit the layout (the
// layouts come from the planner's types, which the values follow, so this
// is a mismatch of a value's Go type) are written as RowCodec's encoding,
// which Decode reads too, rather than failing the write.
func (c stateRowCodec) Encode(buf []byte, r stateRow) []byte {
	if c.layout == nil {
		return RowCodec{}.Encode(buf, r.fields())
	}
	fields := r.fields()
	if fields == nil {
		if enc := r.encoded(); enc != nil {
			return append(buf, enc...)
		}
		return append(buf, binaryRowTag, 0, 0, 0, 0)
	}
	// The length is a fixed uint32 (binrow rows are shorter), written
	// once the row is: the row is built in place, never moved.
	start := len(buf)
	buf = append(buf, binaryRowTag, 0, 0, 0, 0)
	buf, err := c.layout.Append(buf, fields)
	if err != nil {
		return RowCodec{}.Encode(buf[:start], fields)
	}
	binary.LittleEndian.PutUint32(buf[start+1:], uint32(len(buf)-start-5))
	return buf
}

// Decode decodes one row: its bytes copied out of b, or, in the format
// before binary rows, its fields.
func (c stateRowCodec) Decode(b []byte) (stateRow, []byte, error) {
	if c.layout == nil || len(b) == 0 || b[0] != binaryRowTag {
		fields, rest, err := RowCodec{}.Decode(b)
		return fieldsRow(fields), rest, err
	}
	if len(b) < 5 || uint64(binary.LittleEndian.Uint32(b[1:])) > uint64(len(b)-5) {
		return stateRow{}, b, fmt.Errorf("%w: sql/exec: %s state: a binary row's length is cut", state.ErrCorrupt, c.what)
	}
	end := 5 + int(binary.LittleEndian.Uint32(b[1:]))
	if err := c.layout.Validate(binrow.Row(b[5:end])); err != nil {
		return stateRow{}, b, fmt.Errorf("%w: sql/exec: %s state: %v", state.ErrCorrupt, c.what, err)
	}
	enc := bytes.Clone(b[:end])
	return stateRow{unsafe.Pointer(unsafe.SliceData(enc))}, b[end:], nil
}

// stateCodec is the codec a list or value state of these rows is given:
// c, or, without a layout, c without state.InPlace (plainRowCodec): every
// row would be kept as it is (or, in a value state, decoded at every
// read), so the heap would gain nothing from it.
func (c stateRowCodec) stateCodec() state.Codec[stateRow] {
	if c.layout == nil {
		return plainRowCodec{c}
	}
	return c
}

// plainRowCodec is a stateRowCodec without a layout, and without
// state.InPlace.
type plainRowCodec struct{ c stateRowCodec }

func (p plainRowCodec) Encode(buf []byte, r stateRow) []byte { return p.c.Encode(buf, r) }

func (p plainRowCodec) Decode(b []byte) (stateRow, []byte, error) { return p.c.Decode(b) }

// Copy returns r itself, as stateRowCodec's.
func (plainRowCodec) Copy(r stateRow) stateRow { return r }

// IsImmutableType says so, as stateRowCodec's.
func (plainRowCodec) IsImmutableType() bool { return true }

// KeepsInPlace reports that a binary row is kept as its encoding
// (state.InPlace: the heap backend keeps a join side's rows in its own
// chunks), and a row of fields as it is: a lookup side's (Join.listRow),
// which every probe would otherwise decode.
func (c stateRowCodec) KeepsInPlace(r stateRow) bool { return c.layout != nil && r.binary() }

// View is the row encoded as b, a binary row read in place; a row in
// the format before binary rows is decoded.
func (c stateRowCodec) View(b []byte) (stateRow, error) {
	if c.layout != nil && len(b) >= 5 && b[0] == binaryRowTag && uint64(binary.LittleEndian.Uint32(b[1:])) == uint64(len(b)-5) {
		return stateRow{unsafe.Pointer(unsafe.SliceData(b))}, nil
	}
	r, rest, err := c.Decode(b)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("%w: sql/exec: %s state: %d bytes after a row", state.ErrCorrupt, c.what, len(rest))
	}
	return r, err
}

// rowLayout is the binary row layout of rows of types ts, or nil (none
// given, or a type binary rows do not take): the codec then keeps RowCodec
// values.
func rowLayout(ts []types.Type) *binrow.Layout {
	if ts == nil {
		return nil
	}
	l, err := binrow.NewLayout(ts)
	if err != nil {
		return nil
	}
	return l
}

// stored is row as state keeps it: its binary row when the codec has a
// layout — pointer-free bytes, which the collector does not scan and a
// snapshot copies as it is, not re-encoding it each time — or its fields.
// The binary row is placed in a when a is not nil (see rowArena), else
// in an allocation of its own. b is a scratch builder.
func (c stateRowCodec) stored(a *rowArena, b *binrow.Builder, row []any) stateRow {
	if c.layout == nil {
		return fieldsRow(row)
	}
	bin, err := b.Build(c.layout, row)
	if err != nil {
		return fieldsRow(row)
	}
	return a.row(bin)
}

// over is row as a binary row built in *buf, which the caller reuses
// (for a state that keeps only encodings, state.KeepsEncodings), or its
// fields when the codec has no layout or the layout cannot hold them.
func (c stateRowCodec) over(buf *[]byte, row []any) stateRow {
	if c.layout == nil {
		return fieldsRow(row)
	}
	b, err := c.layout.Append(append((*buf)[:0], binaryRowTag, 0, 0, 0, 0), row)
	if err != nil {
		return fieldsRow(row)
	}
	binary.LittleEndian.PutUint32(b[1:], uint32(len(b)-5))
	*buf = b
	return stateRow{unsafe.Pointer(unsafe.SliceData(b))}
}

// Copy returns r itself: state rows are never modified, only replaced.
func (stateRowCodec) Copy(r stateRow) stateRow { return r }

// IsImmutableType says so to the state backends (state.ImmutableType): a
// row read while a snapshot encodes it needs no copy.
func (stateRowCodec) IsImmutableType() bool { return true }

// fieldsCopy is r's fields, for the caller to modify: a copy of fields,
// or bin decoded (a new slice).
func (c stateRowCodec) fieldsCopy(r stateRow) []any {
	if !r.binary() || c.layout == nil {
		return append([]any(nil), r.fields()...)
	}
	return c.layout.Fields(r.bin())
}

// fieldsOf is r's fields, to read, not to modify: fields, or bin decoded
// (its strings share the row's bytes, which state never changes).
func (c stateRowCodec) fieldsOf(r stateRow) []any {
	if !r.binary() || c.layout == nil {
		return r.fields()
	}
	return c.layout.FieldsOfImmutable(r.bin())
}
