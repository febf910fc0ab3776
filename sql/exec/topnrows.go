package exec

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/weirstream/weir/sql/binrow"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/types"
)

// rankedRow is one row of a Top-N partition's sorted list. With binary
// rows (TopNOptions.Types) bin is what the state keeps, and compares and
// equality read it; nil for a row that arrived in this process into a
// list of such rows, encoded when the state is written (see withFields).
// fields are the row as the operator received it, kept so that emitting
// it boxes nothing — nil for a row read back from Pebble or a snapshot,
// decoded only when it is emitted. Without binary rows, bin is nil and
// fields are the row. A rankedRow is never modified.
type rankedRow struct {
	bin    binrow.Row
	fields []any
}

// id is the row's identity: where its fields, or else its bytes, start.
func (r rankedRow) id() unsafe.Pointer {
	if r.fields != nil {
		return unsafe.Pointer(unsafe.SliceData(r.fields))
	}
	return unsafe.Pointer(unsafe.SliceData(r.bin))
}

// binaryRowsTag starts a sorted list in the binary row format. RowCodec's
// encoding of the list (the format before it) starts with tagArray or
// tagNil, so a list in the old format is told apart and converted.
const binaryRowsTag = 0x81

// rankedRowsCodec is the codec of a Top-N partition's rows. With a layout
// a list is binaryRowsTag, the row count, and each row's length and bytes;
// Pebble keeps those bytes as they are, and reading a list copies them
// once instead of decoding every field of every row. Without a layout it
// is RowCodec's encoding of the rows' fields, the format before binary
// rows, which Decode with a layout also reads (a checkpoint of an older
// Weir).
type rankedRowsCodec struct{ layout *binrow.Layout }

var (
	_ state.Codec[[]rankedRow]  = rankedRowsCodec{}
	_ state.Copier[[]rankedRow] = rankedRowsCodec{}
)

// Encode appends rows' encoding.
func (c rankedRowsCodec) Encode(buf []byte, rows []rankedRow) []byte {
	if c.layout == nil {
		list := make([]any, len(rows))
		for i, r := range rows {
			list[i] = r.fields
		}
		return RowCodec{}.Encode(buf, list)
	}
	buf = binary.AppendUvarint(append(buf, binaryRowsTag), uint64(len(rows)))
	for _, r := range rows {
		if r.bin != nil {
			buf = append(binary.AppendUvarint(buf, uint64(len(r.bin))), r.bin...)
			continue
		}
		// Room for the length, which is known once the row is encoded:
		// the row moves up behind it (its offsets are from its start).
		start := len(buf)
		buf = append(buf, make([]byte, binary.MaxVarintLen64)...)
		var err error
		if buf, err = c.layout.Append(buf, r.fields); err != nil {
			panic(fmt.Sprintf("sql/exec: Top-N state: %v", err)) // the backends turn it into the checkpoint's error
		}
		n := len(buf) - start - binary.MaxVarintLen64
		k := binary.PutUvarint(buf[start:], uint64(n))
		copy(buf[start+k:], buf[start+binary.MaxVarintLen64:])
		buf = buf[:start+k+n]
	}
	return buf
}

// Decode decodes one list; the rows share one copy of b.
func (c rankedRowsCodec) Decode(b []byte) ([]rankedRow, []byte, error) {
	if c.layout == nil || len(b) == 0 || b[0] != binaryRowsTag {
		return c.decodeFields(b)
	}
	r := reader{b: b[1:]}
	n := r.count()
	for range n {
		size := r.count()
		if r.err == nil {
			r.b = r.b[size:]
		}
	}
	if r.err != nil {
		return nil, b, r.err
	}
	list := bytes.Clone(b[:len(b)-len(r.b)])
	rest := r.b
	r = reader{b: list[1:]}
	rows := make([]rankedRow, r.count())
	for i := range rows {
		size := r.count()
		rows[i].bin, r.b = binrow.Row(r.b[:size:size]), r.b[size:]
		if err := c.layout.Validate(rows[i].bin); err != nil {
			return nil, b, fmt.Errorf("%w: sql/exec: Top-N row %d of %d: %v", state.ErrCorrupt, i, n, err)
		}
	}
	return rows, rest, nil
}

