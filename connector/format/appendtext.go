package format

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

// The writers below append a value's text to a buffer, as the string
// functions they stand for (formatNumber, formatTime, json.Marshal)
// write it, without building the strings; values outside their plain
// range go through those functions.

// appendNumber appends formatNumber(d, plain).
func appendNumber(buf []byte, d decimal.Decimal, plain bool) []byte {
	if d.NumDigits() > 18 {
		return append(buf, formatNumber(d, plain)...)
	}
	coef, exp := d.CoefficientInt64(), d.Exponent()
	if coef == 0 {
		return append(buf, '0')
	}
	for coef%10 == 0 {
		coef /= 10
		exp++
	}
	if coef < 0 {
		buf = append(buf, '-')
		coef = -coef
	}
	var tmp [20]byte
	digits := strconv.AppendInt(tmp[:0], coef, 10)
	if plain {
		return appendPlain(buf, digits, int(exp))
	}
	return appendJavaDecimal(buf, digits, -int(exp))
}

// appendPlain appends digits × 10^exp without an exponent (decimal's
// String of a number without trailing zeros).
func appendPlain(buf, digits []byte, exp int) []byte {
	if exp >= 0 {
		buf = append(buf, digits...)
		for range exp {
			buf = append(buf, '0')
		}
		return buf
	}
	return appendPoint(buf, digits, -exp)
}

// appendPoint appends digits with a point before the last scale of
// them, zeros added in front as needed ("0.05").
func appendPoint(buf, digits []byte, scale int) []byte {
	if len(digits) <= scale {
		buf = append(buf, '0', '.')
		for range scale - len(digits) {
			buf = append(buf, '0')
		}
		return append(buf, digits...)
	}
	cut := len(digits) - scale
	buf = append(buf, digits[:cut]...)
	buf = append(buf, '.')
	return append(buf, digits[cut:]...)
}

// appendJavaDecimal is javaDecimalString for the unsigned digits of the
// unscaled value (the sign already written).
func appendJavaDecimal(buf, digits []byte, scale int) []byte {
	adjusted := len(digits) - 1 - scale
	switch {
	case scale == 0:
		return append(buf, digits...)
	case scale > 0 && adjusted >= -6:
		return appendPoint(buf, digits, scale)
	}
	buf = append(buf, digits[0])
	if len(digits) > 1 {
		buf = append(buf, '.')
		buf = append(buf, digits[1:]...)
	}
	buf = append(buf, 'E')
	if adjusted >= 0 {
		buf = append(buf, '+')
	}
	return strconv.AppendInt(buf, int64(adjusted), 10)
}

// appendTimeText appends formatTime(x, t); ok is false as formatTime's.
func appendTimeText(buf []byte, x time.Time, t types.Type) ([]byte, bool) {
	if t.Kind != types.Timestamp && t.Kind != types.TimestampLTZ {
		s, ok := formatTime(x, t)
		return append(buf, s...), ok
	}
	x = x.UTC()
	y, mo, d := x.Date()
	if y < 0 || y > 9999 {
		return append(buf, types.FormatTimestamp(x, 0)...), true
	}
	h, mi, s := x.Clock()
	buf = append4(buf, y)
	buf = append(buf, '-')
	buf = append2(buf, int(mo))
	buf = append(buf, '-')
	buf = append2(buf, d)
	buf = append(buf, ' ')
	buf = append2(buf, h)
	buf = append(buf, ':')
	buf = append2(buf, mi)
	buf = append(buf, ':')
	buf = append2(buf, s)
	return appendNanos(buf, x.Nanosecond()), true
}

// appendNanos appends ".fff…", the fewest digits that keep ns; nothing
// for 0.
func appendNanos(buf []byte, ns int) []byte {
	if ns == 0 {
		return buf
	}
	var frac [9]byte
	for i := 8; i >= 0; i-- {
		frac[i] = byte('0' + ns%10)
		ns /= 10
	}
	n := 9
	for frac[n-1] == '0' {
		n--
	}
	buf = append(buf, '.')
	return append(buf, frac[:n]...)
}

func append2(buf []byte, v int) []byte { return append(buf, byte('0'+v/10), byte('0'+v%10)) }

func append4(buf []byte, v int) []byte { return append2(append2(buf, v/100), v%100) }

// appendJSONString appends s as json.Marshal writes it.
func appendJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}
