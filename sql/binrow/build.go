package binrow

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/shopspring/decimal"
)

// Row is one row of some Layout: the bytes described in the package doc.
// A Row is never modified once built; rows share nothing with the values
// they were built from.
type Row []byte

// Builder builds rows into one buffer that it reuses: a Row it returns is
// valid until the next Build. Copy it (bytes.Clone) to keep it.
type Builder struct {
	buf []byte
}

// Build encodes fields as a row of l.
func (b *Builder) Build(l *Layout, fields []any) (Row, error) {
	var err error
	b.buf, err = l.Append(b.buf[:0], fields)
	return Row(b.buf), err
}

// Append appends the row of fields to dst. Values follow package types:
// int64 (or a narrower Go integer) for the integer types, float64 (or
// float32), decimal.Decimal, string, []byte, time.Time, bool, and nil for
// NULL. On an error dst's contents past its old length are undefined.
func (l *Layout) Append(dst []byte, fields []any) ([]byte, error) {
	if len(fields) != len(l.kinds) {
		return dst, fmt.Errorf("%w: a row of %d fields for a layout of %d", ErrValue, len(fields), len(l.kinds))
	}
	start := len(dst)
	dst = append(dst, make([]byte, l.header)...)
	for i, v := range fields {
		if v == nil {
			dst[start+i/8] |= 1 << (i % 8)
			continue
		}
		slot := start + 2*l.bitmapLen + 8*i
		var err error
		if dst, err = l.put(dst, start, slot, i, v); err != nil {
			return dst, fmt.Errorf("%w: field %d (%s) holds a %T", err, i, l.types[i].Base(), v)
		}
	}
	if len(dst)-start > math.MaxUint32 {
		return dst, fmt.Errorf("%w: a row of %d bytes", ErrValue, len(dst)-start)
	}
	return dst, nil
}

// put stores field i's value v: in its slot, or in the tail (setting the
// tail bit) when it is variable-length or does not fit.
func (l *Layout) put(dst []byte, start, slot, i int, v any) ([]byte, error) {
	inline, ok := uint64(0), false
	switch l.kinds[i] {
	case kindBool:
		var b bool
		if b, ok = v.(bool); ok && b {
			inline = 1
		}
	case kindInt:
		var n int64
		n, ok = asInt(v)
		inline = uint64(n)
	case kindFloat:
		var f float64
		f, ok = asFloat(v)
		inline = math.Float64bits(f)
	case kindDecimal, kindBigDecimal:
		d, isDec := v.(decimal.Decimal)
		if !isDec {
			return dst, ErrValue
		}
		if n, fits := l.inlineDecimal(i, d); fits {
			inline, ok = uint64(n), true
			break
		}
		return l.tail(dst, start, slot, i, appendDecimal(dst, d)), nil
	case kindTime:
		t, isTime := v.(time.Time)
		if !isTime {
			return dst, ErrValue
		}
		if n, fits := inlineTime(t); fits {
			inline, ok = uint64(n), true
			break
		}
		next := binary.LittleEndian.AppendUint64(dst, uint64(t.Unix()))
		next = binary.LittleEndian.AppendUint32(next, uint32(t.Nanosecond()))
		return l.tail(dst, start, slot, i, next), nil
	case kindString:
		s, isStr := v.(string)
		if !isStr {
			return dst, ErrValue
		}
		return l.tail(dst, start, slot, i, append(dst, s...)), nil
	case kindBytes:
		b, isBytes := v.([]byte)
		if !isBytes {
			return dst, ErrValue
		}
		return l.tail(dst, start, slot, i, append(dst, b...)), nil
	}
	if !ok {
		return dst, ErrValue
	}
	binary.LittleEndian.PutUint64(dst[slot:], inline)
	return dst, nil
}

// tail records that field i's value is what was appended to dst after
// the slot's last tail value: next is dst with the value appended.
func (l *Layout) tail(dst []byte, start, slot, i int, next []byte) []byte {
	off := len(dst) - start
	n := len(next) - len(dst)
	next[start+l.bitmapLen+i/8] |= 1 << (i % 8)
	binary.LittleEndian.PutUint64(next[slot:], uint64(off)|uint64(n)<<32)
	return next
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	return 0, false
}

// inlineDecimal is d's unscaled value at field i's scale, when d has
// exactly that scale and at most 18 digits.
func (l *Layout) inlineDecimal(i int, d decimal.Decimal) (int64, bool) {
	if l.kinds[i] != kindDecimal || d.Exponent() != -l.scales[i] || d.NumDigits() > 18 {
		return 0, false
	}
	return d.CoefficientInt64(), true
}

// appendDecimal appends d exactly: a sign byte, the int32 exponent and the
// coefficient's magnitude.
func appendDecimal(dst []byte, d decimal.Decimal) []byte {
	c := d.Coefficient()
	sign := byte(0)
	if c.Sign() < 0 {
		sign = 1
	}
	dst = binary.LittleEndian.AppendUint32(append(dst, sign), uint32(d.Exponent()))
	return append(dst, c.Bytes()...)
}

// inlineTime is t as Unix nanoseconds, when that fits an int64.
func inlineTime(t time.Time) (int64, bool) {
	const maxSec = math.MaxInt64 / 1_000_000_000
	sec := t.Unix()
	if sec <= -maxSec || sec >= maxSec {
		return 0, false
	}
	return t.UnixNano(), true
}
