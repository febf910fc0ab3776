package exec

import (
	"bytes"
	"cmp"
	"fmt"
	"time"

	"github.com/shopspring/decimal"
)

// widen turns the Go integer and float types a caller may hand in into
// the SQL layer's int64 and float64; other values pass unchanged.
func widen(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case float32:
		return float64(x)
	}
	return v
}

// add returns a+b for two numbers of one kind: int64 (wrapping on
// overflow, as Java's long in Flink), float64 or decimal.Decimal (exact).
// An int64 meeting a decimal or a float is widened to it.
func add(a, b any) (any, error) {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return x + y, nil
		case float64:
			return float64(x) + y, nil
		case decimal.Decimal:
			return decimal.NewFromInt(x).Add(y), nil
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return x + y, nil
		case int64:
			return x + float64(y), nil
		}
	case decimal.Decimal:
		switch y := b.(type) {
		case decimal.Decimal:
			return x.Add(y), nil
		case int64:
			return x.Add(decimal.NewFromInt(y)), nil
		}
	}
	return nil, fmt.Errorf("%w: cannot add %T and %T", ErrType, a, b)
}

// negate returns -v for a number.
func negate(v any) (any, error) {
	switch x := v.(type) {
	case int64:
		return -x, nil
	case float64:
		return -x, nil
	case decimal.Decimal:
		return x.Neg(), nil
	}
	return nil, fmt.Errorf("%w: cannot negate a %T", ErrType, v)
}

// compareValues orders two non-NULL values of one SQL type: numbers
// (int64, float64 and decimal, also mixed), strings, booleans (false
// first), times and byte strings. Values of unrelated types are ordered by
// their key encodings, so the order is total and deterministic.
func compareValues(a, b any) int {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, y)
		case float64:
			return cmp.Compare(float64(x), y)
		case decimal.Decimal:
			return decimal.NewFromInt(x).Cmp(y)
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return cmp.Compare(x, y)
		case int64:
			return cmp.Compare(x, float64(y))
		case decimal.Decimal:
			return decimal.NewFromFloat(x).Cmp(y)
		}
	case decimal.Decimal:
		switch y := b.(type) {
		case decimal.Decimal:
			return x.Cmp(y)
		case int64:
			return x.Cmp(decimal.NewFromInt(y))
		case float64:
			return x.Cmp(decimal.NewFromFloat(y))
		}
	case string:
		if y, ok := b.(string); ok {
			return cmp.Compare(x, y)
		}
	case bool:
		if y, ok := b.(bool); ok {
			return cmp.Compare(boolInt(x), boolInt(y))
		}
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y)
		}
	case []byte:
		if y, ok := b.([]byte); ok {
			return bytes.Compare(x, y)
		}
	}
	return bytes.Compare(appendValue(nil, a, true), appendValue(nil, b, true))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// timeMillis reads an event-time attribute: a time.Time (TIMESTAMP(3) or
// TIMESTAMP_LTZ(3)) or an int64 of milliseconds since the epoch.
func timeMillis(v any) (int64, error) {
	switch x := widen(v).(type) {
	case time.Time:
		return x.UnixMilli(), nil
	case int64:
		return x, nil
	case nil:
		return 0, fmt.Errorf("%w: the time attribute is NULL", ErrType)
	}
	return 0, fmt.Errorf("%w: a time attribute must be a time.Time or an int64 of milliseconds, not a %T", ErrType, v)
}

// millisTime is the TIMESTAMP(3) value of ms since the epoch, in UTC.
func millisTime(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
