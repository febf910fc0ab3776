package jdbc

import (
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/weirstream/weir/event"
)

// walBatch is the committable of StrategyCheckpointTable: the rows one
// writer subtask (origin) received between two barriers, the second being
// checkpoint id. It lives in the checkpoint until the commit.
type walBatch struct {
	origin int
	id     event.CheckpointID
	rows   []event.Row
}

// Encoding: 'W', version 1, uvarint origin, varint id, uvarint row count,
// then per row: kind byte, uvarint field count, fields. A field is a tag
// byte and its value: 0 NULL, 1 int64 (varint), 2 float64 (8 bytes LE),
// 3 bool (1 byte), 4 string and 5 bytes (uvarint length + bytes),
// 6 time (uvarint length + time.MarshalBinary).
const (
	walMagic   = 'W'
	walVersion = 1
)

const (
	tagNull byte = iota
	tagInt
	tagFloat
	tagBool
	tagString
	tagBytes
	tagTime
)

// normalize converts every field to a driver.Value (int64, float64, bool,
// string, []byte, time.Time or nil), the kinds the codec keeps.
func normalize(t *tableInfo, r event.Row) (event.Row, error) {
	out := event.Row{Kind: r.Kind, Fields: make([]any, len(r.Fields))}
	for i, f := range r.Fields {
		v, err := driver.DefaultParameterConverter.ConvertValue(f)
		if err != nil {
			return out, fmt.Errorf("jdbc: table %q: column %q of row %s: a %T cannot be kept in a checkpoint "+
				"(exactly-once, checkpoint-table): convert it to a basic type or implement driver.Valuer: %w",
				t.name, t.columns[i], r, f, err)
		}
		out.Fields[i] = v
	}
	return out, nil
}

func (b walBatch) encode() ([]byte, error) {
	buf := []byte{walMagic, walVersion}
	buf = binary.AppendUvarint(buf, uint64(b.origin))
	buf = binary.AppendVarint(buf, int64(b.id))
	buf = binary.AppendUvarint(buf, uint64(len(b.rows)))
	for _, r := range b.rows {
		buf = append(buf, byte(r.Kind))
		buf = binary.AppendUvarint(buf, uint64(len(r.Fields)))
		for _, f := range r.Fields {
			var err error
			if buf, err = appendField(buf, f); err != nil {
				return nil, err
			}
		}
	}
	return buf, nil
}

func appendField(buf []byte, f any) ([]byte, error) {
	switch v := f.(type) {
	case nil:
		return append(buf, tagNull), nil
	case int64:
		return binary.AppendVarint(append(buf, tagInt), v), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(buf, tagFloat), math.Float64bits(v)), nil
	case bool:
		if v {
			return append(buf, tagBool, 1), nil
		}
		return append(buf, tagBool, 0), nil
	case string:
		return append(binary.AppendUvarint(append(buf, tagString), uint64(len(v))), v...), nil
	case []byte:
		return append(binary.AppendUvarint(append(buf, tagBytes), uint64(len(v))), v...), nil
	case time.Time:
		tb, err := v.MarshalBinary()
		if err != nil {
			return nil, err
		}
		return append(binary.AppendUvarint(append(buf, tagTime), uint64(len(tb))), tb...), nil
	}
	return nil, fmt.Errorf("jdbc: cannot encode a %T", f)
}

var errCorrupt = errors.New("jdbc: corrupt committable")

// decodeWAL reads what encode wrote; it never panics on bad input.
func decodeWAL(b []byte) (walBatch, error) {
	d := decoder{b: b}
	if len(b) < 2 || b[0] != walMagic || b[1] != walVersion {
		return walBatch{}, fmt.Errorf("%w: bad header", errCorrupt)
	}
	d.b = b[2:]
	out := walBatch{origin: int(d.uvarint()), id: event.CheckpointID(d.varint())}
	n := d.uvarint()
	for i := uint64(0); i < n && d.err == nil; i++ {
		r := event.Row{Kind: event.RowKind(d.byte())}
		nf := d.uvarint()
		if nf > uint64(len(d.b)) { // every field takes at least one byte
			d.fail("field count")
		}
		for j := uint64(0); j < nf && d.err == nil; j++ {
			r.Fields = append(r.Fields, d.field())
		}
		out.rows = append(out.rows, r)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	return out, d.err
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errCorrupt, what)
	}
	d.b = nil
}

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		d.fail("bad uvarint")
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *decoder) varint() int64 {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[k:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("truncated value")
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) field() any {
	switch tag := d.byte(); tag {
	case tagNull:
		return nil
	case tagInt:
		return d.varint()
	case tagFloat:
		if len(d.b) < 8 {
			d.fail("truncated float")
			return nil
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
		d.b = d.b[8:]
		return v
	case tagBool:
		return d.byte() == 1
	case tagString:
		return string(d.bytes())
	case tagBytes:
		return append([]byte(nil), d.bytes()...)
	case tagTime:
		var t time.Time
		if err := t.UnmarshalBinary(d.bytes()); err != nil {
			d.fail("bad time")
		}
		return t
	default:
		d.fail(fmt.Sprintf("unknown tag %d", tag))
		return nil
	}
}
