package format

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

// ErrBadValue marks a message that does not parse: not valid json or csv,
// or a value that is not of its column's type or does not fit it.
var ErrBadValue = errors.New("format: bad value")

// Error is a message that does not parse. Column names the column (a
// nested one as "address.city" or "tags[2]"); it is empty when the
// message as a whole is malformed. The connector adds where the message
// came from (topic, partition and offset; file and line).
type Error struct {
	Format string // json, csv, raw, debezium-json, …
	Column string
	Type   string // the column's SQL type, "" with no column
	Err    error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("%s: %v", e.Format, e.Err)
	}
	noun := "column"
	if strings.HasSuffix(e.Format, "json") {
		noun = "field"
	}
	return fmt.Sprintf("%s: %s %q (%s): %v", e.Format, noun, e.Column, e.Type, e.Err)
}

// Unwrap returns ErrBadValue and the cause.
func (e *Error) Unwrap() []error { return []error{ErrBadValue, e.Err} }

// ParseScalar reads a value of type t from its whole text form (a CSV
// field, a JSON string, a raw message) as Flink's csv and json formats
// do: integers by Java's Byte/Short/Integer/Long.parseXxx of the trimmed
// text (decimal digits, an optional sign, range-checked: "1.9", "0x10",
// "12abc", "1e3" and 300 for a TINYINT are errors), FLOAT and DOUBLE by
// Float/Double.parseFloat (exponents, NaN and Infinity accepted; a finite
// number that overflows is an error, where Java would give Infinity),
// DECIMAL as BigDecimal reads it. BOOLEAN must be true or false (Flink's
// Boolean.parseBoolean reads anything else as false; Weir refuses it).
// BYTES are the text's bytes: the csv and json formats decode base64
// themselves.
func ParseScalar(s string, t types.Type) (any, error) {
	switch {
	case t.IsInteger():
		return parseInteger(s, t.Kind)
	case t.Kind == types.Float || t.Kind == types.Double:
		return parseFloating(s, t.Kind)
	case t.Kind == types.Decimal:
		return parseDecimal(s, t)
	case t.Kind == types.Boolean:
		switch strings.ToLower(javaTrim(s)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not a boolean (want true or false)", s)
	case t.Kind == types.Timestamp || t.Kind == types.TimestampLTZ:
		return ParseTimestamp(s)
	case t.Kind == types.Time:
		return parseTime(s, t.Precision)
	case t.Kind == types.Date:
		d, err := time.Parse("2006-01-02", s)
		if err != nil {
			return nil, fmt.Errorf("%q is not a date yyyy-MM-dd", s)
		}
		return d, nil
	case t.Kind == types.Bytes:
		return []byte(s), nil
	}
	return s, nil
}

// javaTrim is Java's String.trim: it drops every character up to ' ' at
// both ends (Flink's converters trim a value before parsing a number).
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// parseInteger is Java's Byte.parseByte, Short.parseShort,
// Integer.parseInt or Long.parseLong of the trimmed text.
func parseInteger(s string, k types.Kind) (int64, error) {
	v, err := strconv.ParseInt(javaTrim(s), 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, outOfRange(s, k)
	case err != nil:
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	if lo, hi := types.IntRange(k); v < lo || v > hi {
		return 0, outOfRange(s, k)
	}
	return v, nil
}

func outOfRange(s string, k types.Kind) error {
	lo, hi := types.IntRange(k)
	return fmt.Errorf("%s is out of range for %s (%d to %d)", s, k, lo, hi)
}

// javaFloatSyntax is the decimal syntax of Java's Double.parseDouble (its
// hexadecimal form left out): NaN, Infinity, digits with an optional
// fraction and exponent, and an optional f/d suffix.
var javaFloatSyntax = regexp.MustCompile(`^[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[fFdD]?)$`)

// parseFloating is Java's Float.parseFloat or Double.parseDouble of the
// trimmed text, except that a finite number too large for the type is an
// error, not Infinity.
func parseFloating(s string, k types.Kind) (float64, error) {
	text := javaTrim(s)
	if !javaFloatSyntax.MatchString(text) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	body := strings.TrimRight(text, "fFdD")
	if strings.TrimLeft(body, "+-") == "NaN" {
		return math.NaN(), nil
	}
	bits := 64
	if k == types.Float {
		bits = 32
	}
	v, err := strconv.ParseFloat(body, bits)
	if err != nil {
		return 0, fmt.Errorf("%s is out of range for %s", s, k)
	}
	return v, nil
}

// parseDecimal reads a DECIMAL(p, s) as Flink's formats do (new
// BigDecimal(text), then DecimalData.fromBigDecimal): rounded HALF_UP to
// s, NULL when it does not fit p (not an error).
func parseDecimal(s string, t types.Type) (any, error) {
	d, mag, err := readDecimal(javaTrim(s))
	if err != nil {
		return nil, err
	}
	return fitDecimal(d, mag, t), nil
}

// fitDecimal is a DECIMAL(p, s) of d, which has mag digits before its
// point (readDecimal): rounded HALF_UP to s, NULL when it does not fit p.
func fitDecimal(d decimal.Decimal, mag int64, t types.Type) any {
	switch {
	case mag > int64(t.Precision-t.Scale):
		return nil
	case mag < -int64(t.Scale)-1:
		d = decimal.Zero
	}
	if d, ok := types.FitDecimal(d, t.Precision, t.Scale); ok {
		return d
	}
	return nil
}

// readDecimal reads s as Java's new BigDecimal does: digits with an
// optional sign, fraction and exponent. mag is the number of digits
// before the point (|d| < 10^mag; very negative for zero). When mag lies
// far outside any column's range, d is only its sign: the caller decides
// from mag, so an exponent such as 1e999999999 never builds a number
// with that many digits.
func readDecimal(s string) (d decimal.Decimal, mag int64, err error) {
	mant, exp, hasExp := strings.Cut(strings.ReplaceAll(s, "E", "e"), "e")
	var e int64
	if hasExp {
		if e, err = strconv.ParseInt(exp, 10, 32); err != nil {
			return d, 0, fmt.Errorf("%q is not a decimal", s)
		}
	}
	if strings.ContainsAny(mant, "eE") || mant == "" {
		return d, 0, fmt.Errorf("%q is not a decimal", s)
	}
	m, err := decimal.NewFromString(mant)
	if err != nil {
		return d, 0, fmt.Errorf("%q is not a decimal", s)
	}
	if m.IsZero() {
		return decimal.Zero, math.MinInt64, nil
	}
	mag = int64(len(new(big.Int).Abs(m.Coefficient()).String())) + int64(m.Exponent()) + e
	if mag > 1000 || mag < -1000 {
		return decimal.NewFromInt(int64(m.Sign())), mag, nil
	}
	return m.Shift(int32(e)), mag, nil
}

// jsonInteger reads a JSON number into an integer column as Flink's json
// format does: TINYINT and SMALLINT by Byte.parseByte/Short.parseShort of
// the number's text, so only a whole number in range; INT and BIGINT by
// Jackson's intValue/longValue when the number lies in the type's range
// (canConvertToInt/Long), so 1e3 is 1000 and 1.9 is 1 (the fraction
// truncated, as in Flink), and by Integer.parseInt otherwise, which fails.
func jsonInteger(num string, k types.Kind) (int64, error) {
	v, err := parseInteger(num, k)
	if err == nil || k == types.TinyInt || k == types.SmallInt || !strings.ContainsAny(num, ".eE") {
		return v, err
	}
	d, mag, err := readDecimal(num)
	switch {
	case err != nil:
		return 0, err
	case mag <= 0:
		return 0, nil // |d| < 1
	case mag > 20:
		return 0, outOfRange(num, k)
	}
	lo, hi := types.IntRange(k)
	if d.LessThan(decimal.NewFromInt(lo)) || d.GreaterThan(decimal.NewFromInt(hi)) {
		return 0, outOfRange(num, k)
	}
	return d.Truncate(0).IntPart(), nil
}

// timestampSyntax is the shape every accepted timestamp has: two-digit
// fields, at most nine fractional digits (Go's time.Parse alone would take
// a one-digit hour and drop a tenth fractional digit).
var timestampSyntax = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?$`)

// ParseTimestamp reads a SQL timestamp ("2026-11-30 08:00:00.123"), also
// accepting ISO 'T' and RFC 3339 forms and the json format's
// TIMESTAMP_LTZ form ("2026-11-30 08:00:00.123Z"), as a UTC time.
func ParseTimestamp(s string) (time.Time, error) {
	if timestampSyntax.MatchString(s) {
		for _, l := range timestampLayouts {
			if t, err := time.Parse(l, s); err == nil {
				return t.UTC(), nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a timestamp of the form yyyy-MM-dd HH:mm:ss[.SSS]", s)
}

// parseTime reads a TIME as Flink's formats write it, HH:mm:ss with an
// optional fraction of up to 9 digits, kept to min(p, 3) digits (Flink's
// runtime holds milliseconds).
func parseTime(s string, p int) (any, error) {
	x, err := time.Parse("15:04:05.999999999", strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("%q is not a time HH:mm:ss[.SSS]", s)
	}
	x = types.TimeOfDay(x)
	unit := time.Duration(1)
	for i := min(p, types.MaxTimePrecision); i < 9; i++ {
		unit *= 10
	}
	return x.Truncate(unit), nil
}
