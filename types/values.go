package types

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// MaxDecimalPrecision is the largest DECIMAL precision, as in Flink.
const MaxDecimalPrecision = 38

// pow10 holds 10^0 … 10^(MaxDecimalPrecision+1).
var pow10 = func() []decimal.Decimal {
	out := make([]decimal.Decimal, MaxDecimalPrecision+2)
	for i := range out {
		out[i] = decimal.New(1, int32(i))
	}
	return out
}()

// FitDecimal brings d to DECIMAL(p, s) as Flink's DecimalData.fromBigDecimal
// does: rounded HALF_UP to scale s (the result has exactly s fractional
// digits), and ok false when the rounded value needs more than p digits,
// where Flink gives NULL. Every DECIMAL value in a row has been through it:
// sources (formats, generators) call it on what they read, arithmetic and
// CAST on what they compute.
func FitDecimal(d decimal.Decimal, p, s int) (r decimal.Decimal, ok bool) {
	r = d.Round(int32(s))
	if p-s >= 0 && p-s < len(pow10) && r.Abs().Cmp(pow10[p-s]) >= 0 {
		return decimal.Decimal{}, false
	}
	return r, true
}

// IntRange is the range of an integer kind: TINYINT, SMALLINT, INT, and
// BIGINT's for any other kind.
func IntRange(k Kind) (lo, hi int64) {
	switch k {
	case TinyInt:
		return math.MinInt8, math.MaxInt8
	case SmallInt:
		return math.MinInt16, math.MaxInt16
	case Int:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// FormatDate prints a DATE as yyyy-MM-dd (Flink's CAST to STRING, and
// java.time.LocalDate's toString for years 0 to 9999).
func FormatDate(t time.Time) string {
	y, m, d := t.Date()
	return fmt.Sprintf("%s-%02d-%02d", yearString(y), int(m), d)
}

func yearString(y int) string {
	if y < 0 {
		return fmt.Sprintf("-%04d", -y)
	}
	return fmt.Sprintf("%04d", y)
}

// FormatTimestamp prints t's wall clock as yyyy-MM-dd HH:mm:ss followed by
// its nanoseconds with trailing zeros trimmed, but never below precision
// digits, as Flink's TimestampStringUtils (CAST of a TIMESTAMP(p) to
// STRING, the SQL client): TIMESTAMP(3) 10:11:12.5 is "10:11:12.500",
// TIMESTAMP(0) 10:11:12 is "10:11:12". Precision 0 gives the shortest
// form, as Flink's formats write timestamps ("10:11:12.5").
func FormatTimestamp(t time.Time, precision int) string {
	s := FormatDate(t) + fmt.Sprintf(" %02d:%02d:%02d", t.Hour(), t.Minute(), t.Second())
	frac := fmt.Sprintf("%09d", t.Nanosecond())
	for len(frac) > precision && strings.HasSuffix(frac, "0") {
		frac = frac[:len(frac)-1]
	}
	if frac != "" {
		s += "." + frac
	}
	return s
}

// MaxTimePrecision is the largest TIME precision whose digits Flink's
// runtime keeps: it holds TIME as milliseconds of the day, so TIME(p)
// with p > 3 accepts, and drops, the digits beyond the third.
const MaxTimePrecision = 3

// TimeOfDay is the TIME value of a wall clock: its hour, minute, second and
// millisecond on 1970-01-01 UTC (sub-millisecond digits dropped).
func TimeOfDay(t time.Time) time.Time {
	ms := t.Nanosecond() / 1e6 * 1e6
	return time.Date(1970, 1, 1, t.Hour(), t.Minute(), t.Second(), ms, time.UTC)
}

// FormatTime prints a TIME(p) as HH:mm:ss followed by exactly p
// fractional digits (zeros past the milliseconds), as Flink's CAST of a
// TIME(p) to STRING and its SQL client: TIME(0) 10:11:12 is "10:11:12",
// TIME(3) 10:11:12.5 is "10:11:12.500".
func FormatTime(t time.Time, precision int) string {
	s := fmt.Sprintf("%02d:%02d:%02d", t.Hour(), t.Minute(), t.Second())
	if precision > 0 {
		frac := fmt.Sprintf("%03d", t.Nanosecond()/1e6) + strings.Repeat("0", max(precision-3, 0))
		s += "." + frac[:precision]
	}
	return s
}