// decodeFields reads a list in RowCodec's format, converting each row to
// a binary row when the codec has a layout.
func (c rankedRowsCodec) decodeFields(b []byte) ([]rankedRow, []byte, error) {
	list, rest, err := RowCodec{}.Decode(b)
	if err != nil {
		return nil, b, err
	}
	rows := make([]rankedRow, len(list))
	for i, e := range list {
		fields, ok := e.([]any)
		if !ok {
			return nil, b, fmt.Errorf("%w: sql/exec: Top-N row %d is a %T", state.ErrCorrupt, i, e)
		}
		rows[i].fields = fields
		if c.layout == nil {
			continue
		}
		if rows[i].bin, err = c.layout.Append(nil, fields); err != nil {
			return nil, b, fmt.Errorf("%w: sql/exec: Top-N row %d of the state before binary rows: %v", state.ErrCorrupt, i, err)
		}
	}
	return rows, rest, nil
}

// Copy returns rows itself: lists are never modified, only replaced.
func (rankedRowsCodec) Copy(rows []rankedRow) []rankedRow { return rows }

// IsImmutableType says so to the state backends (state.ImmutableType).
func (rankedRowsCodec) IsImmutableType() bool { return true }

// compareBinary orders two binary rows by keys, as compareRows orders
// their fields, reading the sort fields in place.
func compareBinary(l *binrow.Layout, keys []SortKey, a, b binrow.Row) int {
	for _, k := range keys {
		if c := compareBinaryKey(l, k, a, b); c != 0 {
			return c
		}
	}
	return 0
}

func compareBinaryKey(l *binrow.Layout, k SortKey, a, b binrow.Row) int {
	i := k.Field
	if l.IsNull(a, i) || l.IsNull(b, i) {
		var x, y any // NULLs order as compareSortKey says; values do not matter
		if !l.IsNull(a, i) {
			x = true
		}
		if !l.IsNull(b, i) {
			y = true
		}
		return compareSortKey(k, x, y)
	}
	c := compareBinaryField(l, i, a, b)
	if k.Desc {
		return -c
	}
	return c
}

// compareBinaryField compares field i of two rows where neither is NULL:
// on the slots for integers, floats, booleans, strings and inline
// decimals and times; by decoded values otherwise.
func compareBinaryField(l *binrow.Layout, i int, a, b binrow.Row) int {
	inline := !l.InTail(a, i) && !l.InTail(b, i)
	switch t := l.Type(i); {
	case t.IsInteger(), inline && (t.Kind == types.Decimal || isTime(t)):
		return cmp.Compare(l.Int64(a, i), l.Int64(b, i))
	case t.Kind == types.Float || t.Kind == types.Double:
		return cmp.Compare(l.Float64(a, i), l.Float64(b, i))
	case t.Kind == types.Boolean:
		return cmp.Compare(boolInt(l.Bool(a, i)), boolInt(l.Bool(b, i)))
	case t.IsString():
		return bytes.Compare(l.Bytes(a, i), l.Bytes(b, i))
	}
	return compareValues(l.Value(a, i), l.Value(b, i))
}

func isTime(t types.Type) bool {
	switch t.Kind {
	case types.Date, types.Time, types.Timestamp, types.TimestampLTZ:
		return true
	}
	return false
}

// rowDecoder hands out the fields of binary rows read from state,
// decoding each row once per input row: a row that shifts rank is
// emitted twice (-U at its old rank, +U at its new one).
type rowDecoder struct {
	layout *binrow.Layout
	seen   map[*byte][]any
}

func (d *rowDecoder) reset() { clear(d.seen) }

func (d *rowDecoder) fields(r rankedRow) []any {
	if r.fields != nil {
		return r.fields
	}
	p := unsafe.SliceData(r.bin)
	if f, ok := d.seen[p]; ok {
		return f
	}
	if d.seen == nil {
		d.seen = map[*byte][]any{}
	}
	f := d.layout.Fields(r.bin)
	d.seen[p] = f
	return f
}
