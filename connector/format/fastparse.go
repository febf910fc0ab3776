package format

import (
	"math"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

// The fast readers below take the common, plain text of a value (a JSON
// string's or number's bytes, a CSV field) and read it without
// intermediate strings or regular expressions. ok false means "not this
// plain form": the caller then reads the value with ParseScalar (and its
// JSON counterparts), which also writes the errors. Each gives the value
// ParseScalar gives for the texts it takes.

// textBytes is the bytes of a value, in a string or a slice.
type textBytes interface{ ~string | ~[]byte }

// fastScalar reads the text of a JSON string or CSV field as type t.
func fastScalar[T textBytes](b T, t types.Type) (any, bool) {
	switch {
	case t.IsString():
		return string(b), true
	case t.IsInteger():
		return fastInteger(b, t.Kind)
	case t.Kind == types.Decimal:
		return fastDecimal(b, t)
	case t.Kind == types.Timestamp || t.Kind == types.TimestampLTZ:
		return fastTimestamp(b)
	case t.Kind == types.Boolean:
		switch string(b) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return nil, false
}

// fastNumber reads a JSON number's text (its syntax checked) as type t,
// as scalarFromJSON reads a json.Number.
func fastNumber(b []byte, t types.Type) (any, bool) {
	switch {
	case t.IsInteger():
		return fastInteger(b, t.Kind)
	case t.Kind == types.Decimal:
		return fastDecimal(b, t)
	case t.Kind == types.Double || t.Kind == types.Float:
		bits := 64
		if t.Kind == types.Float {
			bits = 32
		}
		// JSON's number syntax is part of Java's: parseFloating would
		// take the text as it is.
		v, err := strconv.ParseFloat(string(b), bits)
		return v, err == nil
	case t.IsString():
		return string(b), true
	}
	return nil, false
}

// fastInt reads -?[0-9]{1,18}, which always fits an int64.
func fastInt[T textBytes](b T) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	digits := b
	if neg {
		digits = b[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// fastInteger is parseInteger's plain case.
func fastInteger[T textBytes](b T, k types.Kind) (any, bool) {
	v, ok := fastInt(b)
	if !ok {
		return nil, false
	}
	lo, hi := types.IntRange(k)
	return v, v >= lo && v <= hi
}

// fastDecimal is parseDecimal's plain case: -?digits[.digits], at most
// 18 digits in all.
func fastDecimal[T textBytes](b T, t types.Type) (any, bool) {
	neg := len(b) > 0 && b[0] == '-'
	i := 0
	if neg {
		i = 1
	}
	var coef int64
	n, frac, point := 0, 0, false
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c >= '0' && c <= '9':
			coef = coef*10 + int64(c-'0')
			n++
			if point {
				frac++
			}
		case c == '.' && !point && n > 0:
			point = true
		default:
			return nil, false
		}
	}
	if n == 0 || n > 18 || point && frac == 0 {
		return nil, false
	}
	if coef == 0 {
		return fitDecimal(decimal.Zero, math.MinInt64, t), true
	}
	if neg {
		coef = -coef
	}
	return fitDecimal(decimal.New(coef, int32(-frac)), int64(numDigits(coef)-frac), t), true
}

// numDigits counts the decimal digits of v ≠ 0.
func numDigits(v int64) int {
	n := 0
	for ; v != 0; v /= 10 {
		n++
	}
	return n
}

// fastTimestamp is ParseTimestamp's common case: yyyy-MM-dd HH:mm:ss
// (or with 'T'), a fraction of 1 to 9 digits, and an optional 'Z'.
func fastTimestamp[T textBytes](b T) (any, bool) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || b[10] != ' ' && b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return nil, false
	}
	y, ok1 := digitsAt(b, 0, 4)
	mo, ok2 := digitsAt(b, 5, 2)
	d, ok3 := digitsAt(b, 8, 2)
	h, ok4 := digitsAt(b, 11, 2)
	mi, ok5 := digitsAt(b, 14, 2)
	s, ok6 := digitsAt(b, 17, 2)
	ns, i, ok7 := fraction(b, 19)
	if i < len(b) && b[i] == 'Z' {
		i++
	}
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || i != len(b) ||
		mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59 {
		return nil, false
	}
	ts := time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC)
	return ts, ts.Day() == d // not the 31st of a 30-day month
}

// digitsAt reads the n digits at b[at:].
func digitsAt[T textBytes](b T, at, n int) (int, bool) {
	v := 0
	for i := at; i < at+n; i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// fraction reads an optional .f{1,9} at b[at:] as nanoseconds; i is
// where it ends.
func fraction[T textBytes](b T, at int) (ns, i int, ok bool) {
	if at >= len(b) || b[at] != '.' {
		return 0, at, true
	}
	i = at + 1
	for ; i < len(b) && i-at <= 9 && b[i] >= '0' && b[i] <= '9'; i++ {
		ns = ns*10 + int(b[i]-'0')
	}
	n := i - at - 1
	if n == 0 {
		return 0, i, false
	}
	for ; n < 9; n++ {
		ns *= 10
	}
	return ns, i, true
}
