package format

import (
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

// Text writes a value of type t as a SQL result shows it (Flink's SQL
// client, CAST to STRING): a DECIMAL(p, s) with exactly s fractional
// digits ("80.40", "7.00"), a DATE as yyyy-MM-dd, a TIMESTAMP(p) with at
// least p fractional digits ("2024-03-05 10:11:12.500" for p = 3), a
// TIMESTAMP_LTZ as its UTC wall clock, a FLOAT with a float's digits
// (JavaFloat). Other values as FormatScalar.
func Text(v any, t types.Type) string {
	switch x := v.(type) {
	case float64:
		if t.Kind == types.Float {
			return JavaFloat(x)
		}
	case decimal.Decimal:
		if t.Kind == types.Decimal {
			return x.StringFixed(int32(t.Scale))
		}
	case time.Time:
		switch t.Kind {
		case types.Date:
			return types.FormatDate(x)
		case types.Timestamp, types.TimestampLTZ:
			return types.FormatTimestamp(x.UTC(), t.Precision)
		case types.Time:
			return types.FormatTime(x.UTC(), t.Precision)
		}
	}
	return FormatScalar(v)
}

// formatTime writes a DATE, TIME, TIMESTAMP or TIMESTAMP_LTZ as Flink's
// csv and json formats do: ISO_LOCAL_DATE; a TIME as "HH:mm:ss", whole
// seconds (Flink writes LocalTime.ofSecondOfDay(millis / 1000)); and
// "yyyy-MM-dd HH:mm:ss" with the fewest fractional digits that keep the
// value (TimeFormats' SQL_TIMESTAMP_FORMAT, fraction 0 to 9 digits),
// "2024-03-05 10:11:12.5". ok is false for a type that is not one of these.
func formatTime(x time.Time, t types.Type) (s string, ok bool) {
	switch t.Kind {
	case types.Date:
		return types.FormatDate(x), true
	case types.Time:
		return types.FormatTime(x.UTC(), 0), true
	case types.Timestamp, types.TimestampLTZ:
		return types.FormatTimestamp(x.UTC(), 0), true
	}
	return "", false
}

// formatNumber writes a DECIMAL as Flink's csv and json formats do: the
// value goes through Jackson's default node factory, which strips
// trailing zeros (80.40 becomes 80.4, 100.00 becomes 1E+2), and is written
// by BigDecimal.toString, or toPlainString when plain ("100").
func formatNumber(d decimal.Decimal, plain bool) string {
	if plain {
		return d.String() // plain notation, trailing zeros trimmed
	}
	coef, exp := stripZeros(d.Coefficient(), d.Exponent())
	return javaDecimalString(coef, -int(exp))
}

var bigTen = big.NewInt(10)

// stripZeros is BigDecimal.stripTrailingZeros; zero is 0 with scale 0
// (Jackson's DecimalNode.ZERO).
func stripZeros(coef *big.Int, exp int32) (*big.Int, int32) {
	if coef.Sign() == 0 {
		return coef, 0
	}
	q, m := new(big.Int), new(big.Int)
	for {
		q.QuoRem(coef, bigTen, m)
		if m.Sign() != 0 {
			return coef, exp
		}
		coef, q = q, coef
		exp++
	}
}

// javaDecimalString is Java's BigDecimal.toString for unscaled value coef
// and scale: plain when scale >= 0 and the adjusted exponent is at least
// -6, otherwise scientific ("1E+2", "2.7E-8").
func javaDecimalString(coef *big.Int, scale int) string {
	digits := new(big.Int).Abs(coef).String()
	sign := ""
	if coef.Sign() < 0 {
		sign = "-"
	}
	adjusted := len(digits) - 1 - scale
	switch {
	case scale == 0:
		return sign + digits
	case scale > 0 && adjusted >= -6:
		if pad := scale - len(digits) + 1; pad > 0 {
			digits = strings.Repeat("0", pad) + digits
		}
		cut := len(digits) - scale
		return sign + digits[:cut] + "." + digits[cut:]
	}
	s := sign + digits[:1]
	if len(digits) > 1 {
		s += "." + digits[1:]
	}
	e := strconv.Itoa(adjusted)
	if adjusted >= 0 {
		e = "+" + e
	}
	return s + "E" + e
}
