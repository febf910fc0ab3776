package expr

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/types"
)

// wrapInt truncates v to the width of an integer kind, as Java's
// narrowing conversions do: INT arithmetic overflows like Java's int.
func wrapInt(v int64, k types.Kind) int64 {
	switch k {
	case types.TinyInt:
		return int64(int8(v))
	case types.SmallInt:
		return int64(int16(v))
	case types.Int:
		return int64(int32(v))
	}
	return v
}

// floatToInt converts as Java's (long) or (int) cast: NaN is 0, values
// beyond the range saturate, narrower kinds then wrap.
func floatToInt(f float64, k types.Kind) int64 {
	if math.IsNaN(f) {
		return 0
	}
	if k == types.BigInt {
		switch {
		case f >= math.MaxInt64:
			return math.MaxInt64
		case f <= math.MinInt64:
			return math.MinInt64
		}
		return int64(f)
	}
	switch {
	case f >= math.MaxInt32:
		return wrapInt(math.MaxInt32, k)
	case f <= math.MinInt32:
		return wrapInt(math.MinInt32, k)
	}
	return wrapInt(int64(f), k)
}

// decimalToInt truncates toward zero and keeps the low 64 bits, as Java's
// BigDecimal.longValue, then narrows to k.
func decimalToInt(d decimal.Decimal, k types.Kind) int64 {
	b := d.Truncate(0).BigInt()
	if b.IsInt64() {
		return wrapInt(b.Int64(), k)
	}
	low := new(big.Int).And(b, new(big.Int).SetUint64(math.MaxUint64)).Uint64()
	return wrapInt(int64(low), k)
}

// toFloat converts a number to float64.
func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case decimal.Decimal:
		return x.InexactFloat64()
	case bool:
		if x {
			return 1
		}
	}
	return 0
}

// toDecimal converts an exact number to a decimal.
func toDecimal(v any) decimal.Decimal {
	switch x := v.(type) {
	case int64:
		return decimal.NewFromInt(x)
	case decimal.Decimal:
		return x
	case float64:
		return decimal.NewFromFloat(x)
	}
	return decimal.Zero
}

// compareValues orders two non-NULL values of one comparison domain:
// int64, float64, decimal, string, bool, time or bytes. ok is false for
// values that have no order (arrays, maps, rows, or mismatched types).
func compareValues(a, b any) (int, bool) {
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return cmp3(x < y, x > y), true
		}
	case float64:
		if y, ok := b.(float64); ok {
			return cmp3(x < y, x > y), true
		}
	case decimal.Decimal:
		if y, ok := b.(decimal.Decimal); ok {
			return x.Cmp(y), true
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), true
		}
	case bool:
		if y, ok := b.(bool); ok {
			return cmp3(!x && y, x && !y), true
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y), true
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y), true
		}
	}
	return 0, false
}

func cmp3(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}

// valuesEqual is SQL equality of two non-NULL values of one domain,
// structural for arrays, maps, rows and multisets (where NULL elements
// equal).
func valuesEqual(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !nullSafeEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[any]any:
		y, ok := b.(map[any]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, found := mapLookup(y, k)
			if !found || !nullSafeEqual(v, w) {
				return false
			}
		}
		return true
	case types.MultisetValue:
		y, ok := b.(types.MultisetValue)
		return ok && multisetsEqual(x, y)
	}
	c, ok := compareValues(a, b)
	return ok && c == 0
}

// multisetsEqual reports whether two bags hold the same elements the same
// number of times, whatever the order of their entries.
func multisetsEqual(x, y types.MultisetValue) bool {
	if len(x) != len(y) {
		return false
	}
	for _, e := range x {
		i := slices.IndexFunc(y, func(f types.MultisetEntry) bool { return nullSafeEqual(e.Elem, f.Elem) })
		if i < 0 || y[i].Count != e.Count {
			return false
		}
	}
	return true
}

func nullSafeEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return valuesEqual(a, b)
}

// mapLookup finds key k in m by SQL equality: directly for comparable Go
// values, by a scan for decimals (whose Go equality compares pointers) and
// other values that do not hash.
func mapLookup(m map[any]any, k any) (any, bool) {
	if hashable(k) {
		if v, ok := m[k]; ok {
			return v, true
		}
		if _, isDec := k.(decimal.Decimal); !isDec {
			if _, isTime := k.(time.Time); !isTime {
				return nil, false
			}
		}
	}
	for mk, v := range m {
		if nullSafeEqual(mk, k) {
			return v, true
		}
	}
	return nil, false
}

func hashable(k any) bool {
	switch k.(type) {
	case []any, map[any]any, []byte:
		return false
	}
	return true
}

// typeError is the error for a value whose Go type does not carry the
// SQL type it was declared with: a connector or a caller bug.
func typeError(v any, t types.Type) error {
	return fmt.Errorf("value %s (Go %T) does not carry type %s", showValue(v), v, typeName(t))
}
