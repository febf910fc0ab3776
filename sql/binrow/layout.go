package binrow

import (
	"errors"
	"fmt"

	"github.com/weirstream/weir/types"
)

// ErrCorrupt is returned for bytes that are not a row of the layout.
var ErrCorrupt = errors.New("binrow: corrupt row")

// ErrValue is returned for a value whose Go type does not fit its field's
// SQL type (see package types).
var ErrValue = errors.New("binrow: value does not fit its field's type")

// slotKind is how a field is stored.
type slotKind uint8

const (
	kindBool slotKind = iota
	kindInt
	kindFloat
	kindDecimal    // DECIMAL(p ≤ 18): inline at the scale, else tail
	kindBigDecimal // DECIMAL(p > 18): always tail
	kindString
	kindBytes
	kindTime
	kindNull // the type of an untyped NULL: always NULL
)

// Layout is the shape of rows of some field types. It is immutable and
// may be shared.
type Layout struct {
	types     []types.Type
	kinds     []slotKind
	scales    []int32
	bitmapLen int // bytes of one bitmap
	header    int // bytes before the tail
	block     *valueBlock
}

// Supports reports whether rows of ts have a Layout.
func Supports(ts []types.Type) bool {
	for _, t := range ts {
		if _, ok := kindOf(t); !ok {
			return false
		}
	}
	return true
}

func kindOf(t types.Type) (slotKind, bool) {
	switch t.Kind {
	case types.Boolean:
		return kindBool, true
	case types.TinyInt, types.SmallInt, types.Int, types.BigInt:
		return kindInt, true
	case types.Float, types.Double:
		return kindFloat, true
	case types.Decimal:
		if t.Precision <= 18 {
			return kindDecimal, true
		}
		return kindBigDecimal, true
	case types.Char, types.Varchar, types.String:
		return kindString, true
	case types.Bytes:
		return kindBytes, true
	case types.Date, types.Time, types.Timestamp, types.TimestampLTZ:
		return kindTime, true
	case types.Null:
		return kindNull, true
	}
	return 0, false
}

// NewLayout returns the layout of rows of ts; an error names the first
// type it cannot hold (ARRAY, MAP, ROW).
func NewLayout(ts []types.Type) (*Layout, error) {
	l := &Layout{types: append([]types.Type(nil), ts...), kinds: make([]slotKind, len(ts)), scales: make([]int32, len(ts))}
	for i, t := range ts {
		k, ok := kindOf(t)
		if !ok {
			return nil, fmt.Errorf("binrow: field %d is %s, which binary rows do not hold yet", i, t.Base())
		}
		l.kinds[i], l.scales[i] = k, int32(t.Scale)
	}
	l.bitmapLen = (len(ts) + 7) / 8
	l.header = 2*l.bitmapLen + 8*len(ts)
	l.block = newValueBlock(l.kinds)
	return l, nil
}

// Arity is the number of fields.
func (l *Layout) Arity() int { return len(l.kinds) }

// Type is field i's type.
func (l *Layout) Type(i int) types.Type { return l.types[i] }
