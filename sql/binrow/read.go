package binrow

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"math/big"
	"time"
	"unsafe"

	"github.com/shopspring/decimal"
)

// The accessors below read field i of a row of l that Validate accepted
// (or that l built). They do not check i's type: Int64 of a STRING field
// reads its slot's bits.

// IsNull reports whether field i is NULL.
func (l *Layout) IsNull(r Row, i int) bool { return r[i/8]&(1<<(i%8)) != 0 }

// InTail reports whether field i's value lies in the tail (variable-length
// types, and the fallbacks of the package doc).
func (l *Layout) InTail(r Row, i int) bool { return r[l.bitmapLen+i/8]&(1<<(i%8)) != 0 }

func (l *Layout) slot(r Row, i int) uint64 {
	return binary.LittleEndian.Uint64(r[2*l.bitmapLen+8*i:])
}

// Int64 is an integer field, or an inline DECIMAL's unscaled value.
func (l *Layout) Int64(r Row, i int) int64 { return int64(l.slot(r, i)) }

// Float64 is a FLOAT or DOUBLE field.
func (l *Layout) Float64(r Row, i int) float64 { return math.Float64frombits(l.slot(r, i)) }

// Bool is a BOOLEAN field.
func (l *Layout) Bool(r Row, i int) bool { return l.slot(r, i) != 0 }

// UnixNano is an inline time field (InTail false) as Unix nanoseconds.
func (l *Layout) UnixNano(r Row, i int) int64 { return int64(l.slot(r, i)) }

// Bytes is a field's tail bytes (a string's, bytes', or a fallback's),
// sharing r's memory: not to be modified.
func (l *Layout) Bytes(r Row, i int) []byte {
	s := l.slot(r, i)
	off, n := uint32(s), uint32(s>>32)
	return r[off : off+n : off+n]
}

// String is a string field, sharing r's memory (no copy): valid as long
// as r is, which is why rows are never modified.
func (l *Layout) String(r Row, i int) string {
	b := l.Bytes(r, i)
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Time is a time field, in UTC.
func (l *Layout) Time(r Row, i int) time.Time {
	if !l.InTail(r, i) {
		return time.Unix(0, l.UnixNano(r, i)).UTC()
	}
	b := l.Bytes(r, i)
	return time.Unix(int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint32(b[8:]))).UTC()
}

// Decimal is a DECIMAL field, with the scale it was built with.
func (l *Layout) Decimal(r Row, i int) decimal.Decimal {
	if !l.InTail(r, i) {
		return decimal.New(l.Int64(r, i), -l.scales[i])
	}
	b := l.Bytes(r, i)
	c := new(big.Int).SetBytes(b[5:])
	if b[0] == 1 {
		c.Neg(c)
	}
	return decimal.NewFromBigInt(c, int32(binary.LittleEndian.Uint32(b[1:])))
}

// value is Value with a string taken from tail, a copy of r's tail.
func (l *Layout) value(r Row, i int, tail string) any {
	if l.IsNull(r, i) {
		return nil
	}
	switch l.kinds[i] {
	case kindBool:
		return l.Bool(r, i)
	case kindInt:
		return l.Int64(r, i)
	case kindFloat:
		return l.Float64(r, i)
	case kindDecimal, kindBigDecimal:
		return l.Decimal(r, i)
	case kindString:
		return l.tailString(r, i, tail)
	case kindBytes:
		return bytes.Clone(l.Bytes(r, i))
	case kindTime:
		return l.Time(r, i)
	}
	return nil
}

// tailString is string field i, taken from tail (r's tail).
func (l *Layout) tailString(r Row, i int, tail string) string {
	s := l.slot(r, i)
	off := int(uint32(s)) - l.header
	return tail[off : off+int(uint32(s>>32))]
}

// Value is field i as the Go value package types gives its type (nil for
// NULL); a string or []byte is a copy.
func (l *Layout) Value(r Row, i int) any {
	return l.value(r, i, string(r[l.header:]))
}

// AppendFields appends r's fields to dst, as Value gives them. The row's
// strings share one copy of its tail: one allocation for all of them.
func (l *Layout) AppendFields(dst []any, r Row) []any {
	var tail string
	for i, k := range l.kinds {
		if k == kindString && !l.IsNull(r, i) {
			tail = string(r[l.header:])
			break
		}
	}
	for i := range l.kinds {
		dst = append(dst, l.value(r, i, tail))
	}
	return dst
}

// Fields is r's fields in a new slice.
func (l *Layout) Fields(r Row) []any { return l.AppendFields(make([]any, 0, len(l.kinds)), r) }

// Validate checks that r is a row of l: its header is whole, no NULL or
// tail bit is set beyond the fields, every field in the tail lies inside
// r and has the size its type needs. Rows read from state are validated before use, so the accessors need not
// check.
func (l *Layout) Validate(r Row) error {
	if len(r) < l.header {
		return fmt.Errorf("%w: %d bytes, want at least %d for %d fields", ErrCorrupt, len(r), l.header, len(l.kinds))
	}
	if n := len(l.kinds); n%8 != 0 {
		extra := byte(0xff) << (n % 8)
		if r[l.bitmapLen-1]&extra != 0 || r[2*l.bitmapLen-1]&extra != 0 {
			return fmt.Errorf("%w: null or tail bit set beyond field %d", ErrCorrupt, n-1)
		}
	}
	for i, k := range l.kinds {
		if err := l.validateField(r, i, k); err != nil {
			return err
		}
	}
	return nil
}

func (l *Layout) validateField(r Row, i int, k slotKind) error {
	tail, null := l.InTail(r, i), l.IsNull(r, i)
	switch {
	case null && (tail || l.slot(r, i) != 0):
		return fmt.Errorf("%w: NULL field %d has a value", ErrCorrupt, i)
	case null:
		return nil
	case k == kindNull:
		return fmt.Errorf("%w: field %d of type NULL is not NULL", ErrCorrupt, i)
	case !tail && (k == kindString || k == kindBytes || k == kindBigDecimal):
		return fmt.Errorf("%w: field %d of %s is not in the tail", ErrCorrupt, i, l.types[i].Base())
	case !tail:
		return nil
	case k == kindBool || k == kindInt || k == kindFloat:
		return fmt.Errorf("%w: field %d of %s is in the tail", ErrCorrupt, i, l.types[i].Base())
	}
	s := l.slot(r, i)
	off, n := uint64(uint32(s)), uint64(s>>32)
	if off < uint64(l.header) || off+n > uint64(len(r)) {
		return fmt.Errorf("%w: field %d at bytes %d–%d of a row of %d", ErrCorrupt, i, off, off+n, len(r))
	}
	switch {
	case k == kindTime && n != 12:
		return fmt.Errorf("%w: time field %d of %d bytes", ErrCorrupt, i, n)
	case k == kindTime && binary.LittleEndian.Uint32(r[off+8:]) >= 1e9:
		return fmt.Errorf("%w: time field %d has nanoseconds out of range", ErrCorrupt, i)
	case (k == kindDecimal || k == kindBigDecimal) && (n < 5 || r[off] > 1):
		return fmt.Errorf("%w: decimal field %d malformed", ErrCorrupt, i)
	}
	return nil
}

// Equal reports whether a and b are the same row (see the package doc on
// floating point).
func Equal(a, b Row) bool { return bytes.Equal(a, b) }

// Hash hashes r's bytes with seed: rows Equal hash alike.
func Hash(seed maphash.Seed, r Row) uint64 { return maphash.Bytes(seed, r) }
